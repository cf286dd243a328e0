"""Memory: a first `export` of a long history (every day written), in a fresh process.

DuckDB keeps a writer open for every (day, provider) file of one COPY; the export writes its
days in COPYs of at most `warehouse.export.OPEN_FILES` files so that its memory does not grow
with the history and no part is split into a second file (whose rows the manifest cannot
give). This generates a synthetic history (`bench.synthetic`: 14,000 offerings x 365 nights,
5 M observations; `--size small`: 2,000 x 60) or reuses `--warehouse W`, then exports it from
a child process that reports its peak RSS (getrusage). A split part makes it exit non-zero.

    python -m bench.export_memory [--size small] [--warehouse W]
"""

from __future__ import annotations

import json
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path

from bench._common import REPO, size_arg, verdict
from bench.synthetic import history_for

SIZES = {"small": (2_000, 60), "full": (14_000, 365)}

CHILD = """
import json, resource, sys, time
from pathlib import Path
import warehouse.export as export_module
from warehouse.connection import connect_read_only

copies = []
real = export_module._copy
def counting(con, select, params, *rest):
    copies.append("FROM observation WHERE" in select)
    real(con, select, params, *rest)
export_module._copy = counting
con = connect_read_only(sys.argv[1])
start = time.perf_counter()
result = export_module.export(con, Path(sys.argv[2]))
seconds = time.perf_counter() - start
con.close()
print(json.dumps({"seconds": seconds, "observations": result.observations,
                  "files": result.partitions, "copies": sum(copies),
                  "peak": resource.getrusage(resource.RUSAGE_SELF).ru_maxrss * 1024}))
"""


def main(argv: list[str] | None = None) -> int:
    parser = size_arg(__doc__.splitlines()[0])
    parser.add_argument("--warehouse", type=Path, help="export this warehouse (kept as it is) "
                        "instead of a generated one")
    args = parser.parse_args(argv)
    offerings, days = SIZES[args.size]
    workdir = Path(tempfile.mkdtemp(prefix="gpuprices-bench-export-"))
    try:
        path = history_for(args.warehouse, workdir, offerings=offerings, days=days,
                           what="first export")
        out = workdir / "export"
        child = subprocess.run([sys.executable, "-c", CHILD, str(path), str(out)], cwd=REPO,
                               capture_output=True, text=True, check=False)
        if child.returncode != 0:
            print(child.stderr.strip().splitlines()[-1] if child.stderr.strip() else
                  f"   the export ended with status {child.returncode}")
            return 1
        figures = json.loads(child.stdout.strip().splitlines()[-1])
        manifest = json.loads((out / "manifest.json").read_text(encoding="utf-8"))
        split = sum(1 for day in manifest["observations"]["days"].values()
                    for entry in day["files"].values() if entry["rows"] < 0)
        print(f"   {figures['observations']:,} observations, {figures['files']:,} files in "
              f"{figures['copies']} COPYs: {figures['seconds']:.1f} s, peak "
              f"{figures['peak'] / 2**20:.0f} MiB")
        print(f"   parts split into a second file (rows unknown to the manifest): {split} "
              f"{verdict(split == 0)}")
        return 0 if split == 0 else 1
    finally:
        shutil.rmtree(workdir, ignore_errors=True)


if __name__ == "__main__":
    raise SystemExit(main())
