"""docs/api.md runs: every ```python block, in order, in one namespace, against the demo
warehouse; and `import gpuprices` stays cheap (no polars, DuckDB or report code loaded)."""

from __future__ import annotations

import re
import subprocess
import sys
from pathlib import Path

import pytest

import gpuprices

DOC = Path(__file__).resolve().parents[2] / "docs" / "api.md"
BLOCKS = re.findall(r"```python\n(.*?)```", DOC.read_text(encoding="utf-8"), re.S)


def test_the_doc_has_examples() -> None:
    assert len(BLOCKS) >= 6


def test_every_example_runs(demo: Path, monkeypatch: pytest.MonkeyPatch,
                            capsys: pytest.CaptureFixture[str]) -> None:
    monkeypatch.setenv("GPUPRICES_WAREHOUSE", str(demo))
    namespace: dict[str, object] = {}
    for number, block in enumerate(BLOCKS, 1):
        try:
            exec(compile(block, f"docs/api.md block {number}", "exec"), namespace)
        except Exception as exc:  # name the block that failed
            raise AssertionError(f"docs/api.md block {number} failed: {exc!r}\n{block}") from exc
    out = capsys.readouterr().out
    assert "unknown GPU 'H999'" in out and "gpus 0 is out of range" in out


def test_every_function_in_the_table_exists() -> None:
    table = DOC.read_text(encoding="utf-8").split("## Every function")[1]
    names = re.findall(r"^\| `(\w+)\(", table, re.M)
    assert names and all(callable(getattr(gpuprices, name)) for name in names)
    assert set(names) <= set(gpuprices.__all__)


def test_import_is_cheap() -> None:
    code = ("import sys, gpuprices; heavy = [m for m in ('polars', 'duckdb', 'pyarrow', "
            "'reports', 'warehouse', 'typer', 'mcp') if m in sys.modules]; print(heavy)")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                         check=True, cwd=DOC.parents[1]).stdout
    assert out.strip() == "[]"
    assert gpuprices.__version__
