"""Issue 27: the warehouse on DuckLake (PostgreSQL catalog, S3 data), written by several workers.

A real PostgreSQL cluster and a moto S3 server run on 127.0.0.1 for this module (tests/
lake_servers.py); the tests skip, saying why, where either cannot start. Every extension is
loaded from its wheel: autoinstall is off, and the machine has no network anyway.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import textwrap
import time
from collections.abc import Iterator
from pathlib import Path

import duckdb
import pytest
from typer.testing import CliRunner, Result

from flows.refresh_work import refresh_now
from gpuprices.cli import app
from tests.lake_servers import (
    MotoServer,
    PostgresServer,
    ServerUnavailable,
    moto_server,
    postgres_server,
)
from warehouse.connection import connect_read_only
from warehouse.lake import publish

REPO = Path(__file__).resolve().parents[2]
SOURCES = ["lambda", "vastai", "runpod", "modal", "digitalocean"]
pytestmark = pytest.mark.slow


@pytest.fixture(scope="module")
def pg() -> Iterator[PostgresServer]:
    try:
        with postgres_server() as server:
            yield server
    except ServerUnavailable as exc:
        pytest.skip(str(exc))


@pytest.fixture(scope="module")
def s3() -> Iterator[MotoServer]:
    try:
        with moto_server() as server:
            yield server
    except ServerUnavailable as exc:
        pytest.skip(str(exc))


@pytest.fixture
def lake(pg: PostgresServer, s3: MotoServer, tmp_path: Path,
         monkeypatch: pytest.MonkeyPatch) -> tuple[str, str]:
    """A new lake: catalog in a new PostgreSQL database, data in a new bucket; the process
    environment set as a worker's would be. Returns (lake URL, bucket)."""
    bucket = s3.create_bucket()
    for name, value in {**s3.env(), "GPUPRICES_ARCHIVE": str(tmp_path / "raw"),
                        "GPUPRICES_LAKE_DATA_PATH": f"s3://{bucket}/lake/"}.items():
        monkeypatch.setenv(name, value)
    return f"ducklake:postgres:{pg.dsn(pg.create_database())}", bucket


def rows(con: duckdb.DuckDBPyConnection, sql: str) -> list[tuple[object, ...]]:
    return con.execute(sql).fetchall()


LATEST = ("SELECT source, provider, offering, region, pricing, price_usd_per_hour "
          "FROM latest_price ORDER BY ALL")


def integrity(url: str) -> dict[str, int]:
    """Open the lake and check that nothing is half-written: every capture's observations are
    exactly what its one success run says it stored, and the summaries follow them."""
    con = connect_read_only(url)
    try:
        broken = rows(con, """
            WITH stored AS (SELECT capture_id, count(*) AS n FROM observation GROUP BY 1),
                 runs AS (SELECT capture_id, count(*) AS runs, sum(rows_stored) AS n
                          FROM scrape_run WHERE status = 'success' GROUP BY 1)
            SELECT * FROM stored FULL JOIN runs USING (capture_id)
            WHERE runs.runs IS DISTINCT FROM 1 OR stored.n IS DISTINCT FROM runs.n""")
        assert broken == [], broken
        orphans = rows(con, "SELECT count(*) FROM latest_observation l ANTI JOIN observation o "
                            "USING (capture_id, offering, region, pricing, observed_at)")
        assert orphans == [(0,)]
        return {"observations": rows(con, "SELECT count(*) FROM observation")[0][0],
                "captures": rows(con, "SELECT count(DISTINCT capture_id) FROM observation")[0][0]}
    finally:
        con.close()


