# Two commands (see README):  make run  |  make test
PYTHON ?= python3
VENV   := .venv
PY     := $(VENV)/bin/python
PIP    := $(VENV)/bin/pip
PORT   ?= 8501

.PHONY: run test setup setup-dev index lint format browser-deps bench fresh-clone-check clean

$(VENV)/.installed: requirements.txt
	$(PYTHON) -m venv $(VENV)
	$(PIP) install --quiet --upgrade pip
	$(PIP) install --quiet -r requirements.txt
	touch $@

$(VENV)/.installed-dev: requirements-dev.txt $(VENV)/.installed
	$(PIP) install --quiet -r requirements-dev.txt
	touch $@

## The project itself, editable (no dependencies: the pins above are the install), so that
## `python -m core` and `import core` work from any folder with this venv's python.
$(VENV)/.installed-project: pyproject.toml setup.py $(VENV)/.installed
	$(PIP) install --quiet --no-deps -e .
	touch $@

setup: $(VENV)/.installed $(VENV)/.installed-project

setup-dev: $(VENV)/.installed-dev $(VENV)/.installed-project

## Build the default indexes (offline, with progress), then serve the app.
## Binds to WB_SERVER_ADDRESS (default 127.0.0.1); refuses other addresses without sign-in.
run: setup
	$(PY) -m core serve --port $(PORT)

index: setup
	$(PY) -m core index runbooks

## Chromium, a Japanese font and an emoji font from Debian's packages for the browser test (Playwright drives it;
## no download). Without the font, screenshots show boxes for every Japanese character.
BROWSER_PACKAGES := chromium fonts-noto-cjk fonts-noto-color-emoji
browser-deps:
	@{ command -v chromium >/dev/null 2>&1 && dpkg -s fonts-noto-cjk fonts-noto-color-emoji >/dev/null 2>&1; } || { \
		if [ "$$(id -u)" = 0 ]; then SUDO=; else SUDO=sudo; fi; \
		$$SUDO apt-get install -y --no-install-recommends $(BROWSER_PACKAGES) >/dev/null 2>&1 || \
		{ $$SUDO apt-get update >/dev/null && \
		  $$SUDO apt-get install -y --no-install-recommends $(BROWSER_PACKAGES); }; }

## Set up and run the whole test suite (lint included).
test: setup-dev browser-deps
	$(VENV)/bin/ruff check .
	$(VENV)/bin/ruff format --check .
	$(PY) -m pytest

lint: setup-dev
	$(VENV)/bin/ruff check .
	$(VENV)/bin/ruff format --check .

format: setup-dev
	$(VENV)/bin/ruff check --fix .
	$(VENV)/bin/ruff format .

bench: setup-dev
	$(PY) -m bench.retrieval

## The unit tests in a fresh clone of HEAD with nothing beside it (browser tests skipped).
fresh-clone-check: setup-dev
	PYTHON=$(abspath $(PY)) scripts/fresh_clone_check.sh

clean:
	rm -rf chroma_db logs indexes state .pytest_cache build dist *.egg-info
