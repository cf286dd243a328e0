# Two commands for a fresh machine: `make demo` and `make test`.
SHELL := /bin/bash
# uv on PATH, else the uv module that `make uv` installs with pip (works wherever pip puts scripts).
UV ?= $(shell command -v uv 2>/dev/null || echo python3 -m uv)
export PREFECT_SERVER_ANALYTICS_ENABLED ?= false
export DO_NOT_TRACK ?= 1
# Install compiled bytecode: with PYTHONDONTWRITEBYTECODE set (as on CI) every CLI call would
# otherwise recompile polars, pyarrow, typer ... from source (~0.5-2 s per start; BENCHMARKS.md).
export UV_COMPILE_BYTECODE ?= 1
# ... which covers site-packages only: the project's own packages (an editable install; the
# wheel's list in pyproject.toml) are compiled after each sync, else every CLI call recompiles
# the ~40 modules it imports (~30 ms).
PACKAGES := $(shell sed -n 's/^packages = \[\(.*\)\]/\1/p' pyproject.toml | tr -d '",')
COMPILE = $(UV) run --frozen --no-sync python -m compileall -q -j 0 $(PACKAGES) >/dev/null
WAREHOUSE ?= data/gpu_prices.duckdb

.PHONY: help uv install install-dev install-bench demo test lint bench bench-quick clean

help:
	@echo "make demo   - install the locked env, run the offline refresh + weekly report"
	@echo "make test   - install the env with test tools and run the whole suite"
	@echo "make lint   - ruff"
	@echo "make bench  - benchmarks at full size;  make bench-quick - at small size"

# uv is bootstrapped with pip when missing (no other download needed).
uv:
	@$(UV) --version >/dev/null 2>&1 || python3 -m pip install --quiet --user uv 2>/dev/null \
		|| python3 -m pip install --quiet uv
	@$(UV) --version

install: uv
	$(UV) sync --frozen --no-dev
	$(COMPILE)

install-dev: uv
	$(UV) sync --frozen --group dev
	$(COMPILE)

# gpuhunt (bench/vs_gpuhunt.py) comes only with the `bench` group, never with test or demo.
install-bench: uv
	$(UV) sync --frozen --group dev --group bench
	$(COMPILE)

demo: install
	$(UV) run --frozen --no-dev gpuprices backfill examples --warehouse $(WAREHOUSE)
	$(UV) run --frozen --no-dev gpuprices refresh --offline --warehouse $(WAREHOUSE)
	$(UV) run --frozen --no-dev gpuprices report --warehouse $(WAREHOUSE)

test: install-dev
	$(UV) run --frozen ruff check .
	$(UV) run --frozen pytest

lint: install-dev
	$(UV) run --frozen ruff check .

bench: install-bench
	$(UV) run --frozen --group dev --group bench python -m bench.run_all

# Small sizes, for CI: fails on errors (and on a comparison that cannot run), never on times.
bench-quick: install-bench
	$(UV) run --frozen --group dev --group bench python -m bench.run_all --size small

clean:
	rm -rf data .pytest_cache .ruff_cache
