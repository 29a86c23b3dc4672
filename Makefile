# Two commands on a fresh Debian 12 machine with Python 3.11:
#   make demo   - install into .venv and run the embedded simulation
#   make test   - install test dependencies (Python and Debian packages) and run the checks
PYTHON ?= python3
VENV ?= .venv
BIN := $(VENV)/bin
PYTEST_ARGS ?=

.PHONY: demo test lint format install install-test system-deps bench schema clean dashboards alerts \
	docs docs-reference docs-serve

$(BIN)/python:
	$(PYTHON) -m venv $(VENV)
	$(BIN)/python -m pip install --quiet --upgrade pip

install: $(BIN)/python
	$(BIN)/python -m pip install --quiet -e .

install-test: $(BIN)/python
	$(BIN)/python -m pip install --quiet -e '.[test]'

# Real Prometheus and Alertmanager for the tests (Debian packages; no service is started),
# and headless Chromium to render the HTML report. kubectl (for `kubectl kustomize` in
# tests/deploy) is not a Debian 12 package: install it from the Kubernetes project.
system-deps:
	@if ! command -v promtool >/dev/null || ! command -v prometheus-alertmanager >/dev/null \
			|| ! command -v chromium >/dev/null; then \
		if [ "$$(id -u)" = 0 ]; then SUDO=; else SUDO=sudo; fi; \
		$$SUDO apt-get update -qq && \
		DEBIAN_FRONTEND=noninteractive $$SUDO apt-get install -y -qq --no-install-recommends \
			prometheus prometheus-alertmanager chromium >/dev/null; \
	fi

demo: install
	$(BIN)/loadaware simulate

lint: install-test
	$(BIN)/ruff check .
	$(BIN)/ruff format --check .
	$(BIN)/lint-imports

format: install-test
	$(BIN)/ruff format .
	$(BIN)/ruff check --fix .

test: install-test system-deps lint docs
	$(BIN)/python -m pytest $(PYTEST_ARGS)

schema: install
	$(BIN)/python -m loadaware.policy

# The documentation site: docs/ and mkdocs.yml, built into site/ (git-ignored).
# --strict turns every warning into an error: a broken link or anchor, a page left
# out of the nav.
docs: install-test
	NO_MKDOCS_2_WARNING=1 $(BIN)/mkdocs build --strict --site-dir site

docs-serve: install-test
	NO_MKDOCS_2_WARNING=1 $(BIN)/mkdocs serve --strict

# Regenerate docs/reference/policy.md from the policy models, and the flags section of
# docs/reference/cli.md from the command's parser (tests fail when either is stale).
docs-reference: install
	$(BIN)/python -m loadaware.policy reference
	$(BIN)/python -m loadaware._cli_reference

# Regenerate dashboards/*.json from dashboards/generate.py (tests fail when they are stale).
dashboards: install-test
	$(BIN)/python dashboards/generate.py

# Regenerate the PrometheusRule in deploy/ from alerts/*.rules.yml.
alerts: install-test
	$(BIN)/python alerts/generate.py

bench: install
	$(BIN)/python -m bench

clean:
	rm -rf $(VENV) .pytest_cache .ruff_cache .hypothesis build dist site *.egg-info
