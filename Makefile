# Two commands matter on a fresh machine: `make demo` and `make test`. Both install what they need.
PYTHON ?= python3
VENV := .venv
BIN := $(VENV)/bin
STAMP := $(VENV)/.installed-stamp
SUDO := $(shell [ "$$(id -u)" = 0 ] || echo sudo)

.PHONY: demo dev test fuzz e2e e2e-tools lint crds charts bench registry kubectl clean

$(STAMP): pyproject.toml
	@test -x $(BIN)/python || $(PYTHON) -m venv $(VENV)
	$(BIN)/python -m pip install -q --upgrade pip
	$(BIN)/python -m pip install -q -e '.[test]'
	@touch $(STAMP)

# Debian's docker-registry: the real OCI registry the tests start on 127.0.0.1.
registry:
	@command -v docker-registry >/dev/null 2>&1 || { \
	  $(SUDO) apt-get update -qq && $(SUDO) apt-get install -y -qq docker-registry >/dev/null; }

# Debian's kubernetes-client: the real kubectl the tests drive `bundler dev` with.
kubectl:
	@command -v kubectl >/dev/null 2>&1 || { \
	  $(SUDO) apt-get update -qq && $(SUDO) apt-get install -y -qq kubernetes-client >/dev/null; }

lint: $(STAMP)
	$(BIN)/ruff check bundler tests
	$(BIN)/ruff format --check bundler tests
	$(BIN)/mypy
	$(BIN)/lint-imports

test: $(STAMP) registry kubectl lint
	$(BIN)/pytest -m "not e2e"

# The fuzzing harness of the input paths (tests/fuzz) for FUZZ_EXAMPLES examples per target
# instead of `make test`'s bounded, reproducible few; what it finds is replayed first next time
# (.hypothesis/), and kept for good by adding the input to tests/fuzz/corpus/.
FUZZ_EXAMPLES ?= 20000
fuzz: $(STAMP)
	BUNDLER_FUZZ_EXAMPLES=$(FUZZ_EXAMPLES) $(BIN)/pytest tests/fuzz -o timeout=0 $(FUZZ_ARGS)

# The real components (kube-apiserver, kube-controller-manager, kubectl, etcd, Flux's
# source-controller and helm-controller), built from their Go modules into a cache; see README
# "Real clusters". Needs Go; what is built already is skipped.
e2e-tools:
	@e2e/toolchain/build.sh

# bundler against the real components. Without Go the tests skip, saying how to build the tools,
# except in CI (CI=true), where a missing component fails them.
e2e: $(STAMP) registry kubectl
	@e2e/toolchain/build.sh || [ "$$CI" != true ]
	$(BIN)/pytest -m e2e $(E2E_ARGS)

crds: $(STAMP)
	$(BIN)/bundler crds --output-dir crds

# The charts' generated files: CRDs and RBAC rules, from the code (bundler.commands.chart_files).
charts: $(STAMP)
	$(BIN)/python -m bundler.commands.chart_files

demo: $(STAMP)
	$(BIN)/bundler sim -f examples/ --values capi-workloads/calico

# A playground for kubectl until Ctrl-C: see README "Two commands".
dev: $(STAMP)
	$(BIN)/bundler dev -f examples/podinfo

bench: $(STAMP)
	$(BIN)/python -m pip install -q -e '.[bench]'
	$(BIN)/python -m bundler.commands.bench $(BENCH_ARGS)
	$(BIN)/python -m bundler.sim.bench
	$(BIN)/python -m bundler.sim.bench_planning
	$(BIN)/python -m bundler.sim.bench_limits
	$(BIN)/python -m bundler.sim.bench_hostile
	$(BIN)/python -m bundler.sim.bench_agent
	$(BIN)/python -m bundler.manifests.bench

clean:
	rm -rf $(VENV) build *.egg-info
