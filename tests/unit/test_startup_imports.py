"""Read commands start near DuckDB's own start-up (issue 23): what each imports is held here,
so a heavy import at start cannot come back unseen. Each command runs in its own process on
the demo warehouse; the modules it loaded are read from sys.modules as it exits.

Every read command here but `report` prints DuckDB's rows without polars (on a terminal, in
USD, everywhere; --currency, csv and json read polars frames). numpy is the index engine's:
reading fixed days never loads it (only a day not yet fixed is computed)."""

from __future__ import annotations

import os
import subprocess
import sys
from datetime import UTC, datetime
from pathlib import Path

import pytest

from tests.reports.test_demo_history import demo_warehouse

REPO = Path(__file__).resolve().parents[2]
HEAVY = ("polars", "pyarrow", "numpy", "pandera", "httpx", "pydantic", "rich", "bs4",
         "prefect", "matplotlib", "msgspec", "hashlib")
# Why a command may still load one: polars where it computes the answer (`report`), rich
# where the answer is not a plain ASCII table. Each other command's answer is one SQL
# question whose rows print as they are (warehouse.frames.relation_rows): `query` a view's
# timestamps, `sources` source_status, `changes` its moves, `cheapest` and `value` their
# offers, `history` its points, `index` and `market` a fixed day's fixings and view,
# `explain market` the offers, medians and votes it lists (warehouse.frames.sql_dicts),
# `summary` its three tables, `availability` its series (a region's geography passed as
# parameters: a Python function in SQL loads numpy). `sources` imports every scraper
# module, yet neither polars (imported where a payload is parsed), msgspec (Vast.ai's typed
# decode, where its payload is parsed: scrapers._vastai_offers), httpx (where a request is
# made: scrapers.http) nor bs4 (where a page is read).
# `report` draws its chart with Pillow (reports.linechart), not matplotlib (0.3 s to import).
# hashlib (OpenSSL's start, 3-17 ms) is a capture's digest (contract.RawCapture): no read makes
# one, but polars imports hashlib itself, so a read that loads polars may load it.
ALLOWED: dict[str, set[str]] = {
    "query": set(),
    "sources": set(),
    "cheapest": set(),
    "market": set(),
    "history": set(),
    "changes": set(),
    "availability": set(),
    "index": set(),
    "summary": set(),
    "value": set(),
    "explain": set(),
    "report": {"polars"},
}
ARGS = {"query": ["select source, observed_at, price_usd_per_gpu_hour from latest_price"],
        "history": ["H100"], "changes": ["--since", "2024-01-01"], "availability": ["H100"],
        "cheapest": ["--limit", "5"], "explain": ["market", "H100"]}
_LOADED = ("import atexit, sys; atexit.register(lambda: sys.__stderr__.write('LOADED ' + "
           "' '.join(sorted({m.split('.')[0] for m in sys.modules})) + '\\n')); "
           "from gpuprices.cli import main; sys.argv[0] = 'gpuprices'; main()")


@pytest.fixture(scope="module")
def demo(tmp_path_factory: pytest.TempPathFactory) -> Path:
    path = tmp_path_factory.mktemp("demo") / "demo.duckdb"
    demo_warehouse(path, datetime.now(UTC))
    return path


@pytest.mark.parametrize("command", sorted(ALLOWED))
def test_a_read_command_loads_no_heavy_module_it_does_not_use(demo: Path,
                                                                command: str) -> None:
    env = {**os.environ, "GPUPRICES_WAREHOUSE": str(demo), "COLUMNS": "200"}
    done = subprocess.run([sys.executable, "-c", _LOADED, command, *ARGS.get(command, [])],
                          cwd=REPO, env=env, capture_output=True, text=True, timeout=120,
                          check=False)
    assert done.returncode == 0, done.stderr[-500:]
    assert done.stdout.strip(), "the command printed its answer"
    loaded = set(next(line for line in done.stderr.splitlines()
                      if line.startswith("LOADED ")).split()[1:])
    assert "duckdb" in loaded and "typer" in loaded  # the check sees the modules
    allowed = ALLOWED[command] | ({"hashlib"} if "polars" in ALLOWED[command] else set())
    assert {m for m in HEAVY if m in loaded} <= allowed
