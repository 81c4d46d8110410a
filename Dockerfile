# syntax=docker/dockerfile:1
# One image for the manager and the agent: `bundler manager ...`, `bundler agent ...`.
#
#   docker build -t registry.example/bundler:0.1.0 .
#
# Build stage: the wheel of this checkout, installed with its dependencies into a venv under
# /opt/bundler. The final stage copies only that venv onto the same slim base, so no compiler,
# pip cache or source tree ships, and the venv's interpreter link (/usr/local/bin/python3) holds.
ARG PYTHON_IMAGE=python:3.12-slim-bookworm

FROM ${PYTHON_IMAGE} AS build
ENV PIP_NO_CACHE_DIR=1 \
    PIP_DISABLE_PIP_VERSION_CHECK=1
WORKDIR /src
COPY pyproject.toml README.md LICENSE ./
COPY bundler ./bundler
RUN python -m pip wheel --no-deps --wheel-dir /wheels . \
 && python -m venv /opt/bundler \
 && /opt/bundler/bin/pip install /wheels/*.whl \
 # Byte-compile everything now: at run time the root filesystem is read-only.
 && /opt/bundler/bin/python -m compileall -q /opt/bundler/lib \
 && /opt/bundler/bin/pip uninstall -y pip

FROM ${PYTHON_IMAGE}
LABEL org.opencontainers.image.title="bundler" \
      org.opencontainers.image.description="Deploy Helm charts to fleets of Kubernetes clusters" \
      org.opencontainers.image.licenses="Apache-2.0"
COPY --from=build /opt/bundler /opt/bundler
# Nothing is written outside /tmp (an emptyDir in the charts): no bytecode, no home directory.
ENV PATH=/opt/bundler/bin:${PATH} \
    PYTHONDONTWRITEBYTECODE=1 \
    PYTHONUNBUFFERED=1 \
    HOME=/tmp \
    TMPDIR=/tmp
WORKDIR /tmp
# A numeric user, so Kubernetes can check runAsNonRoot without an /etc/passwd entry.
USER 65532:65532
EXPOSE 8080 9440
ENTRYPOINT ["bundler"]
CMD ["--help"]
