"""Readers never block the writer, and the writer never blocks readers (issue 19.4).

Readers open the read snapshot each write session publishes (warehouse.snapshot): a refresh
runs while other processes hold read-only connections, and a refresh and a report started
together both finish. A reader that opens the warehouse file itself (an outside tool doing
it the old way) is waited for a while, then named, with its PID, in one line.
"""

from __future__ import annotations

import os
import subprocess
import sys
import textwrap
import time
from pathlib import Path

import duckdb
import pytest

from contract.settings import Settings
from flows.refresh_work import run_refresh
from tests.conftest import REPO
from warehouse import connection
from warehouse.connection import WarehouseBusy, connect_read_only, open_warehouse
from warehouse.snapshot import KEEP, current, read_dir, read_path

COUNTS = ("SELECT (SELECT count(*) FROM observation), (SELECT count(*) FROM refresh_run), "
          "(SELECT count(*) FROM refresh_run WHERE status = 'running')")
ENV = {**os.environ, "PYTHONPATH": str(REPO)}


def cli(*args: str) -> subprocess.Popen[str]:
    return subprocess.Popen([sys.executable, "-m", "gpuprices.cli", *args],
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
                            cwd=REPO, env=ENV)


def counts(path: Path) -> tuple[int, int, int]:
    con = connect_read_only(path)
    try:
        row = con.execute(COUNTS).fetchone()
    finally:
        con.close()
    assert row is not None
    return int(row[0]), int(row[1]), int(row[2])


@pytest.fixture
def seeded(warehouse_path: Path) -> Path:
    """Two sources landed: the full refresh in each test adds the other sources' rows."""
    run_refresh(Settings(warehouse=warehouse_path), source_names=["vastai", "lambda"],
                offline=True)
    return warehouse_path


# Holds a read-only connection to the documented read path; reads when told to.
READER = textwrap.dedent("""
    import sys, duckdb
    sql = sys.argv[2]
    con = duckdb.connect(sys.argv[1], read_only=True)
    print(con.execute(sql).fetchone(), flush=True)
    sys.stdin.readline()
    print(con.execute(sql).fetchone(), flush=True)  # the same connection, after the refresh
    con.close()
    con = duckdb.connect(sys.argv[1], read_only=True)  # a new one: the newest snapshot
    print(con.execute(sql).fetchone(), flush=True)
""")


@pytest.mark.timeout(600)
def test_a_reader_held_open_during_a_refresh(seeded: Path) -> None:
    before = counts(seeded)
    reader = subprocess.Popen([sys.executable, "-c", READER, str(read_path(seeded)), COUNTS],
                              stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True)
    assert reader.stdin and reader.stdout
    first = reader.stdout.readline().strip()
    refresh = cli("refresh", "--offline", "-w", str(seeded), "-f", "csv")
    _, err = refresh.communicate(timeout=500)
    assert refresh.returncode == 0, err
    reader.stdin.write("go\n")
    reader.stdin.flush()
    again, newest = reader.stdout.readline().strip(), reader.stdout.readline().strip()
    assert reader.wait(timeout=60) == 0
    after = counts(seeded)
    assert first == again == str(before), "a reader's snapshot never changes under it"
    assert newest == str(after), "a new connection sees the refresh"
    assert after[0] > before[0] and after[1] == before[1] + 1 and after[2] == 0


@pytest.mark.timeout(600)
def test_reads_during_a_refresh_answer_at_once_with_a_whole_state(seeded: Path) -> None:
    before = counts(seeded)
    refresh = cli("refresh", "--offline", "-w", str(seeded), "-f", "csv")
    seen, slowest = set(), 0.0
    while refresh.poll() is None:
        started = time.monotonic()
        seen.add(counts(seeded))
        slowest = max(slowest, time.monotonic() - started)
        time.sleep(0.05)
    _, err = refresh.communicate()
    assert refresh.returncode == 0, err
    after = counts(seeded)
    seen.add(after)
    assert seen <= {before, after}, f"a read saw a state between two writes: {seen}"
    assert before in seen and slowest < 10


@pytest.mark.timeout(900)
@pytest.mark.parametrize("first", ["refresh", "report"])
def test_a_refresh_and_a_report_started_together_both_succeed(seeded: Path, tmp_path: Path,
                                                              first: str) -> None:
    commands = {"refresh": ("refresh", "--offline", "-w", str(seeded), "-f", "csv"),
                "report": ("report", "--out", str(tmp_path / "reports"), "-w", str(seeded))}
    second = "report" if first == "refresh" else "refresh"
    started = [cli(*commands[first]), cli(*commands[second])]
    results = [(p.wait(timeout=800), *p.communicate()) for p in started]
    for name, (code, out, err) in zip((first, second), results, strict=True):
        assert code == 0, f"{name}: {out[-500:]} {err}"
    assert list((tmp_path / "reports").glob("*.md"))


# Opens the warehouse FILE read-only (not the read path), as an outside tool might.
FILE_READER = textwrap.dedent("""
    import sys, time, duckdb
    con = duckdb.connect(sys.argv[1], read_only=True)
    print("open", flush=True)
    time.sleep(float(sys.argv[2]))
""")


