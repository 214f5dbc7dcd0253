# Two commands on a fresh clone:
#   make        create the environment if missing, run the quick suite on this machine's
#               best device, and build the site of that run (a draft) into site/
#   make test   the test suite (what CI runs)
PYTHON ?= python3
VENV := .venv
BIN := $(VENV)/bin
STAMP := $(VENV)/.installed
TEST_STAMP := $(VENV)/.installed-test
#: What `make` needs (every framework, backend and runtime the quick suite and the site use);
#: `make test` adds the tests' own packages (pytest, Playwright, Ray), so a newcomer's first
#: `make` does not wait for them.
RUN_EXTRAS := jax,openvino
TEST_EXTRAS := $(RUN_EXTRAS),test,cluster
SUITE ?= quick

# The browser tests drive headless Chromium; `make test` installs it when it can.
CHROMIUM ?= chromium
USER_ID ?= $(shell id -u)

.PHONY: all env run site test test-deps serve preview

all: run site

env: $(STAMP)

$(STAMP): pyproject.toml setup.py
	test -x $(BIN)/python || $(PYTHON) -m venv $(VENV)
	$(BIN)/python -m pip install --quiet --upgrade pip
	$(BIN)/python -m pip install --quiet -e '.[$(RUN_EXTRAS)]'
	touch $(STAMP)

$(TEST_STAMP): $(STAMP)
	$(BIN)/python -m pip install --quiet -e '.[$(TEST_EXTRAS)]'
	touch $(TEST_STAMP)

run: $(STAMP)
	$(BIN)/dlbench run --suite $(SUITE)

site: $(STAMP)
	$(BIN)/dlbench build --run latest
	$(BIN)/mkdocs build

serve: $(STAMP)
	$(BIN)/dlbench serve

preview: $(STAMP)
	$(BIN)/dlbench serve --site site --port 8001

# Chromium from the system package manager when run as root; otherwise one line saying
# the exact command to run, and stop.
test-deps:
	@command -v $(CHROMIUM) >/dev/null 2>&1 || { \
	  if [ "$(USER_ID)" = 0 ] && command -v apt-get >/dev/null 2>&1; then \
	    echo "installing Chromium for the browser tests: apt-get install -y chromium"; \
	    DEBIAN_FRONTEND=noninteractive apt-get update -qq && \
	    DEBIAN_FRONTEND=noninteractive apt-get install -y -qq chromium >/dev/null; \
	  else \
	    echo "make test needs Chromium for the browser tests: run 'sudo apt-get install -y chromium', then 'make test' again" >&2; \
	    exit 1; \
	  fi; }

test: $(TEST_STAMP) test-deps
	$(BIN)/python -m pytest
