"""warehouse.pandas_absent: DuckDB binds a parameter after asking for pandas twice; without
pandas installed, the finder answers at once, as the import system would, and the libraries
that probe for pandas (pandera, polars) still see it absent. Each case runs in a new process:
the finder is process-wide."""

from __future__ import annotations

import json
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
PANDAS_INSTALLED = any((Path(p) / "pandas").is_dir() for p in sys.path if p)
pytestmark = pytest.mark.skipif(PANDAS_INSTALLED, reason="pandas is installed here")


def _run(code: str) -> dict[str, object]:
    done = subprocess.run([sys.executable, "-c", textwrap.dedent(code)], cwd=ROOT,
                          capture_output=True, text=True, timeout=120, check=False)
    assert done.returncode == 0, done.stderr
    return json.loads(done.stdout.strip().splitlines()[-1])


def test_a_bound_parameter_no_longer_searches_the_path_for_pandas() -> None:
    found = _run("""
        import json, sys
        from warehouse.engine import open_duckdb

        class Spy:  # after the finder: sees what reaches the path search
            searched = 0
            def find_spec(self, name, path=None, target=None):
                Spy.searched += name == "pandas"
                return None

        con = open_duckdb(":memory:")
        sys.meta_path.insert(1, Spy())
        rows = con.execute("SELECT $a + 1, $b", {"a": 41, "b": ["x", "y"]}).fetchall()
        print(json.dumps({"rows": [list(r) for r in rows], "searched": Spy.searched,
                          "first": type(sys.meta_path[0]).__name__}))
    """)
    assert found == {"rows": [[42, ["x", "y"]]], "searched": 0, "first": "PandasAbsent"}


def test_without_the_finder_duckdb_does_search() -> None:
    # the reason the finder exists: if DuckDB stops asking, this fails and it can go
    found = _run("""
        import json, sys, duckdb
        class Spy:
            searched = 0
            def find_spec(self, name, path=None, target=None):
                Spy.searched += name == "pandas"
                return None
        con = duckdb.connect()
        sys.meta_path.insert(0, Spy())
        con.execute("SELECT $a", {"a": 1}).fetchall()
        print(json.dumps({"searched": Spy.searched}))
    """)
    assert found["searched"] >= 1


def test_importers_see_pandas_absent_as_before() -> None:
    found = _run("""
        import importlib.util, json
        from warehouse.pandas_absent import answer_pandas_lookups
        assert answer_pandas_lookups() and answer_pandas_lookups()  # once, then already there
        import sys
        try:
            import pandas  # noqa: F401
        except ModuleNotFoundError as exc:
            error = [str(exc), exc.name]
        import pandera.polars  # accepts exactly "No module named 'pandas'"
        from polars._dependencies import _lazy_import
        _, polars_sees = _lazy_import("pandas")
        try:
            spec = repr(importlib.util.find_spec("pandas"))
        except ModuleNotFoundError as exc:
            spec = "raises " + str(exc)
        finders = sum(type(f).__name__ == "PandasAbsent" for f in sys.meta_path)
        print(json.dumps({"error": error, "polars": polars_sees, "spec": spec,
                          "finders": finders, "loaded": "pandas" in sys.modules}))
    """)
    assert found == {"error": ["No module named 'pandas'", "pandas"], "polars": False,
                     "spec": "raises No module named 'pandas'", "finders": 1, "loaded": False}


def test_not_installed_when_pandas_can_be_found(monkeypatch: pytest.MonkeyPatch) -> None:
    import importlib.util

    from warehouse import pandas_absent

    before = list(sys.meta_path)
    monkeypatch.setattr(sys, "meta_path", [f for f in before
                                           if not isinstance(f, pandas_absent.PandasAbsent)])
    monkeypatch.setattr(importlib.util, "find_spec", lambda name: object())
    assert pandas_absent.answer_pandas_lookups() is False
    assert not any(isinstance(f, pandas_absent.PandasAbsent) for f in sys.meta_path)
