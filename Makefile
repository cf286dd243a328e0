# Two commands for a fresh machine: `make demo` and `make test`.
SHELL := /bin/bash
UV ?= $(shell command -v uv 2>/dev/null || echo $(HOME)/.local/bin/uv)
export PREFECT_SERVER_ANALYTICS_ENABLED ?= false
export DO_NOT_TRACK ?= 1
WAREHOUSE ?= data/gpu_prices.duckdb

.PHONY: help uv install install-dev demo test lint bench bench-quick clean

help:
	@echo "make demo   - install the locked env, run the offline refresh + weekly report"
	@echo "make test   - install the env with test tools and run the whole suite"
	@echo "make lint   - ruff"
	@echo "make bench  - benchmarks at full size;  make bench-quick - at small size"

# uv is bootstrapped with pip when missing (no other download needed).
uv:
	@command -v $(UV) >/dev/null 2>&1 || python3 -m pip install --user --quiet uv
	@$(UV) --version

install: uv
	$(UV) sync --frozen --no-dev

install-dev: uv
	$(UV) sync --frozen --all-groups

demo: install
	$(UV) run --frozen --no-dev gpuprices refresh --offline --warehouse $(WAREHOUSE)

test: install-dev
	$(UV) run --frozen ruff check .
	$(UV) run --frozen pytest

lint: install-dev
	$(UV) run --frozen ruff check .

clean:
	rm -rf data .pytest_cache .ruff_cache
