# Developers and CI run the same targets: `make run`, `make test`.
PYTHON ?= python3
VENV   := .venv
BIN    := $(VENV)/bin
STAMP  := $(VENV)/.installed

HOOKLINE_HOST ?= 127.0.0.1
HOOKLINE_PORT ?= 8000

.PHONY: run test install system-deps lint typecheck check pytest screenshots fuzz bench clean clients lock

# Python packages at the versions in constraints.txt (the lock; `make lock` regenerates it).
# Quiet: pip's progress and notices are not what someone typing `make run` came to read.
PIP_INSTALL := $(BIN)/python -m pip install -q --disable-pip-version-check -c constraints.txt
# What serving needs (`make run`), and what the checks need on top (`make test` and the rest):
# one stamp each, so that `make run` never installs the test tools.
RUN_STAMP := $(VENV)/.installed-run

$(VENV)/bin/python:
	@echo "Creating $(VENV) ..."
	@$(PYTHON) -m venv $(VENV)
	@$(BIN)/python -m pip install -qq --disable-pip-version-check --upgrade pip

$(RUN_STAMP): pyproject.toml constraints.txt | $(VENV)/bin/python
	@echo "Installing hookline into $(VENV) (first run, or pyproject.toml changed) ..."
	@$(PIP_INSTALL) -q -e .
	@touch $(RUN_STAMP)

$(STAMP): pyproject.toml constraints.txt | $(VENV)/bin/python
	$(PIP_INSTALL) -e '.[test]'
	touch $(STAMP) $(RUN_STAMP)

install: $(STAMP)

# The TypeScript client's generator and compiler, as pinned in its package-lock.json.
NODE_DEPS := clients/typescript/node_modules/.package-lock.json
$(NODE_DEPS): clients/typescript/package-lock.json
	bash scripts/install-system-deps.sh
	cd clients/typescript && npm ci --no-audit --no-fund
	touch $(NODE_DEPS)

## Regenerate clients/ (openapi.json, the Python client, the TypeScript types) from the app.
clients: $(STAMP) $(NODE_DEPS)
	$(BIN)/python scripts/generate_clients.py

## Set up, migrate the default SQLite file, and serve on 127.0.0.1:8000.
run: $(RUN_STAMP)
	@$(BIN)/hookline migrate
	@echo ""
	@echo "  hookline is starting on http://$(HOOKLINE_HOST):$(HOOKLINE_PORT)"
	@echo "  Dashboard (sign up, get an API key): http://$(HOOKLINE_HOST):$(HOOKLINE_PORT)/dashboard"
	@echo "  Or from a shell: $(BIN)/hookline accounts create my-company"
	@echo "  API docs: http://$(HOOKLINE_HOST):$(HOOKLINE_PORT)/docs"
	@echo ""
	@exec $(BIN)/hookline serve --host $(HOOKLINE_HOST) --port $(HOOKLINE_PORT)

system-deps:
	bash scripts/install-system-deps.sh

lint: $(STAMP)
	$(BIN)/ruff check src tests bench scripts
	$(BIN)/ruff format --check src tests bench scripts
	$(BIN)/lint-imports

typecheck: $(STAMP)
	$(BIN)/mypy

# Two processes (pytest-xdist): much of the suite waits on servers, timeouts and subprocesses,
# and one pytest process keeps one core busy at most. A file's tests stay in one process, the
# files in the order tests/conftest.py sets (the slow ones first). Not --dist loadgroup: with
# pytest 9, xdist 3.8 cannot tag the tests' ids with their group, and it splits the groups.
PYTEST_PROCESSES ?= 2
# Bytecode, and pytest's rewritten test modules, cached in the venv even where the environment
# sets PYTHONDONTWRITEBYTECODE (an empty value turns it off): otherwise each test process
# compiles ~280 test and plugin modules again at start (collecting the suite: 14.5 s of CPU
# per process without the cache, 7.7 s with it), and nothing lands in the tree.
PYCACHE := $(CURDIR)/$(VENV)/pycache
pytest: $(STAMP) system-deps $(NODE_DEPS)
	PYTHONDONTWRITEBYTECODE= PYTHONPYCACHEPREFIX=$(PYCACHE) $(BIN)/pytest -n $(PYTEST_PROCESSES) --dist loadfile --no-loadscope-reorder

## Everything CI runs: lint, types, and the whole suite on SQLite and a real PostgreSQL.
test: lint typecheck pytest

## Regenerate docs/screenshots (the README's pictures, taken along a newcomer's first day); tests
## alone write theirs to a temp folder.
screenshots: $(STAMP) system-deps
	$(BIN)/pytest -q tests/dashboard/test_newcomer.py --screenshots-dir docs/screenshots

## A longer schemathesis run against a live server (EXAMPLES=n).
fuzz: $(STAMP)
	bash scripts/fuzz.sh $(or $(EXAMPLES),500)

## Benchmarks; writes docs/benchmarks.md.
bench: $(STAMP)
	bash scripts/install-system-deps.sh
	$(PIP_INSTALL) -e '.[bench]'
	$(BIN)/python -m bench

## Resolve pyproject.toml's ranges afresh (newest releases) into constraints.txt; then make test.
LOCK_VENV := $(CURDIR)/.lock-venv
lock:
	rm -rf $(LOCK_VENV)
	$(PYTHON) -m venv $(LOCK_VENV)
	$(LOCK_VENV)/bin/python -m pip install -q --upgrade pip
	$(LOCK_VENV)/bin/python -m pip install -q -e '.[test,bench]'
	{ sed -n '/^#/p' constraints.txt; $(LOCK_VENV)/bin/python -m pip freeze --exclude-editable; } > constraints.txt.new
	mv constraints.txt.new constraints.txt
	rm -rf $(LOCK_VENV)

clean:
	rm -rf $(VENV) .pytest_cache .mypy_cache .ruff_cache .hypothesis
