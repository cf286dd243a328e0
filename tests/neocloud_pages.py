"""Small helpers for the neocloud page-source tests (crusoe, nebius, hyperstack, fluidstack,
datacrunch): build a capture from HTML text, read it with skip counts, validate it."""

from __future__ import annotations

from datetime import UTC, datetime
from pathlib import Path
from types import ModuleType

import httpx
import polars as pl

from contract import HttpSettings, RawCapture, Skips
from schemas.observation import to_observations, validate

FETCHED = datetime(2026, 3, 2, tzinfo=UTC)


def capture(module: ModuleType, body: str | bytes, fetched: datetime = FETCHED) -> RawCapture:
    data = body.encode() if isinstance(body, str) else body
    return RawCapture(source=module.NAME, url=module.URL, fetched_at=fetched, body=data)


def read(module: ModuleType, body: str | bytes, fetched: datetime = FETCHED,
         ) -> tuple[pl.DataFrame, str, Skips]:
    """Rows (validated, with gpu_model), the strategy used, and the skip counts."""
    raw = capture(module, body, fetched)
    parsed = module.SOURCE.parse_report(raw)
    batch = validate(to_observations(parsed.frame, raw, run_id="test"))
    assert batch.quarantined.height == 0, batch.quarantined.select("offering", "failed_check")
    assert batch.good.height == parsed.frame.height
    return batch.good, parsed.strategy, parsed.skips


def example(module: ModuleType) -> tuple[pl.DataFrame, str, Skips]:
    return read(module, module.SOURCE.example.read_bytes())


def price(frame: pl.DataFrame, offering: str, pricing: str = "on_demand") -> dict[str, object]:
    rows = frame.filter((pl.col("offering") == offering) & (pl.col("pricing") == pricing))
    assert rows.height == 1, (offering, pricing, rows)
    return rows.row(0, named=True)


def announced(frame: pl.DataFrame, offering: str) -> dict[str, object]:
    """The one announced price (a row with effective_from) of an on-demand offering."""
    rows = frame.filter((pl.col("offering") == offering) & (pl.col("pricing") == "on_demand")
                        & pl.col("effective_from").is_not_null())
    assert rows.height == 1, (offering, rows)
    return rows.row(0, named=True)


def fetched_url(module: ModuleType) -> str:
    """The URL fetch asks for when the source's base URL is overridden."""
    seen: list[str] = []

    def handler(request: httpx.Request) -> httpx.Response:
        seen.append(str(request.url))
        return httpx.Response(200, text="<html></html>", headers={"content-type": "text/html"})

    settings = HttpSettings(base_urls={module.NAME: "http://127.0.0.1:9"})
    with httpx.Client(transport=httpx.MockTransport(handler)) as client:
        raw = module.fetch(client, settings)
    assert raw.source == module.NAME and raw.body == b"<html></html>"
    return seen[0]


def capture_files(provider: str) -> list[Path]:
    """Every capture of a provider in ../shared (a placeholder that skips when absent); the
    answer keys beside them (`*.expected.csv`) are not captures."""
    from tests.conftest import CAPTURES

    folder = CAPTURES / provider
    return sorted(p for p in folder.glob("*") if p.is_file()
                  and not p.name.endswith(".expected.csv")) if folder.is_dir() else [
        folder / "missing.html"]


def check_capture(module: ModuleType, path: Path, fetched: datetime = FETCHED) -> pl.DataFrame:
    """A real capture parses to rows that all validate and all name a catalog GPU."""
    from tests.conftest import shared_file

    shared_file("captures", path.parent.name, path.name)
    frame, _, _ = read(module, path.read_bytes(), fetched)
    assert frame.height > 0
    assert "unknown" not in frame["gpu_model"].to_list(), frame.filter(
        pl.col("gpu_model") == "unknown").select("offering", "gpu_name")
    assert set(frame["provider"]) == {module.NAME}
    return frame
