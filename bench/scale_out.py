"""Scale-out: N workers refresh many sources into a PostgreSQL + S3 lake, then the read side.

A local HTTP server (127.0.0.1) plays `--sources` synthetic sources shaped like Lambda's
instance-types API (10-30 instance types, a few regions each; each cycle a source changes
its prices with some chance), with failures (HTTP 503, ~3 %) and slow answers (0.3-1.5 s,
~5 %). `--workers` worker processes take batches of `--batch` sources from a queue and run
each batch exactly as a `refresh-batch` flow run does (flows.refresh_work.run_refresh: fetch
with retries, parse, validate, screens, land with the day's derived tables), into one lake
(ducklake:postgres catalog in a real PostgreSQL on 127.0.0.1, Parquet data in a moto S3
bucket). Every `--cycles` cycle is one 15-minute tick of a compressed day: the next cycle's
batches are queued when the previous cycle's are done. Then: lost or duplicated rows (every
capture landed once, with the rows its run says it stored), commit conflicts retried, catalog
and bucket size, and the lake's upkeep.

Read side: `cheapest`, `market` and `report` (CLI processes, median of 3) against the lake
and against a DuckDB file holding the same tables, as ratios.

    python -m bench.scale_out [--size small] [--sources 100 --workers 3 --cycles 96 --batch 10]
                              [--minutes M]  (no cycle started after M minutes)
"""

from __future__ import annotations

import argparse
import json
import multiprocessing as mp
import os
import random
import shutil
import statistics
import subprocess
import sys
import tempfile
import threading
import time
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any, ClassVar

from bench._common import REPO, cannot_run, header

GPUS = [("A100", 80, "SXM4"), ("H100", 80, "SXM5"), ("A10", 24, "PCIe"), ("L40S", 48, ""),
        ("RTX 6000", 24, ""), ("GH200", 96, ""), ("A6000", 48, ""), ("V100", 16, "")]
REGIONS = ["us-east-1", "us-west-2", "eu-central-1", "asia-south-1"]
SIZES = {"small": {"sources": 12, "workers": 2, "cycles": 3, "batch": 4},
         "full": {"sources": 100, "workers": 3, "cycles": 96, "batch": 10}}


def payload(source: int, cycle: int) -> bytes:
    """A Lambda-shaped answer; its prices move at the cycles where the source re-prices."""
    rng = random.Random(source)
    moves = sum(1 for c in range(cycle + 1) if random.Random(source * 1000 + c).random() < 0.15)
    data = {}
    for n in range(rng.randint(10, 30)):
        gpu, memory, variant = rng.choice(GPUS)
        count = rng.choice([1, 2, 4, 8])
        cents = int(rng.uniform(40, 400) * count * (1 + 0.01 * moves))
        name = f"gpu_{count}x_{gpu.lower().replace(' ', '')}_{n}"
        data[name] = {"instance_type": {
            "name": name, "price_cents_per_hour": cents,
            "description": f"{count}x {gpu} ({memory} GB {variant})".replace(" )", ")"),
            "specs": {"vcpus": 8 * count, "memory_gib": 64 * count, "gpus": count}},
            "regions_with_capacity_available": [{"name": r} for r in rng.sample(REGIONS, 2)]}
    return json.dumps({"data": data}).encode()


class Handler(BaseHTTPRequestHandler):
    cycle: ClassVar[list[int]] = [0]  # the cycle being served (set by the driver)
    served: ClassVar[dict[str, int]] = {"ok": 0, "503": 0, "slow": 0}

    def do_GET(self) -> None:
        source = int(self.path.strip("/").split("/")[0].removeprefix("syn"))
        luck = random.Random(f"{source}-{self.cycle[0]}-{time.monotonic_ns()}").random()
        if luck < 0.03:
            self.served["503"] += 1
            self.send_response(503)
            self.end_headers()
            return
        if luck < 0.08:
            self.served["slow"] += 1
            time.sleep(0.3 + 1.2 * (luck - 0.03) / 0.05)
        self.served["ok"] += 1
        body = payload(source, self.cycle[0])
        self.send_response(200)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)

    def log_message(self, *args: Any) -> None:
        return


