"""Region -> geography (schemas/regions.py): the region names real sources write, the order
rules apply in, what stays unplaced, and a data file that breaks a rule."""

from __future__ import annotations

from pathlib import Path

import polars as pl
import pytest

from schemas import regions
from schemas.regions import GEOGRAPHIES, RegionMapError, geo_of, with_geo


@pytest.mark.parametrize(("provider", "region", "geo"), [
    ("aws", "us-east-1", "US"), ("aws", "eu-west-2", "UK"), ("aws", "eu-central-1", "EU"),
    ("aws", "ca-central-1", "Canada"), ("aws", "ap-northeast-1", "APAC"),
    ("aws", "sa-east-1", "LATAM"), ("aws", "me-central-1", "MEA"),
    ("azure", "eastus2", "US"), ("azure", "westeurope", "EU"), ("azure", "uksouth", "UK"),
    ("azure", "centralindia", "APAC"), ("azure", "brazilsouth", "LATAM"),
    ("gcp", "us-central1", "US"), ("gcp", "europe-west2", "UK"), ("gcp", "europe-west4", "EU"),
    ("gcp", "northamerica-northeast1", "Canada"), ("gcp", "asia-southeast1", "APAC"),
    ("vastai", "Texas, US", "US"), ("vastai", "Quebec, CA", "Canada"),
    ("vastai", "Bavaria, DE", "EU"), ("vastai", "Sweden, SE", "EU"),
    ("vastai", "Guangxi, CN", "APAC"),
    ("coreweave", "north-america", "US"), ("coreweave", "europe", "EU"),
    ("lambda", "us-south-2", "US"), ("lambda", "europe-central-1", "EU"),
    ("lambda", "asia-northeast-1", "APAC"),
    ("scaleway", "fr-par-2", "EU"), ("scaleway", "nl-ams-1", "EU"), ("scaleway", "pl-waw-2", "EU"),
    ("ovh", "GRA9", "EU"), ("ovh", "SBG5", "EU"), ("ovh", "BHS5", "Canada"), ("ovh", "UK1", "UK"),
    ("runpod", "US", "US"), ("runpod", "EU-RO-1", "EU"),
    ("paperspace", "East Coast (NY2)", "US"), ("paperspace", "Europe (AMS1)", "EU"),
    ("linode", "Chubbuck, Idaho, United States", "US"),
    ("modal", "global", "global"), ("anyone", "GLOBAL", "global"),
])
def test_regions_sources_write_have_their_geography(provider: str, region: str, geo: str
                                                    ) -> None:
    assert geo_of(provider, region) == geo
    assert geo in GEOGRAPHIES


def test_a_provider_rule_is_not_applied_to_another_provider() -> None:
    assert geo_of("scaleway", "fr-par-2") == "EU"
    assert geo_of("aws", "fr-par-2") is None  # not an AWS region: unplaced, never guessed


@pytest.mark.parametrize("region", ["unknown", "IN1", "", None, "Somewhere, XX"])
def test_what_the_map_does_not_place_has_no_geography(region: str | None) -> None:
    assert geo_of("vastai", region) is None


def test_with_geo_adds_the_column_once_per_pair() -> None:
    frame = pl.DataFrame({"provider": ["aws", "aws", "vastai", "x"],
                          "region": ["eu-west-2", "eu-west-2", "Texas, US", None],
                          "price": [1.0, 2.0, 3.0, 4.0]})
    assert with_geo(frame)["geo"].to_list() == ["UK", "UK", "US", None]
    assert with_geo(frame)["price"].to_list() == [1.0, 2.0, 3.0, 4.0]


def test_a_row_with_an_unknown_geography_is_refused(tmp_path: Path,
                                                    monkeypatch: pytest.MonkeyPatch) -> None:
    bad = tmp_path / "regions.csv"
    bad.write_text("provider,region,geo\naws,us-*,America\n", encoding="utf-8")
    monkeypatch.setattr(regions, "REGIONS_PATH", bad)
    regions._rules.cache_clear()
    try:
        with pytest.raises(RegionMapError, match="row 2: geography 'America'"):
            geo_of("aws", "us-east-1")
    finally:
        monkeypatch.undo()
        regions._rules.cache_clear()


def test_every_region_in_the_bundled_examples_is_placed_or_known_unplaced() -> None:
    """The map covers what the sources write today (Vast's 'unknown' host is no place)."""
    from scrapers.registry import all_sources

    unplaced = set()
    for source in all_sources().values():
        frame = source.parse(source.example_capture()).select("provider", "region").unique()
        frame = frame.with_columns(pl.col("provider").fill_null(source.provider))
        unplaced |= {(p, r) for p, r in frame.rows() if geo_of(p, r) is None}
    # JarvisLabs' "IN1" (via OpenComputePrices) is not documented anywhere we could check
    assert unplaced <= {("vastai", "unknown"), ("jarvislabs", "IN1")}, unplaced
