"""Read snapshots: what publishing one costs, and what readers see while a refresh writes.

1. Publish time (CHECKPOINT, copy to `<warehouse>.read/gNNNNNN.duckdb` in a child process,
   symlink swap, prune) on the demo warehouse (`backfill examples` + `refresh --offline`)
   and on a large synthetic history (bench/synthetic.py; --warehouse reuses a file).
2. Read latency: `connect_read_only` + `SELECT count(*) FROM latest_price`, in a loop in this
   process while `gpuprices refresh --offline` runs in another, against the same loop idle;
   cold `gpuprices query` processes during a refresh; the refresh's wall time with and
   without readers.

    python -m bench.readers [--size small] [--warehouse PATH] [--offerings N --days N]
"""

from __future__ import annotations

import os
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from bench._common import REPO, header, size_arg
from warehouse import snapshot
from warehouse.connection import connect, connect_read_only

SIZES = {"small": (1_000, 100), "full": (14_000, 730)}
READ_SQL = "SELECT count(*) FROM latest_price"


def _cli(args: list[str], env: dict[str, str]) -> subprocess.Popen[str]:
    return subprocess.Popen([sys.executable, "-m", "gpuprices.cli", *args], env=env, cwd=REPO,
                            stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True)


def _publish_times(path: Path, repeat: int) -> list[float]:
    con = connect(path)
    try:
        times = []
        for _ in range(repeat):
            start = time.perf_counter()
            snapshot.publish(con, path)
            times.append(time.perf_counter() - start)
        return times
    finally:
        con.close()


def _read_once(path: Path) -> float:
    start = time.perf_counter()
    con = connect_read_only(path)
    try:
        con.execute(READ_SQL).fetchone()
    finally:
        con.close()
    return time.perf_counter() - start


def _quantiles(values: list[float]) -> str:
    ordered = sorted(values)
    p95 = ordered[min(len(ordered) - 1, int(0.95 * len(ordered)))]
    return (f"n={len(values)}  median {statistics.median(values) * 1000:6.1f} ms  "
            f"p95 {p95 * 1000:6.1f} ms  max {ordered[-1] * 1000:6.1f} ms")


def _line(label: str, times: list[float], size: int) -> None:
    best = min(times)
    print(f"   {label:<34} {size / 2**20:9.1f} MiB  median {statistics.median(times):6.3f} s  "
          f"best {best:6.3f} s  ({size / 2**20 / best:,.0f} MiB/s)")


def main(argv: list[str] | None = None) -> int:
    parser = size_arg(__doc__.splitlines()[0])
    parser.add_argument("--warehouse", type=Path, help="large warehouse to reuse/keep")
    parser.add_argument("--offerings", type=int, help="synthetic offerings (default by size)")
    parser.add_argument("--days", type=int, help="synthetic nights (default by size)")
    args = parser.parse_args(argv)
    offerings, days = SIZES[args.size]
    offerings, days = args.offerings or offerings, args.days or days
    header("read snapshots: publish time, reads during a refresh")
    workdir = Path(tempfile.mkdtemp(prefix="gpuprices-bench-readers-"))
    demo = workdir / "demo" / "gpu_prices.duckdb"
    env = {**os.environ, "PYTHONPATH": str(REPO), "GPUPRICES_WAREHOUSE": str(demo)}
    repeat = 3 if args.size == "small" else 7
    try:
        for step in (["backfill", "examples"], ["refresh", "--offline"]):
            done = _cli(step, env)
            _, err = done.communicate()
            if done.returncode != 0:
                print(f"   {' '.join(step)} failed: {err[-400:]}")
                return 1
        print(f"   load average (1/5/15 min): {', '.join(f'{x:.2f}' for x in os.getloadavg())}")
        _line("publish, demo warehouse", _publish_times(demo, repeat), demo.stat().st_size)

        large = args.warehouse or workdir / "large" / "history.duckdb"
        if not large.exists():
            from bench.synthetic import generate

            start = time.perf_counter()
            con = connect(large)
            rows = generate(con, offerings=offerings, days=days,
                            chunk_days=30 if args.size == "full" else 100)
            con.close()
            print(f"   generated {rows:,} observations ({offerings:,} offerings x {days:,} "
                  f"nights) in {time.perf_counter() - start:.0f} s")
        _line("publish, large warehouse", _publish_times(large, max(3, repeat // 2)),
              large.stat().st_size)

        idle = [_read_once(demo) for _ in range(20)]
        print(f"   read (open snapshot + latest_price), idle:       {_quantiles(idle)}")
        for with_readers in (False, True):
            start = time.perf_counter()
            refresh = _cli(["refresh", "--offline"], env)
            busy: list[float] = []
            cold: list[float] = []
            while refresh.poll() is None and with_readers:
                busy.append(_read_once(demo))
                if len(busy) % 8 == 1:  # now and then a whole command from a cold process
                    began = time.perf_counter()
                    query = _cli(["query", READ_SQL], env)
                    query.communicate()
                    cold.append(time.perf_counter() - began)
                    if query.returncode != 0:
                        print("   a cold `gpuprices query` failed during the refresh")
                        return 1
                time.sleep(0.1)
            _, err = refresh.communicate()
            took = time.perf_counter() - start
            if refresh.returncode != 0:
                print(f"   refresh failed: {err[-400:]}")
                return 1
            if with_readers:
                print(f"   read during a refresh (same loop):               {_quantiles(busy)}")
                print(f"   cold `gpuprices query` during a refresh:         {_quantiles(cold)}")
            print(f"   refresh --offline {'with' if with_readers else 'without'} readers: "
                  f"{took:.1f} s, exit {refresh.returncode}")
    finally:
        if args.warehouse is None:
            shutil.rmtree(workdir, ignore_errors=True)
        else:
            shutil.rmtree(workdir / "demo", ignore_errors=True)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
