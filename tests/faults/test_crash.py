"""Crash safety: kill -9 in the middle of an append, two refreshes at once, an old schema."""

from __future__ import annotations

import os
import random
import signal
import subprocess
import sys
import textwrap
import time
from datetime import UTC, datetime
from pathlib import Path

import duckdb
import polars as pl
import pytest

from schemas.observation import to_observations, validate
from scrapers.registry import get_source
from tests.conftest import REPO
from warehouse.connection import LATEST_SCHEMA_VERSION, MIGRATIONS_DIR, connect, schema_version
from warehouse.lock import refresh_lock

KILLS = int(os.environ.get("GPUPRICES_CRASH_KILLS", "20"))
BATCH_ROWS = 20_000  # big enough that an append takes a while to kill in the middle of

# Appends one big batch per run id given on stdin; says "appending <run_id>" just before.
APPENDER = textwrap.dedent("""
    import hashlib, sys
    from datetime import datetime, UTC
    import polars as pl
    from warehouse.append import ScrapeRecord, append_batch
    from warehouse.connection import connect
    batch = pl.read_parquet(sys.argv[2])
    sys.stdin.readline()  # imported and waiting: connect only once the previous one is dead
    con = connect(sys.argv[1])
    print("ready", flush=True)
    for line in sys.stdin:
        run_id = line.strip()
        # a new payload each time: a capture already stored is never stored twice
        capture = hashlib.sha256(run_id.encode()).hexdigest()
        good = batch.with_columns(pl.lit(run_id).alias("run_id"),
                                  pl.lit(capture).alias("capture_id"))
        # its own source name: 20k-row runs of vastai would make the real one look shrunk
        record = ScrapeRecord(run_id=run_id, source="vastai-bulk", started_at=datetime.now(UTC),
                              status="success", capture_id=good["capture_id"][0],
                              rows_parsed=good.height, rows_stored=good.height)
        print("appending", run_id, flush=True)
        append_batch(con, record, good=good)
        print("done", run_id, flush=True)
""")


def child_env() -> dict[str, str]:
    return {**os.environ, "PYTHONPATH": str(REPO)}


def synthetic_batch(path: Path) -> int:
    """The vastai example's valid observations repeated to BATCH_ROWS rows (as parquet)."""
    source = get_source("vastai")
    raw = source.example_capture(datetime(2025, 6, 12, tzinfo=UTC))
    good = validate(to_observations(source.parse(raw), raw, "template")).good
    copies = BATCH_ROWS // good.height + 1
    frame = pl.concat([good.with_columns(pl.col("offering") + f"-{i}") for i in range(copies)])
    frame.head(BATCH_ROWS).write_parquet(path)
    return min(BATCH_ROWS, frame.height)


def counts_by_run(path: Path) -> tuple[dict[str, int], dict[str, int]]:
    con = duckdb.connect(str(path), read_only=True)
    try:
        observed = dict(con.execute(
            "SELECT run_id, count(*) FROM observation GROUP BY run_id").fetchall())
        recorded = dict(con.execute(
            "SELECT run_id, rows_stored FROM scrape_run WHERE status = 'success'").fetchall())
    finally:
        con.close()
    return observed, recorded


