"""Read commands against DuckDB's own start-up, and `report` against `query` (issue 23).

The floor is a bare process that opens the warehouse read-only and runs `select 1`
(`python -c "import duckdb; duckdb.connect(W, read_only=True).sql('select 1')"`). Each read
command runs in turn with the floor (floor, command, floor, command ...), so both see the
same machine load and their ratio holds on a busy machine. Targets: every read command
<= 2.0x the floor on the demo warehouse, <= 2.5x on a 50 M-observation one; `report` (with the
board) <= 3x `query`, peak memory <= 500 MiB.

    python -m bench.read_floor [--size small] [--warehouse W] [--repeat N]

Without --warehouse it builds the demo warehouse (`backfill examples` + `refresh --offline`);
bench/warehouse_scale.py --warehouse W keeps a 50 M one to pass here.
"""

from __future__ import annotations

import os
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from datetime import UTC, datetime
from pathlib import Path

import duckdb

from bench._common import REPO, cannot_run, compile_packages, header, load, size_arg, verdict

DEMO_TARGET = 2.0
BIG_TARGET = 2.5
BIG_ROWS = 10_000_000  # a warehouse this big is held to the 50 M target
REPORT_TARGET = 3.0  # x query
REPORT_MEMORY_MIB = 500
# Each child writes its peak resident memory (VmHWM: the process after exec, not the forking
# benchmark's image that ru_maxrss also counts) to the file named by _PEAK_ENV when it exits.
_PEAK_ENV = "GPUPRICES_BENCH_PEAK_FILE"
_PEAK = ("import atexit, os; atexit.register(lambda: open(os.environ['" + _PEAK_ENV + "'], 'w')"
         ".write([l.split()[1] for l in open('/proc/self/status') if l.startswith('VmHWM')][0]))"
         "; ")
ENTRY = _PEAK + ("import sys; from gpuprices.cli import main; sys.argv[0] = 'gpuprices'; "
                 "main()")
READS: tuple[tuple[str, ...], ...] = (
    ("query", "select 1"),
    ("query", "select source, observed_at from latest_price"),  # a view, timestamps
    ("sources",), ("cheapest", "--limit", "5"), ("summary",),
    ("market", "--gpu", "H100"), ("explain", "market", "H100"), ("history", "H100"),
    ("changes", "--since", "2024-01-01"), ("value",), ("availability", "H100"), ("index",),
)


def _floor_code(path: Path) -> str:
    return (_PEAK + f"import duckdb; duckdb.connect({str(path)!r}, read_only=True)"
            ".sql('select 1')")


def _run(argv: list[str], env: dict[str, str], out: Path) -> tuple[float, int, float]:
    """Wall seconds, exit code and peak resident memory (MiB) of one child process."""
    peak = out.with_suffix(".peak")
    peak.unlink(missing_ok=True)
    with out.open("wb") as sink:
        start = time.perf_counter()
        code = subprocess.run(argv, cwd=REPO, env={**env, _PEAK_ENV: str(peak)}, stdout=sink,
                              stderr=sink, check=False).returncode
        seconds = time.perf_counter() - start
    mib = int(peak.read_text()) / 1024 if peak.exists() else float("nan")
    return seconds, code, mib


def _demo(workdir: Path, env: dict[str, str], small: bool) -> Path | None:
    """The demo warehouse as `make demo` builds it (an empty one at small size)."""
    path = workdir / "demo.duckdb"
    if small:
        from warehouse.connection import connect

        connect(path).close()
        return path
    for step in (["backfill", "examples"], ["refresh", "--offline"]):
        _, code, _ = _run([sys.executable, "-c", ENTRY, *step, "--warehouse", str(path)], env,
                          workdir / "build.log")
        if code not in (0, 1):
            print((workdir / "build.log").read_text()[-500:])
            return None
    return path


def _opened_by_readers(path: Path) -> Path:
    """The file a read command opens: the warehouse's read snapshot when it has one."""
    snapshot = path.with_name(path.name + ".read") / "current.duckdb"
    return snapshot if snapshot.exists() else path