def synthetic_sources(count: int, base: str) -> dict[str, Any]:
    from scrapers import lambda_api
    from scrapers.base import SourceDef
    from scrapers.http import request

    def source(i: int) -> SourceDef:
        url = f"{base}/syn{i:03d}/api/v1/instance-types"

        def fetch(client: Any, settings: Any) -> Any:
            return request(client, settings, f"syn{i:03d}", "GET", url)

        return SourceDef(name=f"syn{i:03d}", provider=f"cloud{i:03d}", kind="api", url=url,
                         example=lambda_api.SOURCE.example, example_as_of="2026-02-11",
                         fetch_fn=fetch, parse_fn=lambda_api.parse)
    return {f"syn{i:03d}": source(i) for i in range(count)}


def worker(jobs: Any, results: Any, url: str, base: str, count: int) -> None:
    """One worker process: batch runs from the queue until None."""
    import flows.refresh_work as work
    from contract.settings import load_settings
    from warehouse.transaction import conflicts_seen

    sources = synthetic_sources(count, base)
    work.all_sources = lambda: sources  # the synthetic sources instead of the registry's
    work.resolve_names = list
    work.refresh_rates = lambda *a, **k: None  # no ECB file on the local server
    settings = load_settings(warehouse=url)
    while (job := jobs.get()) is not None:
        cycle, batch = job
        started = time.monotonic()
        outcomes = work.run_refresh(settings, source_names=batch, run_id=f"c{cycle}-{batch[0]}",
                                    lock_wait_s=600)
        results.put({"pid": os.getpid(), "cycle": cycle, "seconds": time.monotonic() - started,
                     "conflicts": conflicts_seen(),
                     "outcomes": [(o.source, o.status, o.rows_stored) for o in outcomes]})


def _size_of(path: Path) -> int:
    return sum(f.stat().st_size for f in path.rglob("*") if f.is_file())


def _cli_times(args: list[str], env: dict[str, str], repeat: int = 3) -> float:
    times = []
    for _ in range(repeat):
        start = time.perf_counter()
        done = subprocess.run([sys.executable, "-m", "gpuprices.cli", *args], env=env,
                              cwd=env["BENCH_CWD"], capture_output=True, text=True, check=False)
        times.append(time.perf_counter() - start)
        if done.returncode != 0:
            raise RuntimeError(f"{' '.join(args[:1])}: {done.stderr.strip()[-300:]}")
    return statistics.median(times)


def copy_to_file(url: str, file: Path) -> None:
    """The same tables in a DuckDB file (the local baseline of the read side)."""
    import duckdb

    from warehouse.connection import connect
    from warehouse.lake import LAKE_ALIAS, attach_lake

    con = duckdb.connect(str(file))
    try:
        attach_lake(con, url, read_only=True)
        tables = [r[0] for r in con.execute(
            "SELECT table_name FROM duckdb_tables() WHERE database_name = ? AND table_name "
            "<> 'write_token'", [LAKE_ALIAS]).fetchall()]
        for table in tables:
            con.execute(f'CREATE TABLE main."{table}" AS SELECT * FROM {LAKE_ALIAS}."{table}"')
    finally:
        con.close()
    connect(file).close()  # views, macros, reference tables


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--size", choices=("small", "full"), default="full")
    for name in ("sources", "workers", "cycles", "batch"):
        parser.add_argument(f"--{name}", type=int, default=None)
    parser.add_argument("--upkeep-every", type=int, default=4,
                        help="cycles between two upkeeps (4: hourly, as lake-upkeep runs)")
    parser.add_argument("--minutes", type=float, default=None,
                        help="start no cycle after this many minutes of wall time (the figures "
                             "then cover the cycles done; default: every cycle)")
    args = parser.parse_args(argv)
    if args.minutes is not None and not 1 <= args.minutes <= 24 * 60:
        parser.error("--minutes: from 1 to 1440")
    size = {k: getattr(args, k) or v for k, v in SIZES[args.size].items()}
    sys.path.insert(0, str(REPO))
    from tests.lake_servers import ServerUnavailable, moto_server, postgres_server

    header(f"scale-out: {size['sources']} sources, {size['workers']} workers, "
           f"{size['cycles']} cycles of 15 min, batches of {size['batch']}")
    folder = Path(tempfile.mkdtemp(prefix="gpuprices-scale-"))
    server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
    threading.Thread(target=server.serve_forever, daemon=True).start()
    base = f"http://127.0.0.1:{server.server_address[1]}"
    try:
        with postgres_server() as pg, moto_server() as s3:
            return _run(size, folder, base, pg, s3, args.upkeep_every, args.minutes)
    except ServerUnavailable as exc:  # no PostgreSQL or moto here: say so and fail
        return cannot_run("scale_out", str(exc))
    finally:
        server.shutdown()
        shutil.rmtree(folder, ignore_errors=True)


