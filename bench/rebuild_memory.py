"""Memory: a rebuild of every derived table from a long history, in a fresh process.

A rebuild (after a migration that changes derived tables, or `gpuprices market --rebuild`)
recomputes daily_price a UTC month at a time and each source's price moves and last prices on
their own (warehouse.summaries.rebuild), then the day-by-day tables (refresh_days). This
generates a synthetic history (`bench.synthetic`: 14,000 offerings x 365 nights, 5 M
observations; `--size small`: 2,000 x 60) or reuses `--warehouse W`, then rebuilds it in a
child process inside a transaction it rolls back (W is left as it was), with DuckDB's default
memory limit or `--memory-limit`, and prints each phase's time and the process's peak RSS
after it. A rebuild that fails (e.g. out of memory under the limit) exits 1 with its error.

    python -m bench.rebuild_memory [--size small] [--warehouse W] [--memory-limit 4GB]
"""

from __future__ import annotations

import json
import re
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path

from bench._common import REPO, load, size_arg, verdict
from bench.synthetic import history_for

SIZES = {"small": (2_000, 60), "full": (14_000, 365)}
# DuckDB's own setting's form: a number and a unit (no SQL reaches the child from here).
_LIMIT = re.compile(r"\d+(\.\d+)?\s?(KB|MB|GB|TB|KiB|MiB|GiB|TiB)")

CHILD = """
import json, resource, sys, time
import warehouse.summaries as summaries
from warehouse.connection import connect

def peak_mib():
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024

# the rebuild as it runs (summaries.rebuild); its day tables timed where it starts them
real_refresh_days, marks = summaries.refresh_days, {}
def refresh_days(con, since, **options):
    marks["start"], marks["peak"] = time.perf_counter(), peak_mib()
    days = real_refresh_days(con, since, **options)
    marks["days"] = len(days)
    return days
summaries.refresh_days = refresh_days

con = connect(sys.argv[1])
if sys.argv[2]:
    con.execute(f"SET memory_limit = '{sys.argv[2]}'")
con.execute("RESET threads")  # an upgrade's rebuild runs on every thread (connection.py)
limit = con.execute("SELECT current_setting('memory_limit')").fetchone()[0]
error = None
con.execute("BEGIN TRANSACTION")
start = time.perf_counter()
try:
    summaries.rebuild(con)
except Exception as exc:
    error = str(exc).splitlines()[0]
end = time.perf_counter()
con.execute("ROLLBACK")
phases = []
if "start" in marks:
    phases.append(["daily prices, moves, last prices", marks["start"] - start, marks["peak"]])
    phases.append([f"day tables ({marks.get('days', '?')} days)", end - marks["start"],
                   peak_mib()])
else:
    phases.append(["daily prices, moves, last prices", end - start, peak_mib()])
print(json.dumps({"limit": limit, "phases": phases, "error": error}))
"""


def main(argv: list[str] | None = None) -> int:
    parser = size_arg(__doc__.splitlines()[0])
    parser.add_argument("--warehouse", type=Path, help="rebuild this warehouse (rolled back: "
                        "kept as it is) instead of a generated one")
    parser.add_argument("--memory-limit", default="", help="DuckDB's memory_limit for the "
                        "rebuild, e.g. 4GB (default: DuckDB's, 80 %% of RAM)")
    args = parser.parse_args(argv)
    if args.memory_limit and not _LIMIT.fullmatch(args.memory_limit):
        parser.error(f"--memory-limit {args.memory_limit!r}: a size such as 4GB or 512MiB")
    offerings, days = SIZES[args.size]
    workdir = Path(tempfile.mkdtemp(prefix="gpuprices-bench-rebuild-"))
    try:
        path = history_for(args.warehouse, workdir, offerings=offerings, days=days,
                           what="rebuild")
        child = subprocess.run([sys.executable, "-c", CHILD, str(path), args.memory_limit],
                               cwd=REPO, capture_output=True, text=True, check=False)
        if child.returncode != 0:
            print(child.stderr.strip().splitlines()[-1] if child.stderr.strip() else
                  f"   the rebuild ended with status {child.returncode}")
            return 1
        figures = json.loads(child.stdout.strip().splitlines()[-1])
        print(f"   memory_limit {figures['limit']}; load {load()}")
        for name, seconds, peak in figures["phases"]:
            print(f"   {name:<36}{seconds:8.1f} s   peak so far {peak:,.0f} MiB")
        failed = figures["error"] is not None
        print(f"   rebuilt {verdict(not failed)}" + (f": {figures['error']}" if failed else ""))
        return 1 if failed else 0
    finally:
        shutil.rmtree(workdir, ignore_errors=True)


if __name__ == "__main__":
    raise SystemExit(main())
