"""Bad warehouse paths, symlinked warehouses and runs killed mid-way (issue 22.8, 22.9).

A `--warehouse` that is a FIFO used to hang `query`, `refresh` and `cheapest`; any path that
is not a DuckDB file now gets one line at once. A symlinked warehouse keeps its lock, raw
archive and read snapshots beside the link's target. A refresh killed with kill -9 used to
stay `running` forever; the next writable open marks it `abandoned`.
"""

from __future__ import annotations

import os
import shutil
import signal
import socket
import subprocess
import sys
import textwrap
from collections.abc import Iterator
from pathlib import Path

import duckdb
import pytest
from typer.testing import CliRunner

from gpuprices.cli import app
from tests.conftest import REPO
from warehouse.connection import open_warehouse
from warehouse.lock import lock_path
from warehouse.snapshot import read_dir

runner = CliRunner()


def one_error_line(output: str) -> str:
    lines = [line for line in output.splitlines() if line.strip()]
    assert len(lines) == 1, output
    assert lines[0].startswith("error: "), output
    return lines[0]


@pytest.fixture
def fifo(tmp_path: Path) -> Iterator[Path]:
    path = tmp_path / "pipe.duckdb"
    os.mkfifo(path)
    yield path


@pytest.fixture
def unix_socket(tmp_path: Path) -> Iterator[Path]:
    path = tmp_path / "s.duckdb"
    server = socket.socket(socket.AF_UNIX)
    server.bind(str(path))
    yield path
    server.close()


def commands(tmp_path: Path) -> list[list[str]]:
    out = str(tmp_path / "out")
    return [["query", "select 1"], ["refresh", "--offline", "-s", "vastai"], ["cheapest"],
            ["sources"], ["summary"], ["report", "--out", out], ["export", out],
            ["board", out], ["migrate"], ["reparse"], ["market"], ["backfill", "examples"]]


@pytest.mark.timeout(300)
@pytest.mark.parametrize("kind", ["fifo", "directory", "device", "socket", "under_a_file"])
def test_a_warehouse_that_is_no_file_gets_one_line_at_once(
        kind: str, tmp_path: Path, request: pytest.FixtureRequest) -> None:
    if kind == "fifo":
        path, words = request.getfixturevalue("fifo"), ("is a FIFO (named pipe)",)
    elif kind == "socket":
        path, words = request.getfixturevalue("unix_socket"), ("is a socket",)
    elif kind == "directory":
        path, words = tmp_path / "d.duckdb", ("is a directory",)
        path.mkdir()
    elif kind == "device":
        path, words = Path("/dev/null"), ("is a character device",)
    else:  # a read may just say there is none
        (tmp_path / "plain").write_text("x")
        path, words = tmp_path / "plain" / "w.duckdb", ("Not a directory", "no warehouse at")
    before = sorted(p.name for p in tmp_path.iterdir())
    for args in commands(tmp_path):
        result = runner.invoke(app, [*args, "-w", str(path)])
        shown = f"{args}: {result.output}"
        assert result.exit_code in (1, 2), shown
        line = one_error_line(result.output)
        assert any(w in line for w in words), shown
    assert sorted(p.name for p in tmp_path.iterdir()) == before, "nothing created beside it"


def test_a_symlinked_warehouse_keeps_lock_archive_and_snapshots_beside_its_target(
        tmp_path: Path) -> None:
    real_dir, link_dir = tmp_path / "real", tmp_path / "links"
    real_dir.mkdir()
    link_dir.mkdir()
    target = real_dir / "gpu_prices.duckdb"
    link = link_dir / "gpu_prices.duckdb"
    link.symlink_to(target)
    result = runner.invoke(app, ["refresh", "--offline", "-s", "vastai", "-w", str(link)])
    assert result.exit_code == 0, result.output
    assert sorted(p.name for p in link_dir.iterdir()) == ["gpu_prices.duckdb"]
    assert {"gpu_prices.duckdb.lock", "gpu_prices.duckdb.read", "raw"} <= \
        {p.name for p in real_dir.iterdir()}
    assert lock_path(link) == lock_path(target) == real_dir / "gpu_prices.duckdb.lock"
    assert any((real_dir / "raw").rglob("*.gz"))
    rows = runner.invoke(app, ["query", "select count(*) as n from observation", "-w",
                               str(link), "-f", "csv"])
    assert rows.exit_code == 0 and int(rows.output.splitlines()[-1]) > 0

    # One lock whatever the name: held through the link, it stops a writer via the target.
    done = subprocess.run(
        [sys.executable, "-c", LOCK_HOLDER, str(link), str(target)], capture_output=True,
        text=True, cwd=REPO, env={**os.environ, "PYTHONPATH": str(REPO)}, timeout=120)
    assert done.returncode == 0, done.stderr
    assert done.stdout.startswith("busy: another refresh (pid "), done.stdout


