"""Shared fixtures: paths to ../shared (for conformance), one Prefect harness per session."""

from __future__ import annotations

import os
import tempfile
from collections.abc import Iterator
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parent.parent
SHARED = Path(os.environ.get("GPUPRICES_SHARED", REPO.parent / "shared"))
CAPTURES = SHARED / "captures"
HISTORY = SHARED / "history"

# Prefect must never touch the user's home or phone home from tests.
_PREFECT_HOME = tempfile.mkdtemp(prefix="gpuprices-prefect-")
os.environ["PREFECT_HOME"] = _PREFECT_HOME
os.environ.setdefault("PREFECT_SERVER_ANALYTICS_ENABLED", "false")
os.environ.setdefault("DO_NOT_TRACK", "1")
os.environ.setdefault("PREFECT_LOGGING_LEVEL", "WARNING")
os.environ.setdefault("PREFECT_SERVER_EPHEMERAL_STARTUP_TIMEOUT_SECONDS", "120")
os.environ.pop("PREFECT_API_URL", None)


def shared_file(*parts: str) -> Path:
    """A file under ../shared, or skip the test with the reason when it is not there."""
    path = SHARED.joinpath(*parts)
    if not path.exists():
        pytest.skip(f"{path} not present (conformance tests need ../shared beside the repo)")
    return path


@pytest.fixture(scope="session")
def prefect_harness() -> Iterator[None]:
    """One temporary Prefect API for the whole session (it takes 10-20 s to start)."""
    from prefect.testing.utilities import prefect_test_harness

    with prefect_test_harness(server_startup_timeout=180):
        yield


@pytest.fixture
def warehouse_path(tmp_path: Path) -> Path:
    return tmp_path / "wh" / "gpu_prices.duckdb"