def test_refresh_into_a_postgres_s3_lake_reads_like_the_file(
        lake: tuple[str, str], s3: MotoServer, tmp_path: Path) -> None:
    url, bucket = lake
    file = tmp_path / "file" / "gpu.duckdb"
    assert all(o.ok for o in refresh_now(SOURCES, True, url).outcomes)
    assert all(o.ok for o in refresh_now(SOURCES, True, str(file)).outcomes)
    first = integrity(url)
    again = refresh_now(SOURCES, True, url)  # the same payloads: re-confirmed, not copied
    assert {o.status for o in again.outcomes} == {"unchanged"}
    assert integrity(url) == first
    lake_con, file_con = connect_read_only(url), connect_read_only(file)
    try:
        assert rows(lake_con, LATEST) == rows(file_con, LATEST) and len(rows(file_con, LATEST))
        # The Parquet files are in the bucket; the key and secret are nowhere in the catalog.
        assert any(key.endswith(".parquet") for key, _ in s3.objects(bucket))
        settings = rows(lake_con, "SELECT * FROM ducklake_settings('lake')")
        assert settings[0][0] == "postgres" and f"s3://{bucket}/lake/" in str(settings)
    finally:
        lake_con.close()
        file_con.close()
    con = duckdb.connect()
    try:
        from warehouse.extensions import load_extension

        load_extension(con, "postgres_scanner")
        con.execute(f"ATTACH '{url.removeprefix('ducklake:postgres:')}' AS pg "
                    "(TYPE postgres, READ_ONLY)")
        tables = rows(con, "SELECT schema_name, table_name FROM duckdb_tables() "
                           "WHERE database_name = 'pg' AND schema_name = 'public'")
        assert any(name == "ducklake_snapshot" for _, name in tables)
        text = " ".join(str(r) for schema, table in tables
                        for r in rows(con, f'SELECT * FROM pg."{schema}"."{table}"'))
        assert os.environ["AWS_SECRET_ACCESS_KEY"] not in text
    finally:
        con.close()
    runner = CliRunner()
    for command in (["cheapest", "-f", "csv"], ["market", "-f", "csv"]):
        shown = runner.invoke(app, [*command, "-w", url])
        assert shown.exit_code == 0, shown.output
        assert len(shown.output.splitlines()) > 2


def test_publish_through_postgres_and_s3_and_repeat_publishes_add_nothing(
        lake: tuple[str, str], tmp_path: Path) -> None:
    url, _ = lake
    file = tmp_path / "gpu.duckdb"
    refresh_now(SOURCES, True, str(file))
    first = publish(file, url)
    assert first.tables["observation"] > 0 and "observation" in first.recreated
    con = duckdb.connect()
    from warehouse.lake import _lake_counts, attach_lake

    try:
        attach_lake(con, url)
        before = _lake_counts(con)
    finally:
        con.close()
    for _ in range(5):
        again = publish(file, url)
        assert (again.captures_copied, again.recreated, again.replaced) == (0, (), ())
    con = duckdb.connect()
    try:
        attach_lake(con, url)
        assert _lake_counts(con) == before  # no snapshot, no file
    finally:
        con.close()
    reader = connect_read_only(url)
    try:
        assert rows(reader, "SELECT count(*) FROM observation")[0][0] == \
            first.tables["observation"]
    finally:
        reader.close()


WORKER = textwrap.dedent("""
    import os, sys, time
    sys.path.insert(0, {repo!r})
    from flows.refresh_work import refresh_now
    go = float(sys.argv[1])
    time.sleep(max(0.0, go - time.time()))
    result = refresh_now({sources!r}, True, {url!r})
    from warehouse.transaction import conflicts_seen
    print("STATUS", ",".join(sorted(o.status for o in result.outcomes)), conflicts_seen())
""")


def test_two_writers_landing_at_once_land_each_capture_once(lake: tuple[str, str]) -> None:
    url, _ = lake
    refresh_now(["lambda"], True, url)  # the lake exists (schema made) before the race
    script = WORKER.format(repo=str(REPO), sources=SOURCES, url=url)
    go = time.time() + 8  # both have imported everything by then
    workers = [subprocess.Popen([sys.executable, "-c", script, str(go)], stdout=subprocess.PIPE,
                                stderr=subprocess.PIPE, text=True, env=dict(os.environ))
               for _ in range(2)]
    outputs = [w.communicate(timeout=300) for w in workers]
    assert all(w.returncode == 0 for w in workers), [o[1][-2000:] for o in outputs]
    statuses = [line.split()[1].split(",") for out, _ in outputs for line in out.splitlines()
                if line.startswith("STATUS")]
    # Each capture landed by exactly one of them; the other re-confirmed it.
    assert sorted(statuses[0] + statuses[1]).count("success") == len(SOURCES) - 1
    counts = integrity(url)
    assert counts["captures"] == len(SOURCES)