@pytest.mark.timeout(600)
def test_a_writer_waits_for_a_reader_of_the_file_then_names_it(seeded: Path,
                                                               monkeypatch: pytest.MonkeyPatch
                                                               ) -> None:
    # A reader that closes within READER_WAIT_S: the refresh waits for it and succeeds.
    brief = subprocess.Popen([sys.executable, "-c", FILE_READER, str(seeded), "3"],
                             stdout=subprocess.PIPE, text=True)
    assert brief.stdout and brief.stdout.readline().strip() == "open"
    outcomes = run_refresh(Settings(warehouse=seeded), source_names=["vastai"], offline=True)
    assert [o.ok for o in outcomes] == [True]
    assert brief.poll() is not None, "the refresh wrote only once the reader had closed"

    # One that stays: the refresh gives up after the wait, naming the reader and its PID.
    monkeypatch.setattr(connection, "READER_WAIT_S", 1.0)
    stays = subprocess.Popen([sys.executable, "-c", FILE_READER, str(seeded), "120"],
                             stdout=subprocess.PIPE, text=True)
    try:
        assert stays.stdout and stays.stdout.readline().strip() == "open"
        with pytest.raises(WarehouseBusy) as busy:
            run_refresh(Settings(warehouse=seeded), source_names=["vastai"], offline=True)
        message = str(busy.value)
        assert f"open read-only by a reader (pid {stays.pid}, " in message, message
        assert str(read_path(seeded)) in message and "\n" not in message
        assert counts(seeded)[2] == 0  # meanwhile, readers of the snapshot are unaffected
    finally:
        stays.kill()
        stays.wait(timeout=30)


def test_a_second_writer_is_told_which_command_holds_the_warehouse(seeded: Path) -> None:
    holder = subprocess.Popen(
        [sys.executable, "-c", "import sys, time\nfrom warehouse.lock import refresh_lock\n"
         "with refresh_lock(sys.argv[1]):\n    print('held', flush=True)\n    time.sleep(120)",
         str(seeded)], stdout=subprocess.PIPE, text=True, cwd=REPO, env=ENV)
    try:
        assert holder.stdout and holder.stdout.readline().strip() == "held"
        with pytest.raises(WarehouseBusy) as busy, open_warehouse(seeded, command="reparse"):
            pass
        assert f"another refresh (pid {holder.pid} on " in str(busy.value)
        assert "this reparse stops without touching it" in str(busy.value)
        assert counts(seeded)[0] > 0  # reading goes on
    finally:
        holder.kill()
        holder.wait(timeout=30)


HOLDER = textwrap.dedent("""
    import sys, time, duckdb
    con = duckdb.connect(sys.argv[1], read_only=True)
    print("holding", flush=True)
    sys.stdin.readline()
""")


def test_old_snapshots_go_once_no_reader_holds_them(seeded: Path) -> None:
    held = current(seeded)
    assert held is not None
    reader = subprocess.Popen([sys.executable, "-c", HOLDER, str(held.path)],
                              stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True)
    assert reader.stdin and reader.stdout and reader.stdout.readline().strip() == "holding"
    for _ in range(KEEP + 2):
        with open_warehouse(seeded):
            pass
    names = sorted(p.name for p in read_dir(seeded).glob("g*.duckdb"))
    assert held.path.name in names and len(names) == KEEP + 1, names
    reader.stdin.write("done\n")
    reader.stdin.flush()
    reader.wait(timeout=30)
    with open_warehouse(seeded):
        pass
    names = sorted(p.name for p in read_dir(seeded).glob("g*.duckdb"))
    assert held.path.name not in names and len(names) == KEEP, names
    newest = current(seeded)
    assert newest is not None and newest.matches(seeded)
    con = duckdb.connect(str(read_path(seeded)), read_only=True)  # what outside tools open
    try:
        assert con.execute("SELECT count(*) FROM latest_price").fetchone()[0] > 0  # type: ignore[index]
    finally:
        con.close()


def test_a_holder_gone_before_it_could_be_named_is_looked_at_again(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    # DuckDB named a holder that had closed by the time the lock table was read (role None):
    # the writer opens again instead of failing at once; a holder never named fails in time.
    real_open, calls = connection._open, []

    def closes_after_one_look(*args: object, **kwargs: object) -> duckdb.DuckDBPyConnection:
        calls.append(1)
        if len(calls) == 1:
            raise WarehouseBusy("the warehouse is locked by process 1 (python)", None)
        return real_open(*args, **kwargs)  # type: ignore[arg-type]

    monkeypatch.setattr(connection, "_open", closes_after_one_look)
    connection.connect(tmp_path / "a.duckdb").close()
    assert len(calls) == 2

    def never_named(*args: object, **kwargs: object) -> duckdb.DuckDBPyConnection:
        raise WarehouseBusy("the warehouse is locked by process 1 (python)", None)

    monkeypatch.setattr(connection, "_open", never_named)
    monkeypatch.setattr(connection, "GONE_HOLDER_WAIT_S", 0.5)
    started = time.monotonic()
    with pytest.raises(WarehouseBusy):
        connection.connect(tmp_path / "b.duckdb")
    assert 0.5 <= time.monotonic() - started < 5
