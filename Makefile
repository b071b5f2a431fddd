# The quick start: `make serve` and `make test` each set up what they need on a fresh clone.
VENV := .venv
PYTHON := $(VENV)/bin/python
STAMP := $(VENV)/.installed-stamp
# pytest-xdist workers: the suite waits on servers, PostgreSQL and subprocesses about half the time,
# so two workers per core of a 2-core machine keep both cores busy.
TEST_WORKERS ?= 4

.PHONY: serve test lint bench

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
	$(VENV)/bin/ruff check src tests bench
	$(VENV)/bin/ruff format --check src tests bench
	$(VENV)/bin/mypy