@pytest.mark.timeout(600)
def test_kill_9_mid_append_leaves_whole_batch_or_none(tmp_path: Path) -> None:
    warehouse = tmp_path / "gpu_prices.duckdb"
    connect(warehouse).close()
    batch_file = tmp_path / "batch.parquet"
    rows = synthetic_batch(batch_file)
    rng = random.Random(int(os.environ.get("GPUPRICES_CRASH_SEED", "6")))
    outcomes = {"none": 0, "whole": 0, "after commit": 0}
    append_s = 0.5  # refined from the first run that finishes
    def spawn() -> subprocess.Popen[str]:
        return subprocess.Popen(
            [sys.executable, "-c", APPENDER, str(warehouse), str(batch_file)],
            stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True, cwd=REPO, env=child_env())

    upcoming = spawn()
    for kill in range(KILLS):
        child, upcoming = upcoming, (spawn() if kill + 1 < KILLS else None)
        assert child.stdin and child.stdout
        child.stdin.write("go\n")
        child.stdin.flush()
        assert child.stdout.readline().strip() == "ready"
        run_id = f"crash-{kill}"
        child.stdin.write(run_id + "\n")
        child.stdin.flush()
        assert child.stdout.readline().startswith("appending")
        started = time.monotonic()
        if kill < 2:  # let two appends finish to aim the kills (the first, on an empty
            # table, is several times faster than the rest)
            assert child.stdout.readline().startswith("done")
            append_s = max(time.monotonic() - started, 0.05)
        else:
            time.sleep(rng.uniform(0, append_s * 1.5))
        child.send_signal(signal.SIGKILL)
        child.wait(timeout=30)
        committed = kill < 2 or "done" in child.stdout.read()
        observed, recorded = counts_by_run(warehouse)  # reopening replays the WAL
        got = observed.get(run_id, 0)
        assert got in (0, rows), f"kill {kill}: {got} of {rows} rows survived"
        if committed:
            assert got == rows, f"kill {kill}: a committed batch was lost"
        assert recorded.get(run_id, 0) == got, "the run record and the rows agree"
        outcomes["whole" if got else "none"] += 1
        outcomes["after commit"] += committed
        for other, count in observed.items():
            assert count == rows, f"{other}: an earlier batch changed after a crash"
    print(f"\n{KILLS} kill -9 during appends of {rows} rows (~{append_s:.2f} s each): "
          f"{outcomes['whole']} whole batches ({outcomes['after commit']} killed after the "
          f"commit), {outcomes['none']} none, 0 partial")
    assert outcomes["none"] > 0, "no kill landed inside an append: the test aims badly"

    # The next run completes on the same file.
    from contract.settings import Settings
    from flows.refresh import run_refresh

    done = run_refresh(Settings(warehouse=warehouse), source_names=["vastai"], offline=True)
    assert [o.ok for o in done] == [True], done


REFRESHER = textwrap.dedent("""
    import sys
    from pathlib import Path
    from flows.refresh import run_refresh
    from contract.settings import Settings
    from warehouse.connection import WarehouseBusy
    try:
        outcomes = run_refresh(Settings(warehouse=Path(sys.argv[1])), offline=True,
                               lock_wait_s=float(sys.argv[2]))
    except WarehouseBusy as busy:
        print(f"busy: {busy}", file=sys.stderr)
        sys.exit(3)
    print(",".join(sorted({o.status for o in outcomes})))
""")


def start_refresh(warehouse: Path, wait_s: float) -> subprocess.Popen[str]:
    return subprocess.Popen([sys.executable, "-c", REFRESHER, str(warehouse), str(wait_s)],
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, cwd=REPO,
                            env=child_env())


def one_night_rows(tmp_path: Path) -> int:
    from contract.settings import Settings
    from flows.refresh import run_refresh

    return sum(o.rows_stored for o in run_refresh(
        Settings(warehouse=tmp_path / "single" / "w.duckdb"), offline=True))


def observation_count(path: Path) -> int:
    con = duckdb.connect(str(path), read_only=True)
    try:
        row = con.execute("SELECT count(*) FROM observation").fetchone()
        return int(row[0]) if row else 0
    finally:
        con.close()


