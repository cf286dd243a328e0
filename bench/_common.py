"""Shared bits of the benchmarks: sizes, timing, machine facts, printing."""

from __future__ import annotations

import argparse
import os
import platform
import statistics
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any, TypeVar

T = TypeVar("T")
REPO = Path(__file__).resolve().parent.parent


def size_arg(description: str) -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(description=description)
    parser.add_argument("--size", choices=("small", "full"), default="full",
                        help="small: seconds, for CI (checks it runs, not the times)")
    return parser


def timed(fn: Callable[[], T]) -> tuple[T, float]:
    """Run once; return the result and the wall time in seconds."""
    start = time.perf_counter()
    result = fn()
    return result, time.perf_counter() - start


def best_of(fn: Callable[[], Any], repeat: int, warmup: int = 1, slow_s: float = 5.0) -> float:
    """Median wall time of `repeat` runs after `warmup` runs, in seconds.

    A call slower than `slow_s` is not repeated: its single time is the figure.
    """
    for _ in range(warmup):
        start = time.perf_counter()
        fn()
        if (seconds := time.perf_counter() - start) > slow_s:
            return seconds
    times = []
    for _ in range(repeat):
        start = time.perf_counter()
        fn()
        times.append(time.perf_counter() - start)
    return statistics.median(times)


def machine() -> str:
    cpu = platform.processor() or "?"
    try:
        for line in Path("/proc/cpuinfo").read_text().splitlines():
            if line.startswith("model name"):
                cpu = line.split(":", 1)[1].strip()
                break
    except OSError:
        pass
    ram_gib = os.sysconf("SC_PAGE_SIZE") * os.sysconf("SC_PHYS_PAGES") / 2**30
    python = platform.python_version()
    return f"{os.cpu_count()} cpu ({cpu}), {ram_gib:.1f} GiB RAM, Python {python}"


def verdict(ok: bool) -> str:
    return "OK  " if ok else "MISS"


def header(title: str) -> None:
    print(f"\n== {title} ==")
    print(f"   machine: {machine()}")


class CannotRun(Exception):
    """A benchmark's comparison cannot run here (a tool or a file it needs is missing): the
    benchmark says why on one line and exits non-zero, never a quiet "skipped"."""


def cannot_run(name: str, why: str) -> int:
    """Print why `name` cannot run and return the exit code that says so (2)."""
    print(f"   CANNOT RUN {name}: {why}")
    return 2


def interleaved(sides: dict[str, Callable[[], Any]], repeat: int,
                warmup: int = 1) -> dict[str, float]:
    """Median wall time of each side, in seconds, the sides run in turn (A B A B ...) so that
    a change of the machine's load falls on every side alike and their ratio holds."""
    for _ in range(warmup):
        for fn in sides.values():
            fn()
    times: dict[str, list[float]] = {name: [] for name in sides}
    for _ in range(repeat):
        for name, fn in sides.items():
            start = time.perf_counter()
            fn()
            times[name].append(time.perf_counter() - start)
    return {name: statistics.median(values) for name, values in times.items()}


def load() -> str:
    """The machine's load average (1/5/15 min), for every figure printed."""
    return ", ".join(f"{x:.2f}" for x in os.getloadavg())


def compile_packages() -> None:
    """Compile the project's packages (pyproject's wheel list) as `make install` does, so a
    timed command loads bytecode as an installed one would (with PYTHONDONTWRITEBYTECODE set
    nothing else writes it)."""
    import compileall
    import tomllib

    project = tomllib.loads((REPO / "pyproject.toml").read_text(encoding="utf-8"))
    for package in project["tool"]["hatch"]["build"]["targets"]["wheel"]["packages"]:
        compileall.compile_dir(REPO / package, quiet=2, workers=0)
