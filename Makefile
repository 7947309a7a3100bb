# Two commands on a fresh machine: `make run` (build the warehouse from the bundled real
# snapshots) and `make test`. Both create .venv and install what is missing first; neither needs
# root. `run` replays archived captures and needs no browser; `test` installs Debian's Chromium
# when it can (root and apt-get), otherwise the one browser test says it was skipped and why.
PYTHON ?= python3
VENV ?= .venv
BIN := $(VENV)/bin
export GPUPRICES_HOME ?= $(CURDIR)/data
# Where the crawler and the tests look for Chromium (spiders/crawl.py reads the same variable).
CHROMIUM := $(or $(GPUPRICES_CHROMIUM),/usr/bin/chromium)

.PHONY: setup chromium run test test-trace lint bench clean

setup: $(VENV)/.installed

# uv (itself a PyPI package) installs the same dependency set in seconds where pip takes minutes;
# pip is the fallback when uv cannot be installed or fails.
$(VENV)/.installed: pyproject.toml
	@test -x $(BIN)/python || $(PYTHON) -m venv $(VENV)
	@echo "installing gpuprices and its dependencies into $(VENV)"
	@mkdir -p $(VENV)/tmp
	@# TMPDIR inside the venv: the installers' lock and build files never land in /tmp.
	@if TMPDIR=$(CURDIR)/$(VENV)/tmp $(BIN)/python -m pip install -q uv && \
		TMPDIR=$(CURDIR)/$(VENV)/tmp $(BIN)/uv pip install --python $(BIN)/python \
		--compile-bytecode -e '.[dev]'; then \
		echo "installed with uv"; \
	else \
		echo "uv unavailable: installing with pip (a few minutes; each package is listed)"; \
		TMPDIR=$(CURDIR)/$(VENV)/tmp $(BIN)/python -m pip install -q --upgrade pip && \
		TMPDIR=$(CURDIR)/$(VENV)/tmp $(BIN)/python -m pip install --progress-bar off \
		-e '.[dev]'; \
	fi
	@touch $@

# Playwright cannot download its own browser here: Debian's Chromium is used instead. Only root
# with apt-get can install it; anyone else is told, and tests/test_browser_crawl.py skips.
# Headless use needs none of its recommended packages (printer and desktop services).
chromium:
	@if [ -x "$(CHROMIUM)" ]; then :; \
	elif [ "$$(id -u)" = 0 ] && command -v apt-get >/dev/null 2>&1; then \
		echo "installing Debian's chromium (for tests/test_browser_crawl.py)"; \
		apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq \
			--no-install-recommends chromium; \
	else \
		echo "NOTE: no Chromium at $(CHROMIUM) and no root to install it:" \
		     "tests/test_browser_crawl.py will be SKIPPED" \
		     "(install Debian's chromium or set GPUPRICES_CHROMIUM)"; \
	fi

run: setup
	$(BIN)/gpuprices nightly --replay all
	$(BIN)/gpuprices sql "select gpu_model, provider, sku, region, round(price_per_gpu_hour_usd, 4) as usd_per_gpu_hour, round(price_per_gpu_hour_eur, 4) as eur_per_gpu_hour, snapshot_date, age_days from cheapest_now where pricing_model = 'on_demand' order by usd_per_gpu_hour"
	@echo "Stale providers (the stale ones of the coverage line printed first): latest snapshot older than the age limit, left out of the table above:"
	$(BIN)/gpuprices sql "select * from stale_providers"
	$(BIN)/gpuprices report

test: setup chromium
	$(BIN)/ruff check .
	$(BIN)/pytest -rs -n auto --dist loadgroup --no-loadscope-reorder --durations=10

# The trace engine's tests (tests/test_sizing_trace.py, skipped by `make test`): the optional
# extra gpuprices[trace]. PyPI's Linux torch is a CUDA build of several GB; TORCH names the CPU
# build to install first (here pip finds torch 2.13.0 CPU on the machine's local package index;
# elsewhere e.g. TORCH="torch --index-url https://download.pytorch.org/whl/cpu").
TORCH ?= torch==2.13.0
test-trace: setup
	$(BIN)/python -m pip install -q $(TORCH)
	$(BIN)/python -m pip install -q -e '.[dev,trace]'
	$(BIN)/pytest -rs tests/test_sizing_trace.py

bench: setup
	$(BIN)/python bench/pipeline.py

clean:
	rm -rf data .pytest_cache