@pytest.mark.timeout(300)
def test_a_second_refresh_stops_with_a_clear_message_or_waits(tmp_path: Path) -> None:
    warehouse = tmp_path / "wh" / "gpu_prices.duckdb"
    expected = one_night_rows(tmp_path)
    # A refresh holds the lock: another one stops at once, saying why, touching nothing.
    with refresh_lock(warehouse):
        busy = start_refresh(warehouse, 0)
        _, err = busy.communicate(timeout=120)
        assert busy.returncode == 3, err
        assert "another refresh" in err and "stops without touching it" in err
        waiter = start_refresh(warehouse, 60)  # this one waits for the lock instead
        time.sleep(1.0)
        assert waiter.poll() is None, "it waits while the lock is held"
    _, err = waiter.communicate(timeout=180)
    assert waiter.returncode == 0, err
    assert observation_count(warehouse) == expected

    # Two started at once on a fresh file: one lands, the other stops or finds it unchanged.
    racing = tmp_path / "race" / "gpu_prices.duckdb"
    pair = [start_refresh(racing, 0), start_refresh(racing, 0)]
    results = [(p.wait(timeout=180), *p.communicate()) for p in pair]
    codes = sorted(r[0] for r in results)
    assert codes in ([0, 0], [0, 3]), results
    assert observation_count(racing) == expected, "no duplicate rows"
    statuses = {r[1].strip() for r in results if r[0] == 0}
    assert statuses <= {"success", "unchanged"}, statuses


def test_a_first_version_warehouse_is_migrated_without_loss(tmp_path: Path) -> None:
    path = tmp_path / "v1.duckdb"
    source = get_source("vastai")
    raw = source.example_capture(datetime(2025, 6, 12, tzinfo=UTC))
    good = validate(to_observations(source.parse(raw), raw, "old-run")).good
    con = duckdb.connect(str(path))
    con.execute("CREATE TABLE schema_version (version INTEGER PRIMARY KEY, "
                "applied_at TIMESTAMPTZ NOT NULL, description VARCHAR)")
    con.execute((MIGRATIONS_DIR / "001_initial.sql").read_text(encoding="utf-8"))
    con.execute("INSERT INTO schema_version VALUES (1, now(), '001_initial')")
    con.execute("INSERT INTO source VALUES ('vastai', 'vastai', 'api', ?, false)", [source.url])
    con.execute("INSERT INTO refresh_run VALUES ('old-run', 'refresh', ?, ?, false, "
                "'completed', NULL)", [raw.fetched_at, raw.fetched_at])
    con.execute("INSERT INTO raw_capture VALUES (?, 'vastai', ?, ?, 'application/json', ?, ?)",
                [raw.capture_id, raw.url, raw.fetched_at, len(raw.body), "ab/x.gz"])
    con.execute("INSERT INTO scrape_run VALUES ('old-run', 'vastai', ?, ?, ?, 'success', 1, ?, "
                "?, ?, 0, [], NULL, NULL)",
                [raw.fetched_at, raw.fetched_at, raw.fetched_at, raw.capture_id, good.height,
                 good.height])
    v1_columns = [row[0] for row in con.execute(
        "SELECT column_name FROM information_schema.columns WHERE table_name = 'observation' "
        "ORDER BY ordinal_position").fetchall()]
    good = good.select(v1_columns)  # the rows as the first version stored them
    con.register("good", good.to_arrow())
    con.execute("INSERT INTO observation BY NAME SELECT * FROM good")
    before = con.execute("SELECT * FROM observation ORDER BY ALL").fetchall()
    con.close()
    assert LATEST_SCHEMA_VERSION >= 1

    migrated = connect(path)
    try:
        assert schema_version(migrated) == LATEST_SCHEMA_VERSION
        columns = ", ".join(f'"{c}"' for c in good.columns)
        after = migrated.execute(f"SELECT {columns} FROM observation ORDER BY ALL").fetchall()
        assert after == before, "every observation survives the migration unchanged"
        runs = migrated.execute("SELECT run_id, status, rows_stored FROM scrape_run").fetchall()
        assert runs == [("old-run", "success", good.height)]
        latest = migrated.execute("SELECT count(*) FROM latest_price_all_sources").fetchone()
        assert latest == (good.height,), "the views see the migrated rows"
    finally:
        migrated.close()
    connect(path).close()  # opening again applies nothing and loses nothing
    con = duckdb.connect(str(path), read_only=True)
    try:
        assert con.execute("SELECT count(*) FROM observation").fetchone() == (len(before),)
    finally:
        con.close()
