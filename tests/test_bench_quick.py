"""`make bench-quick`: every benchmark runs at small size without error (times are not checked).

The start-up benchmark runs `gpuprices refresh --offline` (a Prefect server) and the memory one
writes a price list, so the whole test is marked slow.
"""

from __future__ import annotations

import importlib.util

import pytest

from bench import (
    export_memory,
    ingest,
    memory_aws,
    read_floor,
    readers,
    rebuild_memory,
    startup,
    vs_gpuhunt,
    warehouse_scale,
)


@pytest.mark.slow
@pytest.mark.timeout(900)
@pytest.mark.parametrize("bench", [ingest, vs_gpuhunt, warehouse_scale, memory_aws, startup,
                                   readers, read_floor, export_memory, rebuild_memory],
                         ids=lambda module: module.__name__.split(".")[-1])
def test_benchmark_runs_at_small_size(bench: object, capsys: pytest.CaptureFixture[str]) -> None:
    code = bench.main(["--size", "small"])  # type: ignore[attr-defined]
    printed = capsys.readouterr().out
    if bench is vs_gpuhunt and importlib.util.find_spec("gpuhunt") is None:
        # its comparison cannot run without gpuhunt: it says so and fails (never "skipped")
        assert code == 2 and "CANNOT RUN vs_gpuhunt: gpuhunt is not installed" in printed
        return
    assert code == 0
    assert "machine:" in printed
    assert "Traceback" not in printed
