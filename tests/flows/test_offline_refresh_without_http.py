"""An offline refresh (the demo's) replays bundled pages: it opens no HTTP client and never
imports httpx (its import and TLS context were ~0.15 s of the demo's refresh). A live path
given no client says so instead of failing somewhere inside httpx."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

from contract.settings import Settings
from flows.fx_rates import refresh_rates
from flows.refresh_work import _fetch
from scrapers.registry import get_source
from warehouse.connection import open_warehouse

REPO = Path(__file__).resolve().parents[2]


def test_an_offline_refresh_of_every_source_imports_no_httpx(tmp_path: Path) -> None:
    code = ("import sys\nfrom contract.settings import Settings\n"
            "from flows.refresh_work import run_refresh\n"
            f"out = run_refresh(Settings(warehouse={str(tmp_path / 'w.duckdb')!r}), "
            "offline=True)\n"
            "assert len(out) > 20 and all(o.ok for o in out), out\n"
            "print(sorted(m for m in ('httpx', 'httpcore') if m in sys.modules))")
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                          check=False, cwd=REPO, timeout=300,
                          env={**os.environ, "GPUPRICES_ARCHIVE": str(tmp_path / "raw")})
    assert done.returncode == 0, done.stderr[-2000:]
    assert done.stdout.strip().splitlines()[-1] == "[]"


def test_a_live_fetch_without_a_client_names_what_is_missing(tmp_path: Path) -> None:
    settings = Settings(warehouse=tmp_path / "w.duckdb")
    with pytest.raises(ValueError, match="lambda: a live refresh needs an HTTP client"):
        _fetch(get_source("lambda"), None, settings)
    with open_warehouse(settings.warehouse) as con, \
            pytest.raises(ValueError, match="live ECB rates need an HTTP client"):
        refresh_rates(con, None, settings, offline=False)
