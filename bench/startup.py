"""Start-up: wall time of CLI commands from a cold process, and whether they import Prefect.

Targets (issue 11), each the median of several cold runs, printed with the machine's load:
read commands (query, sources, cheapest, summary, market, explain, history, changes, value)
<= 1 s and no Prefect import; `report`
<= 3 s on the demo warehouse; `refresh --offline` of every source <= 5 s (both run their
flow's work directly: no Prefect API configured); `make demo` after the first install
(= refresh --offline + report + a no-op `uv sync`) <= 20 s. A benchmark, not a timed test.

    python -m bench.startup [--size small]
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

from bench._common import REPO, compile_packages, header, size_arg, verdict

TARGET_S = 1.0
REPORT_TARGET_S = 3.0
REFRESH_TARGET_S = 5.0
DEMO_TARGET_S = 20.0
# What the `gpuprices` console script runs, without depending on where it was installed.
ENTRY = "import sys; from gpuprices.cli import main; sys.argv[0] = 'gpuprices'; main()"


def _cli(args: list[str], env: dict[str, str]) -> tuple[float, subprocess.CompletedProcess[str]]:
    start = time.perf_counter()
    done = subprocess.run([sys.executable, "-c", ENTRY, *args], cwd=REPO, env=env,
                          capture_output=True, text=True, timeout=600, check=False)
    return time.perf_counter() - start, done


def imports_prefect(args: list[str], env: dict[str, str]) -> bool:
    """Run the command with -X importtime and look for prefect among the imported modules."""
    done = subprocess.run([sys.executable, "-X", "importtime", "-c", ENTRY, *args],
                          cwd=REPO, env=env, capture_output=True, text=True, timeout=600,
                          check=False)
    return any(line.split("|")[-1].strip().split(".")[0] == "prefect"
               for line in done.stderr.splitlines() if line.startswith("import time:"))


def main(argv: list[str] | None = None) -> int:
    args = size_arg(__doc__.splitlines()[0]).parse_args(argv)
    small = args.size == "small"
    repeat = 1 if small else 5
    header("CLI start-up from a cold process")
    compile_packages()
    workdir = Path(tempfile.mkdtemp(prefix="gpuprices-bench-startup-"))
    env = {**os.environ, "GPUPRICES_WAREHOUSE": str(workdir / "w.duckdb"),
           "PREFECT_HOME": str(workdir / ".prefect"), "DO_NOT_TRACK": "1",
           "PREFECT_SERVER_ANALYTICS_ENABLED": "false", "PREFECT_LOGGING_LEVEL": "WARNING"}
    try:
        status = 0
        # The warehouse must exist for `query`; the offline refresh makes it (and is timed).
        # At small size (CI) an empty warehouse is enough: Prefect's start-up is not measured.
        refresh_args = ["refresh", "--offline"]
        refresh_s = None
        demo_steps: list[tuple[str, float]] = []
        if not small:
            # The demo warehouse, as `make demo` builds it: the example history, then a refresh.
            seconds, done = _cli(["backfill", "examples"], env)
            demo_steps.append(("backfill examples", seconds))
            if done.returncode != 0:
                print(f"   backfill failed ({done.returncode}): {done.stderr[-500:]}")
                return 1
        if small:
            from warehouse.connection import connect

            connect(workdir / "w.duckdb").close()
        else:
            refresh_s, done = _cli(refresh_args, env)
            demo_steps.append(("refresh --offline (first, after the backfill)", refresh_s))
            if done.returncode not in (0, 1) or not (workdir / "w.duckdb").exists():
                print(f"   refresh failed ({done.returncode}): {done.stderr[-500:]}")
                return 1
        start = time.perf_counter()
        subprocess.run([sys.executable, "-c", "import prefect, prefect.flows"], check=True,
                       env=env, capture_output=True)
        prefect_import_s = time.perf_counter() - start
        start = time.perf_counter()
        subprocess.run([sys.executable, "-c", "pass"], check=True, env=env)
        python_s = time.perf_counter() - start
        print(f"   bare python: {python_s * 1000:.0f} ms; `import prefect`: "
              f"{prefect_import_s * 1000:.0f} ms")
        print(f"   load average (1/5/15 min): {', '.join(f'{x:.2f}' for x in os.getloadavg())}")
        if not small:
            for command, target in ((refresh_args, REFRESH_TARGET_S),
                                    (["report", "--out", str(workdir / "reports")],
                                     REPORT_TARGET_S)):
                times = []
                for _ in range(repeat):
                    seconds, done = _cli(command, env)
                    if done.returncode != 0:
                        print(f"   {command}: exit {done.returncode}: {done.stderr[-300:]}")
                        status = 1
                    times.append(seconds)
                seconds = statistics.median(times)
                if command[0] == "report":
                    demo_steps.append(("report", seconds))
                print(f"   {verdict(seconds <= target)} gpuprices {' '.join(command[:2])!r:<24} "
                      f"{seconds * 1000:6.0f} ms (median of {repeat}; target <= {target:g} s)")
            demo_s = sum(seconds for _, seconds in demo_steps)
            print(f"   {verdict(demo_s <= DEMO_TARGET_S)} make demo without the install step "
                  f"{demo_s:.1f} s ({' + '.join(f'{n} {s:.1f} s' for n, s in demo_steps)}; "
                  f"target <= {DEMO_TARGET_S:g} s)")
        for command in (["query", "select 1"], ["sources"], ["cheapest", "--limit", "5"],
                        ["summary"], ["market", "--gpu", "H100"], ["explain", "market", "H100"],
                        ["history", "H100"], ["changes", "--since", "2024-01-01"], ["value"]):
            times = []
            for _ in range(repeat):
                seconds, done = _cli(command, env)
                # small: an empty warehouse, where `history` rightly answers "no prices" (1)
                if done.returncode != 0 and not (small and done.returncode == 1):
                    print(f"   {command}: exit {done.returncode}: {done.stderr[-300:]}")
                    status = 1
                times.append(seconds)
            seconds = statistics.median(times)
            prefect = imports_prefect(command, env)
            ok = seconds <= TARGET_S and not prefect
            print(f"   {verdict(ok)} gpuprices {' '.join(command)!r:<24} {seconds * 1000:6.0f} ms "
                  f"(median of {repeat}; imports prefect: {'YES' if prefect else 'no'}; "
                  f"target <= {TARGET_S} s)")
        # The same command as a fresh `uv sync` leaves it without UV_COMPILE_BYTECODE while
        # PYTHONDONTWRITEBYTECODE is set (CI): no .pyc anywhere, every module compiled per run.
        cold_env = {**env, "PYTHONDONTWRITEBYTECODE": "1",
                    "PYTHONPYCACHEPREFIX": str(workdir / "no-pyc")}
        seconds = statistics.median(_cli(["query", "select 1"], cold_env)[0]
                                    for _ in range(1 if small else 3))
        print(f"   ---- gpuprices 'query select 1' without compiled bytecode: "
              f"{seconds * 1000:6.0f} ms (why the Makefile sets UV_COMPILE_BYTECODE=1)")
        if refresh_s is not None:
            print(f"   ---- gpuprices {' '.join(refresh_args)!r:<24} {refresh_s * 1000:6.0f} ms "
                  "(first run: creates the warehouse)")
        print(f"   load average (1/5/15 min): {', '.join(f'{x:.2f}' for x in os.getloadavg())}")
        return status
    finally:
        shutil.rmtree(workdir, ignore_errors=True)


if __name__ == "__main__":
    raise SystemExit(main())
