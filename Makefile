# Two commands on a fresh clone:
#   make        create the environment if missing, run the quick suite on this machine's
#               best device, and build the site of that run (a draft) into site/
#   make test   the test suite (what CI runs)
PYTHON ?= python3
VENV := .venv
BIN := $(VENV)/bin
STAMP := $(VENV)/.installed
SUITE ?= quick

.PHONY: all env run site test serve preview

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
	$(BIN)/dlbench build --run latest
	$(BIN)/mkdocs build

serve: $(STAMP)
	$(BIN)/dlbench serve

preview: $(STAMP)
	$(BIN)/python -m http.server --bind 127.0.0.1 --directory site 8001

test: $(STAMP)
	$(BIN)/python -m pytest