KILLER = textwrap.dedent("""
    import os, signal, sys, threading
    from contextlib import contextmanager
    sys.path.insert(0, {repo!r})
    import warehouse.append
    from warehouse.transaction import transaction
    delay, landings = float(sys.argv[1]), [0]

    @contextmanager
    def dies_in_commit(con):
        with transaction(con):
            yield
            landings[0] += 1
            if landings[0] == 3:  # the third landing: killed while its COMMIT runs
                threading.Timer(delay, os.kill, (os.getpid(), signal.SIGKILL)).start()
    warehouse.append.transaction = dies_in_commit
    from flows.refresh_work import refresh_now
    refresh_now({sources!r}, True, {url!r})
    print("NOT KILLED")
""")


def test_a_writer_killed_mid_commit_leaves_nothing_half_written(lake: tuple[str, str]) -> None:
    url, _ = lake
    refresh_now(["lambda"], True, url)
    script = KILLER.format(repo=str(REPO), sources=SOURCES[1:], url=url)
    for delay in ("0", "0.005", "0.02", "0.08"):
        done = subprocess.run([sys.executable, "-c", script, delay], capture_output=True,
                              text=True, timeout=300, env=dict(os.environ))
        assert done.returncode == -9, (delay, done.stdout, done.stderr[-2000:])
        integrity(url)  # the lake opens; each capture is whole or absent
    finished = refresh_now(SOURCES, True, url)  # a new run lands what was missing, once
    assert all(o.ok for o in finished.outcomes)
    assert integrity(url)["captures"] == len(SOURCES)


LOSER = textwrap.dedent("""
    import json, os, sys
    sys.path.insert(0, {repo!r})
    import pytest
    from warehouse.connection import open_warehouse
    from warehouse.transaction import LakeConflict, transaction
    url = {url!r}

    def threads():
        return len(os.listdir(f"/proc/{{os.getpid()}}/task"))

    def lose_a_commit(plain_close=False):
        # two writers on their own DuckDB instances; the second's commit loses to the first's
        with open_warehouse(url) as first, open_warehouse(url) as second:
            with pytest.raises(LakeConflict), transaction(second):
                with transaction(first):
                    pass
            if plain_close:  # what close_lake does not do: detach the lake first
                second.execute("USE memory")
                second.close()

    lose_a_commit()  # once first: whatever an extension starts once per process
    before = threads()
    for _ in range(3):
        lose_a_commit()
    after = threads()
    for _ in range(3):
        lose_a_commit(plain_close=True)
    print(json.dumps({{"before": before, "after": after, "plain": threads()}}))
""")


def test_a_writer_that_lost_a_commit_leaves_no_thread_behind(lake: tuple[str, str]) -> None:
    """A DuckLake commit that loses to another writer kept the whole DuckDB instance of its
    connection alive after close (DuckDB 1.5.5: its scheduler and PostgreSQL pool threads,
    ~13 MiB): a worker grew by a thread pair per batch run. Closing detaches the lake first."""
    url, _ = lake
    refresh_now(["lambda"], True, url)  # the lake exists (schema made)
    done = subprocess.run([sys.executable, "-c", LOSER.format(repo=str(REPO), url=url)],
                          capture_output=True, text=True, timeout=300, env=dict(os.environ))
    assert done.returncode == 0, done.stderr[-3000:]
    counts = json.loads(done.stdout.strip().splitlines()[-1])
    assert counts["after"] == counts["before"], counts
    # The engine's side: closed without the detach, each loser stays (when this fails, DuckDB
    # frees such an instance itself and close_lake's DETACH is no longer needed).
    assert counts["plain"] > counts["after"], counts


def one_line(result: Result) -> str:
    assert result.exit_code == 1, result.output
    lines = [line for line in result.output.splitlines() if line.strip()]
    errors = [line for line in lines if line.startswith("error: ")]
    assert len(errors) == 1 and "Traceback" not in result.output, result.output
    return errors[0]


