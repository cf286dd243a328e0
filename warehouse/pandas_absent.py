"""Answer DuckDB's look-ups of pandas at once when pandas is not installed.

DuckDB's Python client tries `import pandas` twice for every value it binds to a statement's
parameters (to recognise pandas' NA and NaT), whether or not pandas is installed, and does not
remember a failure. Without pandas each attempt searches every entry of sys.path: ~28 µs, so
~60 µs per bound value. An offline refresh binds ~3,000 of them, a report's list of 1,600
index fixings is 1,600 more. This finder, first on sys.meta_path, says "No module named
'pandas'" at once (~4 µs), with the message and name the import system gives, which pandera
and polars test for.

It is installed only when pandas cannot be found. One difference remains for others:
importlib.util.find_spec("pandas") raises ModuleNotFoundError instead of returning None (as it
does for a dotted name whose parent is missing); polars catches it. A pandas installed while
the process runs is not seen until it restarts.
"""

from __future__ import annotations

import importlib.util
import sys
from collections.abc import Sequence
from importlib.machinery import ModuleSpec
from types import ModuleType

__all__ = ["PandasAbsent", "answer_pandas_lookups"]

_NAME = "pandas"


class PandasAbsent:
    """A meta path finder for which pandas does not exist."""

    @staticmethod
    def find_spec(name: str, path: Sequence[str] | None = None,
                  target: ModuleType | None = None) -> ModuleSpec | None:
        if name == _NAME:
            raise ModuleNotFoundError(f"No module named {_NAME!r}", name=_NAME)
        return None


def answer_pandas_lookups() -> bool:
    """Put PandasAbsent first on sys.meta_path when pandas is not installed (once per
    process); True when it is there."""
    if any(isinstance(finder, PandasAbsent) for finder in sys.meta_path):
        return True
    if _NAME in sys.modules or importlib.util.find_spec(_NAME) is not None:
        return False
    sys.meta_path.insert(0, PandasAbsent())
    return True
