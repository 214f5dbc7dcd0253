# Two commands on a fresh clone:
#   make        create the environment if missing, run the quick suite on this machine's
#               best device, and build the site from the results
#   make test   the test suite (what CI runs)
PYTHON ?= python3
VENV := .venv
BIN := $(VENV)/bin
STAMP := $(VENV)/.installed
SUITE ?= quick

.PHONY: all env run site test serve clean-site

all: run site

env: $(STAMP)

$(STAMP): pyproject.toml
	test -x $(BIN)/python || $(PYTHON) -m venv $(VENV)
	$(BIN)/python -m pip install --quiet --upgrade pip
	$(BIN)/python -m pip install --quiet -e '.[jax,test]'
	touch $(STAMP)

run: $(STAMP)
	$(BIN)/dlbench run --suite $(SUITE)

site: $(STAMP)
	$(BIN)/dlbench build

serve: $(STAMP)
	$(BIN)/dlbench serve

test: $(STAMP)
	$(BIN)/python -m pytest
