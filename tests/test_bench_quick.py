"""`make bench-quick`: every benchmark runs at small size without error (times are not checked).

The start-up benchmark runs `gpuprices refresh --offline` (a Prefect server) and the memory one
writes a price list, so the whole test is marked slow.
"""

from __future__ import annotations

import pytest

from bench import ingest, memory_aws, readers, startup, vs_gpuhunt, warehouse_scale


@pytest.mark.slow
@pytest.mark.timeout(900)
@pytest.mark.parametrize("bench", [ingest, vs_gpuhunt, warehouse_scale, memory_aws, startup,
                                   readers],
                         ids=lambda module: module.__name__.split(".")[-1])
def test_benchmark_runs_at_small_size(bench: object, capsys: pytest.CaptureFixture[str]) -> None:
    assert bench.main(["--size", "small"]) == 0  # type: ignore[attr-defined]
    printed = capsys.readouterr().out
    assert "machine:" in printed
    assert "Traceback" not in printed