# Holds the lock through the link, then asks for it through the target from a child.
LOCK_HOLDER = textwrap.dedent("""
    import subprocess, sys
    from warehouse.lock import refresh_lock
    link, target = sys.argv[1], sys.argv[2]
    ask = ("import sys\\nfrom warehouse.lock import refresh_lock\\n"
           "from warehouse.errors import WarehouseBusy\\n"
           "try:\\n    refresh_lock(sys.argv[1]).__enter__()\\n"
           "except WarehouseBusy as busy:\\n    print('busy:', busy)")
    with refresh_lock(link):
        print(subprocess.run([sys.executable, "-c", ask, target], capture_output=True,
                             text=True).stdout, end="")
""")

# A refresh that stops for good once its run is recorded as running.
STALLED = textwrap.dedent("""
    import sys, time
    from pathlib import Path
    from flows.refresh_work import run_refresh
    from contract.settings import Settings

    def stall(names, kwargs):
        print("running", flush=True)
        time.sleep(600)
        return []

    run_refresh(Settings(warehouse=Path(sys.argv[1])), offline=True, run_id="killed-run",
                runner=stall)
""")


def run_status(path: Path, run_id: str) -> tuple[str, object]:
    con = duckdb.connect(str(path), read_only=True)  # the file itself (replays its WAL)
    try:
        row = con.execute("SELECT status, finished_at FROM refresh_run WHERE run_id = ?",
                          [run_id]).fetchone()
    finally:
        con.close()
    assert row is not None
    return str(row[0]), row[1]


@pytest.mark.timeout(300)
def test_a_refresh_killed_with_kill_9_is_marked_abandoned_by_the_next_writer(
        tmp_path: Path) -> None:
    warehouse = tmp_path / "wh" / "gpu_prices.duckdb"
    child = subprocess.Popen([sys.executable, "-c", STALLED, str(warehouse)],
                             stdout=subprocess.PIPE, text=True, cwd=REPO,
                             env={**os.environ, "PYTHONPATH": str(REPO)})
    assert child.stdout is not None and child.stdout.readline().strip() == "running"
    child.send_signal(signal.SIGKILL)
    child.wait(timeout=30)
    assert run_status(warehouse, "killed-run") == ("running", None), "the kill left it running"

    result = runner.invoke(app, ["refresh", "--offline", "-s", "vastai", "-w", str(warehouse)])
    assert result.exit_code == 0, result.output  # the dead writer's lock went with it
    status, finished = run_status(warehouse, "killed-run")
    assert status == "abandoned" and finished is not None
    con = duckdb.connect(str(warehouse), read_only=True)
    try:
        note = con.execute("SELECT note FROM refresh_run WHERE run_id = 'killed-run'"
                           ).fetchone()
        statuses = {r[0] for r in con.execute("SELECT status FROM refresh_run").fetchall()}
    finally:
        con.close()
    assert note and "abandoned" in str(note[0])
    assert "running" not in statuses


def test_a_run_of_this_process_in_progress_is_left_alone(tmp_path: Path) -> None:
    """Only the sole connection to the file marks runs: a second connection of the process
    that is in the middle of a run must not mark its own run abandoned."""
    from warehouse.append import start_run
    from warehouse.connection import connect

    warehouse = tmp_path / "w.duckdb"
    with open_warehouse(warehouse) as con:
        start_run(con, "live-run", "refresh", offline=True)
        second = connect(warehouse)  # same process, same file: the same database
        second.close()
        row = con.execute("SELECT status FROM refresh_run WHERE run_id = 'live-run'").fetchone()
    assert row == ("running",)
    with open_warehouse(warehouse) as con:  # the process is done with it: now it is stale
        row = con.execute("SELECT status FROM refresh_run WHERE run_id = 'live-run'").fetchone()
    assert row == ("abandoned",)
    shutil.rmtree(read_dir(warehouse))