def main(argv: list[str] | None = None) -> int:
    parser = size_arg(__doc__.splitlines()[0])
    parser.add_argument("--warehouse", type=Path, help="an existing warehouse to read")
    parser.add_argument("--repeat", type=int, default=0, help="pairs per command (1-50)")
    parser.add_argument("--only", nargs="+", metavar="COMMAND",
                        help="time only these read commands (e.g. query cheapest)")
    args = parser.parse_args(argv)
    small = args.size == "small"
    repeat = args.repeat or (1 if small else 7)
    if not 1 <= repeat <= 50:
        parser.error("--repeat must be within 1-50")
    header("read commands vs DuckDB's own start-up (interleaved)")
    compile_packages()
    workdir = Path(tempfile.mkdtemp(prefix="gpuprices-bench-floor-"))
    env = {**os.environ, "PREFECT_HOME": str(workdir / ".prefect"), "DO_NOT_TRACK": "1",
           "PREFECT_LOGGING_LEVEL": "WARNING"}
    env.pop("PREFECT_API_URL", None)
    try:
        if args.warehouse is not None and not args.warehouse.exists():
            return cannot_run("read_floor", f"no warehouse at {args.warehouse}")
        path = args.warehouse or _demo(workdir, env, small)
        if path is None:
            return cannot_run("read_floor", "the demo warehouse could not be built")
        env["GPUPRICES_WAREHOUSE"] = str(path)
        opened = _opened_by_readers(path)
        with duckdb.connect(str(opened), read_only=True) as con:
            row = con.execute("SELECT count(*) FROM observation").fetchone()
            today = datetime.now(UTC).date()
            fixed = con.execute("SELECT count(*) FROM index_day WHERE day = ?",
                                [today]).fetchone()
        rows = int(row[0]) if row else 0
        target = BIG_TARGET if rows >= BIG_ROWS else DEMO_TARGET
        print(f"   {rows:,} observations; floor opens {opened.name}; medians of {repeat} "
              f"interleaved pairs; load {load()}")
        # before the nightly fixing, market, explain market, index and report compute today's
        print(f"   today's index ({today}): "
              + ("fixed" if fixed and fixed[0] else "not fixed yet (computed by each read)"))
        floor = [sys.executable, "-c", _floor_code(opened)]
        log = workdir / "out.log"
        status = 0
        figures: dict[str, float] = {}
        reads = [c for c in READS if not args.only or c[0] in args.only]
        everything = (*reads, ("report", "--out", str(workdir / "reports")))
        for command in everything if not args.only or "report" in args.only else reads:
            cli = [sys.executable, "-c", ENTRY, *command]
            for warm in (floor, cli):  # the page cache warmed for both
                _run(warm, env, log)
            pairs, peak = [], 0.0
            for _ in range(repeat):
                base, _, _ = _run(floor, env, log)
                if command[0] == "report":
                    # a new folder each time: a nightly report rewrites its month's index
                    # files (their days changed); a kept folder would skip that work
                    shutil.rmtree(workdir / "reports", ignore_errors=True)
                seconds, code, mib = _run(cli, env, log)
                # an empty warehouse (small size) rightly answers some reads with "no prices"
                if code != 0 and not (small and code == 1):
                    print(f"   {' '.join(command)}: exit {code}: {log.read_text()[-300:]}")
                    status = 1
                pairs.append((base, seconds))
                peak = max(peak, mib)
            base = statistics.median(b for b, _ in pairs)
            seconds = statistics.median(s for _, s in pairs)
            # the report's yardstick is the first `query` (select 1), as in issue 23
            figures.setdefault(command[0], seconds)
            if command[0] == "report" and "query" in figures:
                ratio = seconds / figures["query"]
                ok = ratio <= REPORT_TARGET and peak <= REPORT_MEMORY_MIB
                print(f"   {verdict(ok)} {'report':<34}{seconds * 1000:7.0f} ms = {ratio:4.1f}x "
                      f"query select 1 (target <= {REPORT_TARGET:g}x); peak {peak:.0f} MiB "
                      f"(target <= {REPORT_MEMORY_MIB})")
                continue
            ratio = seconds / base
            print(f"   {verdict(ratio <= target)} {' '.join(command)[:34]:<34}"
                  f"{seconds * 1000:7.0f} ms = {ratio:4.1f}x the floor ({base * 1000:.0f} ms; "
                  f"target <= {target:g}x); peak {peak:.0f} MiB")
        print(f"   load average (1/5/15 min): {load()}")
        return status
    finally:
        shutil.rmtree(workdir, ignore_errors=True)


if __name__ == "__main__":
    raise SystemExit(main())
