# Two commands on a fresh machine: `make run` (build the warehouse from the bundled real
# snapshots) and `make test`. Both create .venv and install what is missing first.
PYTHON ?= python3
VENV ?= .venv
BIN := $(VENV)/bin
export GPUPRICES_HOME ?= $(CURDIR)/data

.PHONY: setup chromium run test lint bench clean

setup: $(VENV)/.installed chromium

$(VENV)/.installed: pyproject.toml
	test -x $(BIN)/python || $(PYTHON) -m venv $(VENV)
	$(BIN)/pip install -q --upgrade pip
	$(BIN)/pip install -q -e '.[dev]'
	touch $@

# Playwright cannot download its own browser here: Debian's Chromium is used instead.
chromium:
	@command -v chromium >/dev/null 2>&1 || { \
		echo "installing Debian's chromium (needed for browser-rendered pages)"; \
		apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq chromium; }

run: setup
	$(BIN)/gpuprices nightly --replay all
	$(BIN)/gpuprices sql "select gpu_model, provider, sku, region, round(price_per_gpu_hour_usd, 4) as usd_per_gpu_hour, round(price_per_gpu_hour_eur, 4) as eur_per_gpu_hour, firm_price, snapshot_date from cheapest_now where pricing_model = 'on_demand' order by usd_per_gpu_hour"
	$(BIN)/gpuprices report

test: setup
	$(BIN)/ruff check .
	$(BIN)/pytest

bench: setup
	$(BIN)/python bench/pipeline.py

clean:
	rm -rf data .pytest_cache
