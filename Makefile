# Two commands on a fresh Debian 12 machine with Python 3.11:
#   make demo   - install into .venv and run the embedded simulation
#   make test   - install test dependencies (Python and Debian packages) and run the checks
PYTHON ?= python3
VENV ?= .venv
BIN := $(VENV)/bin
PYTEST_ARGS ?=

.PHONY: demo test lint format install install-test system-deps bench schema clean dashboards alerts \
	docs docs-reference docs-serve image chart

$(BIN)/python:
	$(PYTHON) -m venv $(VENV)
	$(BIN)/python -m pip install --quiet --upgrade pip

install: $(BIN)/python
	$(BIN)/python -m pip install --quiet -e .

install-test: $(BIN)/python
	$(BIN)/python -m pip install --quiet -e '.[test]'

# Real Prometheus and Alertmanager for the tests (Debian packages; no service is started),
# headless Chromium to render the HTML report, and podman with runc to build and run the
# image (tests/image; uidmap and slirp4netns for rootless use), with mmdebstrap for a Debian
# base where Docker Hub is out of reach.
# kubectl (for `kubectl kustomize` in tests/deploy) is not a Debian 12 package: install it
# from the Kubernetes project.
system-deps:
	@if ! command -v promtool >/dev/null || ! command -v prometheus-alertmanager >/dev/null \
			|| ! command -v chromium >/dev/null || ! command -v podman >/dev/null \
			|| ! command -v runc >/dev/null || ! command -v mmdebstrap >/dev/null; then \
		if [ "$$(id -u)" = 0 ]; then SUDO=; else SUDO=sudo; fi; \
		$$SUDO apt-get update -qq && \
		DEBIAN_FRONTEND=noninteractive $$SUDO apt-get install -y -qq --no-install-recommends \
			prometheus prometheus-alertmanager chromium podman runc uidmap slirp4netns mmdebstrap \
			>/dev/null; \
	fi

# The container image (Containerfile) with podman, or docker where there is no podman.
#   make image IMAGE=registry.example.com/platform/loadaware:v0.1.0
# BASE= another base image; WHEELS=build/wheels installs from wheels there, not PyPI;
# IMAGE_BUILD_FLAGS= more flags for the build (e.g. --runtime runc).
VERSION := $(shell sed -n 's/^version = "\(.*\)"$$/\1/p' pyproject.toml | head -n 1)
REVISION ?= $(shell git rev-parse HEAD 2>/dev/null || echo unknown)
IMAGE ?= ghcr.io/loadaware/loadaware:v$(VERSION)
CONTAINER_ENGINE ?= $(shell command -v podman || command -v docker)
BASE ?=
WHEELS ?=
IMAGE_BUILD_FLAGS ?=

image:
	@test -n "$(CONTAINER_ENGINE)" || { echo "make image needs podman or docker" >&2; exit 2; }
	$(CONTAINER_ENGINE) build -f Containerfile -t $(IMAGE) \
		--build-arg VERSION=$(VERSION) --build-arg REVISION=$(REVISION) \
		$(if $(BASE),--build-arg BASE=$(BASE)) $(if $(WHEELS),--build-arg WHEELS=$(WHEELS)) \
		$(IMAGE_BUILD_FLAGS) .

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
	$(BIN)/python charts/generate.py

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

# Regenerate the PrometheusRule in deploy/ (and the chart's rules) from alerts/*.rules.yml.
alerts: install-test
	$(BIN)/python alerts/generate.py
	$(BIN)/python charts/generate.py

# Regenerate charts/loadaware/values.schema.json (from policy/schema.json) and the chart's
# alert rules (from alerts/*.rules.yml); tests fail when they are stale.
chart: install-test
	$(BIN)/python charts/generate.py

bench: install
	$(BIN)/python -m bench

clean:
	rm -rf $(VENV) .pytest_cache .ruff_cache .hypothesis build dist site *.egg-info
