# Two commands for a fresh Debian/Ubuntu machine with Python 3.11:
#   make run    install the web app (requirements.txt: no torch) and start the arena on the demo at http://127.0.0.1:7860
#   make test   install everything (requirements-dev.txt: the torch stack and the test tools) and run every test
# and, while editing, `make check`: the linter (ruff) and the type checker (mypy), both configured in pyproject.toml,
# then the tests outside the browser, install and slow tiers (pytest.ini) on SQLite, about 95 s on 2 cores;
# `make check-postgresql` runs the quick tests that need a PostgreSQL server (about 35 s).
# All are idempotent: a second run installs nothing that is already there.

PYTHON ?= $(shell command -v python3.11 || command -v python3)
VENV ?= .venv
PY := $(VENV)/bin/python
SYSTEM_PACKAGES := $(shell cat packages.txt)
# the tests also run on a real PostgreSQL (tests/conftest.py starts a throwaway server: tools/postgres_server.py)
TEST_SYSTEM_PACKAGES := $(SYSTEM_PACKAGES) chromium postgresql nodejs
# The tests run on TEST_WORKERS processes (pytest-xdist; `make test TEST_WORKERS=0` runs them in this process). More
# workers than cores pays here because much of the suite waits on a browser, a server or a subprocess
# (docs/benchmarks.md has the measurements).
TEST_WORKERS ?= 3
PYTEST := $(PY) -m pytest -n $(TEST_WORKERS) --dist worksteal
export GRADIO_ANALYTICS_ENABLED := False
export PIP_DISABLE_PIP_VERSION_CHECK := 1

QUICK := not browser and not install and not slow

.PHONY: run test check check-postgresql demo system-deps test-system-deps clean-demo

# Debian/Ubuntu ship ensurepip, which venv needs, in a separate package (python3.11-venv for python3.11).
$(PY):
	@$(PYTHON) -c 'import ensurepip' 2>/dev/null || scripts/install-system-deps.sh \
	  "$$($(PYTHON) -c 'import sys; print("python%d.%d-venv" % sys.version_info[:2])')"
	$(PYTHON) -m venv $(VENV)

$(VENV)/.requirements: requirements.txt | $(PY)
	$(PY) -m pip install -q --upgrade pip
	$(PY) -m pip install -q -r requirements.txt
	touch $@

$(VENV)/.requirements-dev: requirements-dev.txt $(VENV)/.requirements
	$(PY) -m pip install -q -r requirements-dev.txt
	touch $@

# the JavaScript the browser tests load into the page (package.json: axe-core for the accessibility check)
# (npm: Debian's package, unless the machine's Node.js already brings its own)
node_modules/.installed: package.json package-lock.json
	@command -v npm >/dev/null || scripts/install-system-deps.sh npm
	npm ci --ignore-scripts --no-audit --no-fund --loglevel=error
	touch $@

system-deps:
	@scripts/install-system-deps.sh $(SYSTEM_PACKAGES)

test-system-deps:
	@scripts/install-system-deps.sh $(TEST_SYSTEM_PACKAGES)

run: system-deps $(VENV)/.requirements
	$(PY) -m arena serve

demo: system-deps $(VENV)/.requirements
	$(PY) -m arena demo

test: test-system-deps $(VENV)/.requirements-dev node_modules/.installed
	$(PYTEST)

check: system-deps $(VENV)/.requirements-dev
	$(VENV)/bin/ruff check .
	$(VENV)/bin/mypy
	$(PYTEST) -m "$(QUICK) and not postgresql"

check-postgresql: test-system-deps $(VENV)/.requirements-dev
	$(PYTEST) -m "$(QUICK) and postgresql"

clean-demo:
	rm -rf data/arena.db data/arena.db-wal data/arena.db-shm data/media
