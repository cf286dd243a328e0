"""Run every benchmark in turn: `make bench` (full size) and `make bench-quick` (--size small).

Each benchmark prints its own figures and verdicts (OK / MISS against the issue's targets).
The exit code is non-zero when a benchmark fails to run or its comparison cannot run (a tool
it needs is missing), never because of a time.
"""

from __future__ import annotations

import sys
import time
from collections.abc import Callable

from bench import (
    export_memory,
    ingest,
    memory_aws,
    read_floor,
    readers,
    rebuild_memory,
    scale_out,
    startup,
    vs_gpuhunt,
    warehouse_scale,
)
from bench._common import size_arg

BENCHMARKS: tuple[tuple[str, Callable[[list[str]], int]], ...] = (
    ("ingest", ingest.main),
    ("vs_gpuhunt", vs_gpuhunt.main),
    ("warehouse_scale", warehouse_scale.main),
    ("memory_aws", memory_aws.main),
    ("startup", startup.main),
    ("readers", readers.main),
    ("scale_out", scale_out.main),
    ("read_floor", read_floor.main),
    ("export_memory", export_memory.main),
    ("rebuild_memory", rebuild_memory.main),
)


def main(argv: list[str] | None = None) -> int:
    args = size_arg(__doc__.splitlines()[0]).parse_args(argv)
    failed = []
    start = time.perf_counter()
    for name, run in BENCHMARKS:
        try:
            code = run(["--size", args.size])
        except Exception as exc:  # report and go on with the others
            print(f"   {name}: {type(exc).__name__}: {exc}")
            code = 1
        if code:
            failed.append(name)
        sys.stdout.flush()
    print(f"\nbenchmarks done in {time.perf_counter() - start:.0f} s"
          + (f"; FAILED to run: {', '.join(failed)}" if failed else ""))
    return 1 if failed else 0


if __name__ == "__main__":
    raise SystemExit(main())
