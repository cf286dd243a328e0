"""Every registered source's bundled example: every row validates and names a catalog GPU."""

from __future__ import annotations

from datetime import UTC, date, datetime

import pytest

from schemas.fx import Rate, convert
from schemas.observation import to_observations, validate
from scrapers.registry import all_sources

FETCHED = datetime(2026, 2, 11, 12, 0, tzinfo=UTC)
# Sources quoting euros are validated once converted (any dated rate will do here).
RATES = {"EUR": Rate(1.1532, date(2026, 2, 11))}


@pytest.mark.parametrize("name", sorted(all_sources()))
def test_every_example_row_validates_and_maps_to_a_catalog_gpu(name: str) -> None:
    source = all_sources()[name]
    capture = source.example_capture(FETCHED)
    converted = convert(to_observations(source.parse(capture), capture, run_id="t"), RATES,
                        FETCHED.date())
    assert converted.held.height == 0
    batch = validate(converted.rows)
    assert batch.good.height > 0
    assert batch.quarantined.height == 0, batch.quarantined.select("offering", "failed_check")
    assert "unknown" not in batch.good["gpu_model"].to_list()
