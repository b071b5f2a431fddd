# The quick start: `make serve` and `make test` each set up what they need on a fresh clone.
VENV := .venv
PYTHON := $(VENV)/bin/python
STAMP := $(VENV)/.installed-stamp
# pytest-xdist workers: the suite waits on servers, PostgreSQL and subprocesses about half the time,
# so two workers per core of a 2-core machine keep both cores busy.
TEST_WORKERS ?= 4

.PHONY: serve test lint contract bench

$(STAMP): pyproject.toml
	test -x $(PYTHON) || python3 -m venv $(VENV)
	$(PYTHON) -m pip install --quiet --upgrade pip
	$(PYTHON) -m pip install --quiet -e '.[dev]'
	touch $(STAMP)

serve: $(STAMP)
	$(VENV)/bin/toolhost serve

test: $(STAMP)
	$(VENV)/bin/pytest -q -p no:cacheprovider -n $(TEST_WORKERS)

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