def test_every_misconfiguration_is_one_line_and_exit_1(
        pg: PostgresServer, s3: MotoServer, tmp_path: Path,
        monkeypatch: pytest.MonkeyPatch) -> None:
    runner = CliRunner()
    monkeypatch.setenv("GPUPRICES_ARCHIVE", str(tmp_path / "raw"))
    monkeypatch.delenv("GPUPRICES_LAKE_DATA_PATH", raising=False)
    for name in ("AWS_ACCESS_KEY_ID", "AWS_SECRET_ACCESS_KEY", "AWS_ENDPOINT_URL"):
        monkeypatch.delenv(name, raising=False)
    new_db = f"ducklake:postgres:{pg.dsn(pg.create_database())}"
    closed = "ducklake:postgres:host=127.0.0.1 port=1 user=x dbname=y password=hunter2-secret"
    cases = {
        "does not exist yet and has no data path": ["refresh", "--offline", "-s", "lambda",
                                                    "-w", new_db],
        "unknown DuckLake catalog 'mysql'": ["cheapest", "-w", "ducklake:mysql:host=x"],
        "is not a DuckLake URL": ["publish", "--lake", "iceberg:/x", "-w",
                                  str(tmp_path / "none.duckdb")],
        "cannot reach the catalog": ["cheapest", "-w", closed],
        "MotherDuck is not supported": ["refresh", "--offline", "-w", "md:prices"],
        "AWS_ACCESS_KEY_ID": ["refresh", "--offline", "-s", "lambda", "-w",
                              f"ducklake:sqlite:{tmp_path / 'c.sqlite'}"],
    }
    for words, args in cases.items():
        env = {"GPUPRICES_LAKE_DATA_PATH": "s3://bucket/x/"} if words == "AWS_ACCESS_KEY_ID" \
            else None
        line = one_line(runner.invoke(app, args, env=env))
        assert words in line and "hunter2-secret" not in line, line
    # publish while another process reads a DuckDB-file catalog
    file = tmp_path / "w.duckdb"
    refresh_now(["lambda"], True, str(file))
    catalog = f"ducklake:{tmp_path / 'cat.ducklake'}"
    publish(file, catalog)
    holder = subprocess.Popen([sys.executable, "-c", textwrap.dedent(f"""
        import sys, time
        sys.path.insert(0, {str(REPO)!r})
        from warehouse.lake import open_lake
        con = open_lake({catalog!r})
        print("open", flush=True)
        time.sleep(60)
    """)], stdout=subprocess.PIPE, text=True)
    try:
        assert holder.stdout is not None and holder.stdout.readline().strip() == "open"
        line = one_line(runner.invoke(app, ["publish", "--lake", catalog, "-w", str(file)]))
        assert f"held by process {holder.pid}" in line, line
    finally:
        holder.kill()
        holder.wait()


def test_the_raw_archive_on_s3_is_written_and_read_back(
        lake: tuple[str, str], s3: MotoServer, monkeypatch: pytest.MonkeyPatch) -> None:
    url, bucket = lake
    monkeypatch.setenv("GPUPRICES_ARCHIVE", f"s3://{bucket}/raw")
    assert all(o.ok for o in refresh_now(SOURCES[:2], True, url).outcomes)
    archived = [key for key, size in s3.objects(bucket) if key.startswith("raw/") and size]
    con = connect_read_only(url)
    try:
        paths = {f"raw/{p}" for (p,) in rows(con, "SELECT archive_path FROM raw_capture "
                                                  "WHERE source IN ('lambda', 'vastai')")}
    finally:
        con.close()
    assert paths and paths <= set(archived)
    shown = CliRunner().invoke(app, ["reparse", "-w", url, "-f", "csv"])
    assert shown.exit_code == 0, shown.output
    assert "reparsed" in shown.output and "archive file missing" not in shown.output


def test_workers_opening_a_new_postgres_lake_at_once_all_get_it(
        pg: PostgresServer, tmp_path: Path) -> None:
    """The loser of PostgreSQL's CREATE TABLE race ('already exists', a unique-key error)
    attaches the winner's catalog instead of failing its whole batch."""
    child = textwrap.dedent(f"""
        import sys
        sys.path.insert(0, {str(REPO)!r})
        from warehouse.lake import lake_connection
        lake_connection(sys.argv[1], sys.argv[2], read_only=False).close()
    """)
    for _ in range(3):  # a fresh catalog each time: the race is at creation only
        url = f"ducklake:postgres:{pg.dsn(pg.create_database())}"
        procs = [subprocess.Popen([sys.executable, "-c", child, url, str(tmp_path / "data")],
                                  stderr=subprocess.PIPE, text=True) for _ in range(4)]
        errors = [p.communicate(timeout=120)[1] for p in procs]
        assert all(p.returncode == 0 for p in procs), [e[-400:] for e in errors if e]
