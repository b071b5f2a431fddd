# The quick start: `make serve` and `make test` each set up what they need on a fresh clone.
VENV := .venv
PYTHON := $(VENV)/bin/python
STAMP := $(VENV)/.installed-stamp
# pytest-xdist workers: the suite waits on servers, PostgreSQL and subprocesses about half the time,
# so two workers per core of a 2-core machine keep both cores busy.
TEST_WORKERS ?= 4
# The browser tests drive Debian's Chromium (never a browser build of Playwright's own). `make test` installs it
# where it can (root with apt-get); elsewhere those tests skip with the reason, and under CI=true they fail.
CHROMIUM := /usr/bin/chromium

.PHONY: serve test lint contract bench chromium

$(STAMP): pyproject.toml
	test -x $(PYTHON) || python3 -m venv $(VENV)
	$(PYTHON) -m pip install --quiet --upgrade pip
	$(PYTHON) -m pip install --quiet -e '.[dev]'
	touch $(STAMP)

serve: $(STAMP)
	$(VENV)/bin/toolhost serve

chromium:
	@if [ -x $(CHROMIUM) ]; then :; \
	elif [ "$$(id -u)" = 0 ] && command -v apt-get >/dev/null; then \
		(echo "make: installing chromium with apt-get for the browser tests" && apt-get update -qq \
			&& DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends chromium >/dev/null) \
			|| echo "make: could not install chromium with apt-get; the browser tests will skip"; \
	else \
		echo "make: $(CHROMIUM) is missing (apt-get install chromium as root); the browser tests will skip"; \
	fi

# Bytecode is written even where the environment says not to: without it each of the workers compiles and
# rewrites the tests again (~2.6 s of CPU per process).
test: $(STAMP) chromium
	PYTHONDONTWRITEBYTECODE= $(VENV)/bin/pytest -q -p no:cacheprovider -n $(TEST_WORKERS)

lint: $(STAMP)
	$(VENV)/bin/ruff check src tests bench .ci
	$(VENV)/bin/ruff format --check src tests bench .ci
	$(VENV)/bin/mypy

# schemathesis over every operation of the OpenAPI document against the real app (.ci/contract.py says how), in a
# network namespace of its own: generated URLs must not leave the machine. A few minutes; CI runs it after `test`.
# CONTRACT_ARGS go to .ci/contract.py and on to schemathesis, e.g. CONTRACT_ARGS="--seed 7 --max-examples 20".
CONTRACT_ARGS ?=
contract: $(STAMP)
	unshare --user --map-root-user --net sh -c 'ip link set lo up && exec $(PYTHON) .ci/contract.py $(CONTRACT_ARGS)'
