"""The index engine gives the same numbers in every process: Python's hash seed (which orders
a set of dates) must not reach a float sum. A fixing's stored weights are then reproducible
to the last bit, not only to its digest's rounding."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

REPO = Path(__file__).resolve().parents[2]

# A provider that printed every day of a series begun 1 to 39 days ago: its attendance share
# sums as many powers of two as days it printed.
_SHARES = """
from datetime import date, timedelta
from warehouse.index.engine import Past, _attendance
from warehouse.index.params import default_params
params = default_params()
day = date(2026, 11, 27)
shares = []
for days in range(2, 41):
    past = [Past(day - timedelta(days=k), 1.0, 1.0, "USD", 0.1, True, True, "all", 1, (), ())
            for k in range(1, days)]
    shares.append(_attendance(past, True, day, day - timedelta(days=days - 1), params))
print(" ".join(map(repr, shares)))
"""


def test_attendance_shares_are_the_same_whatever_the_hash_seed() -> None:
    runs = set()
    for seed in ("1", "2", "3", "4"):
        done = subprocess.run([sys.executable, "-c", _SHARES], cwd=REPO, check=True,
                              capture_output=True, text=True, timeout=120,
                              env={**os.environ, "PYTHONHASHSEED": seed})
        runs.add(done.stdout.strip())
    assert len(runs) == 1, "the shares change with the hash seed"
    shares = [float(s) for s in runs.pop().split()]
    assert len(shares) == 39 and all(abs(s - 1) < 1e-12 for s in shares)  # printed every day
