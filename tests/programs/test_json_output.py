"""Output scripts can trust: every command with `--format json` prints exactly ONE JSON
document on stdout when stdout is a pipe (progress bars, notes, alerts and logs go to stderr).
Each command runs as its own process (`python -m gpuprices`), stdout piped; the list of
commands is read from the CLI itself, so a new command must be added here."""

from __future__ import annotations

import gzip
import json
import os
import shutil
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest
import typer

from gpuprices.cli import app
from tests.archive_server import serve_archive
from tests.unit.test_ocp_archive_backfill import MONTH
from tests.unit.test_skypilot_git_backfill import LAMBDA_V1, commit
from tests.unit.test_wayback_backfill import archive_of

REPO = Path(__file__).resolve().parents[2]
ECB = REPO / "tests" / "fixtures" / "ecb" / "eurofxref-hist_2026-11.csv"
VAST = REPO / "scrapers" / "examples" / "vastai" / "bundles_2025-06-12.json"

# command -> its arguments ({tmp}: a folder of inputs made below); "write" ones get a copy
ARGS: dict[str, list[str]] = {
    "parse": ["vastai", str(VAST)],
    "query": ["SELECT provider, count(*) AS n FROM latest_price GROUP BY ALL"],
    "sources": [],
    "summary": [],
    "refresh": ["--offline", "--source", "vastai", "--source", "lambda"],
    "backfill examples": [],
    "backfill ecb": [str(ECB)],
    "backfill skypilot": ["--git", "{tmp}/catalog"],
    "backfill opencomputeprices": ["{tmp}/ocp_2026-01.csv.gz"],
    "backfill wayback": ["lambda-page", "--every", "capture", "--interval", "0.2"],
    "history": ["H100 SXM"],
    "changes": ["--since", "2020-01-01"],
    "market": [],
    "market-moves": [],
    "value": [],
    "cluster": ["--gpu", "H100", "--gpus", "64"],
    "rent-vs-buy": [],
    "cheapest": ["--gpu", "H100"],
    "availability": ["RTX 4090"],
    "scenario": ["--gpu-hours", "100", "--gpu", "A100 80GB"],
    "fit": [],
    "reparse": ["vastai"],
    "alerts list": [],
    "index impact": ["--params", str(REPO / "warehouse" / "index" / "params.toml")],
    "index backtest": ["--no-simulate"],
}
WRITES = {"refresh", "backfill examples", "backfill ecb", "backfill skypilot",
          "backfill opencomputeprices", "backfill wayback", "reparse"}


def json_commands() -> set[str]:
    """Every command whose --format offers json."""
    found: set[str] = set()

    def walk(group: object, prefix: str) -> None:
        for name, command in group.commands.items():  # type: ignore[attr-defined]
            path = f"{prefix}{name}"
            if hasattr(command, "commands"):
                walk(command, f"{path} ")
                continue
            for param in command.params:  # FormatOpt: "table, csv or json"
                if "--format" in getattr(param, "opts", ()) and \
                        "json" in (getattr(param, "help", "") or ""):
                    found.add(path)
    walk(typer.main.get_command(app), "")
    return found


def test_every_json_command_is_covered() -> None:
    assert json_commands() == set(ARGS)


@pytest.fixture(scope="module")
def inputs(tmp_path_factory: pytest.TempPathFactory) -> Path:
    folder = tmp_path_factory.mktemp("inputs")
    (folder / "ocp_2026-01.csv.gz").write_bytes(gzip.compress(MONTH.encode()))
    repo = folder / "catalog"
    repo.mkdir()
    subprocess.run(["git", "init", "-q", str(repo)], check=True)
    commit(repo, "2024-01-05T07:00:00Z", {"catalogs/v5/lambda/vms.csv": LAMBDA_V1}, "one")
    return folder


@pytest.fixture(scope="module")
def archive() -> Iterator[str]:
    with serve_archive(archive_of()) as base:
        yield base


@pytest.mark.parametrize("command", sorted(ARGS))
def test_one_json_document(command: str, demo: Path, inputs: Path, archive: str,
                           tmp_path: Path) -> None:
    warehouse = demo
    if command in WRITES:  # a copy: the demo stays as the other tests expect it
        shutil.copytree(demo.parent, tmp_path / "wh")
        warehouse = tmp_path / "wh" / demo.name
    args = [a.replace("{tmp}", str(inputs)) for a in ARGS[command]]
    env = {k: v for k, v in os.environ.items() if not k.startswith("PREFECT_API")}
    env.update({"GPUPRICES_BASE_URL_WAYBACK": archive, "GPUPRICES_BACKOFF_S": "0",
                "PYTHONPATH": str(REPO), "COLUMNS": "100"})
    done = subprocess.run(
        [sys.executable, "-m", "gpuprices", *command.split(), *args,
         *(["-w", str(warehouse)] if command != "parse" else []), "--format", "json"],
        capture_output=True, text=True, cwd=REPO, env=env, timeout=300, check=False)
    assert done.returncode == 0, done.stderr[-2000:]
    document = json.loads(done.stdout)  # exactly one document: trailing data fails here
    assert isinstance(document, list | dict)
    assert "━" not in done.stdout and "\x1b" not in done.stdout


@pytest.mark.parametrize("open_", ["write", "read", "query", "memory"])
def test_no_connection_draws_duckdbs_progress_bar(open_: str, demo: Path,
                                                  tmp_path: Path) -> None:
    """DuckDB draws a progress bar on stdout, piped or not, once a query runs past 2 s (a big
    warehouse, a loaded machine): it would land inside the one JSON document."""
    from warehouse.connection import connect, connect_read_only

    if open_ == "write":
        copy = tmp_path / "w.duckdb"
        shutil.copy(demo, copy)
        con = connect(copy)
    elif open_ == "memory":
        con = connect(":memory:")
    else:
        con = connect_read_only(demo, sandboxed=open_ == "query")
    try:
        assert con.sql("select current_setting('enable_progress_bar')").fetchone() == (False,)
    finally:
        con.close()
