"""The demo warehouse (`backfill examples` + `refresh --offline`), built once for the tests of
the doors programs use: the MCP server, the Python API, the export, the JSON output."""

from __future__ import annotations

from datetime import UTC, datetime
from pathlib import Path

import pytest

from tests.reports.test_demo_history import demo_warehouse


@pytest.fixture(scope="session")
def demo(tmp_path_factory: pytest.TempPathFactory) -> Path:
    path = tmp_path_factory.mktemp("programs-demo") / "gpu_prices.duckdb"
    demo_warehouse(path, datetime.now(UTC))
    return path