def _run(size: dict[str, int], folder: Path, base: str, pg: Any, s3: Any,
         upkeep_every: int, minutes: float | None = None) -> int:
    from datetime import timedelta

    from warehouse.lake import upkeep_lake

    bucket = s3.create_bucket()
    os.environ.update({**s3.env(), "GPUPRICES_ARCHIVE": str(folder / "raw"),
                       "GPUPRICES_LAKE_DATA_PATH": f"s3://{bucket}/lake/",
                       "GPUPRICES_RETRIES": "2", "GPUPRICES_BACKOFF_S": "0.05",
                       # a batch's sources at once: they land in groups (flows.refresh_work.Writer)
                       "GPUPRICES_WORKERS": str(size["batch"]),
                       "GPUPRICES_ALERTS": str(folder / "none.toml")})
    url = f"ducklake:postgres:{pg.dsn(pg.create_database())}"
    from warehouse.connection import connect

    connect(url).close()  # the schema, once, before the workers start
    names = [f"syn{i:03d}" for i in range(size["sources"])]
    context = mp.get_context("spawn")
    jobs, results = context.Queue(), context.Queue()
    procs = [context.Process(target=worker, args=(jobs, results, url, base, size["sources"]))
             for _ in range(size["workers"])]
    for proc in procs:
        proc.start()
    batches = [names[i:i + size["batch"]] for i in range(0, len(names), size["batch"])]
    runs: list[dict[str, Any]] = []
    cycle_s: list[float] = []
    upkeeps: list[str] = []
    load_before = os.getloadavg()
    start = time.monotonic()
    for cycle in range(size["cycles"]):
        if minutes is not None and time.monotonic() - start > 60 * minutes:
            print(f"   stopped after {cycle} cycles: --minutes {minutes:g} passed", flush=True)
            break
        Handler.cycle[0] = cycle
        tick = time.monotonic()
        for batch in batches:
            jobs.put((cycle, batch))
        for _ in batches:
            runs.append(_next_result(results, procs))
        cycle_s.append(time.monotonic() - tick)
        print(f"   cycle {cycle + 1}/{size['cycles']}: {cycle_s[-1]:.1f} s", flush=True)
        if upkeep_every and (cycle + 1) % upkeep_every == 0 and cycle + 1 < size["cycles"]:
            # the hourly lake-upkeep, between two cycles
            kept, took = upkeep_lake(url, keep=timedelta(minutes=5)), time.monotonic() - tick
            upkeeps.append(f"after cycle {cycle + 1}: snapshots {kept.snapshots_before} -> "
                           f"{kept.snapshots_after}, files {kept.files_before} -> "
                           f"{kept.files_after} ({took - cycle_s[-1]:.1f} s)")
            print(f"   upkeep {upkeeps[-1]}", flush=True)
    wall = time.monotonic() - start
    load_after = os.getloadavg()
    for _ in procs:
        jobs.put(None)
    for proc in procs:
        proc.join(timeout=120)
    outcomes = [o for run in runs for o in run["outcomes"]]
    stored = sum(o[2] for o in outcomes)
    statuses = {s: sum(1 for o in outcomes if o[1] == s) for s in {o[1] for o in outcomes}}
    last: dict[int, int] = {}  # each worker's own counter only grows: its last value
    for run in runs:
        last[run["pid"]] = max(last.get(run["pid"], 0), run["conflicts"])
    conflicts = sum(last.values())
    lost, duplicated, observations, source_p95 = _check(url)
    batch_times = sorted(r["seconds"] for r in runs)
    p95 = batch_times[int(0.95 * (len(batch_times) - 1))]
    catalog = _catalog_bytes(pg, url.split("dbname=")[1].split()[0])
    bucket_bytes = sum(n for _, n in s3.objects(bucket))
    kept = upkeep_lake(url)  # keep 7 days: nothing expires in a compressed day
    swept = upkeep_lake(url, keep=timedelta(0))
    print(f"   machine load average before/after: {load_before[0]:.2f} / {load_after[0]:.2f}")
    done = len(cycle_s)
    print(f"   wall {wall:.0f} s for {done} of {size['cycles']} cycles (median cycle "
          f"{statistics.median(cycle_s):.1f} s, first {cycle_s[0]:.1f} s, last "
          f"{cycle_s[-1]:.1f} s); simulated time = {done / 4:.2f} h; at the median cycle a "
          f"simulated day (96 cycles) takes {96 * statistics.median(cycle_s) / 60:.0f} min")
    print(f"   source runs: {len(outcomes)} ({statuses}); batch runs per hour of wall time: "
          f"{len(runs) / wall * 3600:.0f}; source runs per hour: {len(outcomes) / wall * 3600:.0f}")
    print(f"   rows stored: {stored} ({stored / wall:.1f} rows/s); observations in the lake: "
          f"{observations}; p95 source run (fetch to commit): {source_p95:.2f} s; p95 batch "
          f"run: {p95:.1f} s")
    print(f"   server answers: {Handler.served} (503s are retried by the fetch)")
    print(f"   commit conflicts retried: {conflicts} (per worker: {sorted(last.values())})")
    print(f"   lost rows: {lost}; duplicated rows: {duplicated}")
    print(f"   catalog {catalog / 2**20:.1f} MiB, bucket {bucket_bytes / 2**20:.1f} MiB in "
          f"{len(s3.objects(bucket))} objects (first 1000 listed)")
    print(f"   upkeep keeping 7 days: snapshots {kept.snapshots_before} -> "
          f"{kept.snapshots_after}, files {kept.files_before} -> {kept.files_after}; keeping "
          f"none: snapshots -> {swept.snapshots_after}, files -> {swept.files_after} "
          f"({swept.files_deleted} deleted)")
    _read_side(url, folder)
    return 1 if lost or duplicated else 0


