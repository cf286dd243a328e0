"""The docs parser on the real hub-docs markdown captures (../shared/captures/huggingface/),
with counts and prices checked by hand against the files."""

from __future__ import annotations

from datetime import UTC, datetime

import pytest

from contract import RawCapture
from schemas.observation import to_observations, validate
from scrapers.huggingface_docs import SOURCES
from scrapers.huggingface_jobs import SOURCE as JOBS
from tests.conftest import shared_file

pytestmark = pytest.mark.conformance
DOCS, SPACES = SOURCES


def _parse(name: str, source=DOCS):
    path = shared_file("captures", "huggingface", name)
    raw = RawCapture(source=source.name, url=source.url, fetched_at=datetime.now(UTC),
                     body=path.read_bytes())
    return raw, source.parse(raw)


def test_jobs_pricing_capture() -> None:
    raw, frame = _parse("jobs-pricing_2026-08-21.md")
    assert frame.height == 22  # 22 GPU rows; 4 CPU rows and "Exposed ports" skipped
    prices = dict(zip(frame["offering"], frame["price_usd_per_hour"], strict=True))
    assert prices["h200"] == 5.0 and prices["h200x8"] == 40.0
    assert prices["rtx-pro-6000"] == 2.75 and prices["l40sx8"] == 23.5
    assert prices["a100x4"] == 10.0
    batch = validate(to_observations(frame, raw, "run"))
    assert batch.quarantined.height == 0
    assert set(batch.good["gpu_model"]) == {
        "T4", "L4", "L40S", "A10G", "A100 80GB", "H200 SXM", "RTX PRO 6000"}


def test_spaces_capture_skips_removed_h100() -> None:
    raw, frame = _parse("spaces-gpus_2026-07-21.md", SPACES)
    assert frame.height == 14  # the two struck-through H100 rows are not prices
    assert "h100" not in set(frame["offering"])
    prices = dict(zip(frame["offering"], frame["price_usd_per_hour"], strict=True))
    assert prices["t4-small"] == 0.40 and prices["a100x8"] == 20.0
    assert validate(to_observations(frame, raw, "run")).quarantined.height == 0


def test_api_example_agrees_with_the_captured_jobs_docs() -> None:
    _, docs = _parse("jobs-pricing_2026-08-21.md")
    api = JOBS.parse(JOBS.example_capture())
    joined = api.join(docs, on="offering", suffix="_docs")
    assert joined.height == api.height  # every API flavor of the example is in the docs
    for row in joined.to_dicts():
        assert row["price_usd_per_hour"] == pytest.approx(row["price_usd_per_hour_docs"])