def _next_result(results: Any, procs: list[Any]) -> dict[str, Any]:
    """The next batch's result; RuntimeError when a worker died (its traceback is above)."""
    import queue

    while True:
        try:
            result: dict[str, Any] = results.get(timeout=5)
            return result
        except queue.Empty:
            if any(not proc.is_alive() for proc in procs):
                raise RuntimeError("a worker process died") from None


def _check(url: str) -> tuple[int, int, int, float]:
    """(rows lost, rows duplicated, observations, p95 seconds of a source's run): each success
    run's rows present once."""
    from warehouse.connection import connect_read_only

    con = connect_read_only(url)
    try:
        row = con.execute("""
            WITH stored AS (SELECT capture_id, count(*) AS n FROM observation GROUP BY 1),
                 runs AS (SELECT capture_id, count(*) AS runs, sum(rows_stored) AS n
                          FROM scrape_run WHERE status = 'success' GROUP BY 1)
            SELECT coalesce(sum(greatest(runs.n - coalesce(stored.n, 0), 0)), 0),
                   coalesce(sum(greatest(coalesce(stored.n, 0) - coalesce(runs.n, 0), 0)), 0)
                   + coalesce(sum(CASE WHEN runs.runs > 1 THEN runs.n END), 0),
                   (SELECT count(*) FROM observation)
            FROM stored FULL JOIN runs USING (capture_id)""").fetchone()
        p95 = con.execute("SELECT quantile_cont(epoch(finished_at - started_at), 0.95) "
                          "FROM scrape_run WHERE source LIKE 'syn%'").fetchone()
        return int(row[0]), int(row[1]), int(row[2]), float(p95[0] or 0)
    finally:
        con.close()


def _catalog_bytes(pg: Any, dbname: str) -> int:
    import duckdb

    from warehouse.extensions import load_extension

    con = duckdb.connect()
    try:
        load_extension(con, "postgres_scanner")
        con.execute(f"ATTACH '{pg.dsn('postgres')}' AS pg (TYPE postgres, READ_ONLY)")
        return int(con.execute("SELECT * FROM postgres_query('pg', 'SELECT "
                               f"pg_database_size(''{dbname}'')::bigint')").fetchone()[0])
    finally:
        con.close()


def _read_side(url: str, folder: Path) -> None:
    file = folder / "copy" / "gpu_prices.duckdb"
    file.parent.mkdir()
    copy_to_file(url, file)
    env = {**os.environ, "BENCH_CWD": str(folder)}
    print("   read side (CLI, median of 3): lake / file")
    for args in (["cheapest", "-f", "csv"], ["market", "-f", "csv"],
                 ["report", "--no-board"]):
        lake_s = _cli_times([*args, "-w", url], env)
        file_s = _cli_times([*args, "-w", str(file)], env)
        print(f"   {' '.join(args[:1]):10s} lake {lake_s:5.2f} s  file {file_s:5.2f} s  "
              f"ratio {lake_s / file_s:4.2f}")


if __name__ == "__main__":
    raise SystemExit(main())
