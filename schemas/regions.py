"""Where a provider region is: its geography (US, Canada, EU, UK, APAC, LATAM, MEA, global).

The map is data: schemas/regions.csv (provider, region or glob, geography) and
schemas/countries.csv (ISO code, English name, geography). `geo_of(provider, region)` reads
them in a fixed order, the first match wins:

1. the provider's rows whose region is written out ("eu-west-2"), then its globs ("eu-*") in
   file order (so a written-out exception comes before its family);
2. the same for provider "*" (rows for any provider: "global");
3. a country: the region itself, or its last comma-separated part ("Texas, US",
   "Chubbuck, Idaho, United States", "US"), as an ISO code or an English name.

Matching ignores case. A region none of these places has no geography (None): it is reported
as such, never guessed. `with_geo` adds the column to a frame of (provider, region) rows,
resolving each distinct pair once. The `--geo` filters and the per-geography market read this.
"""

from __future__ import annotations

import csv
from dataclasses import dataclass
from fnmatch import fnmatchcase
from functools import cache
from pathlib import Path
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    import polars as pl

__all__ = ["COUNTRIES_PATH", "GEOGRAPHIES", "REGIONS_PATH", "RegionMapError", "geo_of",
           "with_geo"]

REGIONS_PATH = Path(__file__).with_name("regions.csv")
COUNTRIES_PATH = Path(__file__).with_name("countries.csv")
GEOGRAPHIES = ("US", "Canada", "EU", "UK", "APAC", "LATAM", "MEA", "global")
ANY_PROVIDER = "*"


class RegionMapError(ValueError):
    """regions.csv or countries.csv has a row that breaks a rule (the message names it)."""


@dataclass(frozen=True, slots=True)
class _Rules:
    exact: dict[tuple[str, str], str]  # (provider, region) -> geo, lower case
    globs: dict[str, list[tuple[str, str]]]  # provider -> [(pattern, geo)] in file order
    countries: dict[str, str]  # code or name, lower case -> geo


def _rows(path: Path) -> list[dict[str, str]]:
    with path.open(encoding="utf-8", newline="") as handle:
        lines = [line for line in handle if line.strip() and not line.startswith("#")]
    return list(csv.DictReader(lines))


def _geo(value: str, where: str) -> str:
    if value not in GEOGRAPHIES:
        raise RegionMapError(f"{where}: geography {value!r} is not one of "
                             f"{', '.join(GEOGRAPHIES)}")
    return value


@cache
def _rules() -> _Rules:
    exact: dict[tuple[str, str], str] = {}
    globs: dict[str, list[tuple[str, str]]] = {}
    for number, row in enumerate(_rows(REGIONS_PATH), start=2):
        where = f"{REGIONS_PATH.name} row {number}"
        provider, region = row["provider"].strip().lower(), row["region"].strip().lower()
        if not provider or not region:
            raise RegionMapError(f"{where}: provider and region are required")
        geo = _geo(row["geo"].strip(), where)
        if any(c in region for c in "*?["):
            globs.setdefault(provider, []).append((region, geo))
        elif exact.setdefault((provider, region), geo) != geo:
            raise RegionMapError(f"{where}: {provider} {region} is mapped twice")
    countries: dict[str, str] = {}
    for number, row in enumerate(_rows(COUNTRIES_PATH), start=2):
        geo = _geo(row["geo"].strip(), f"{COUNTRIES_PATH.name} row {number}")
        for key in (row["code"], row["name"]):
            countries[key.strip().lower()] = geo
    return _Rules(exact, globs, countries)


def _by_rules(rules: _Rules, provider: str, region: str) -> str | None:
    for who in (provider, ANY_PROVIDER):
        if (who, region) in rules.exact:
            return rules.exact[(who, region)]
        for pattern, geo in rules.globs.get(who, ()):
            if fnmatchcase(region, pattern):
                return geo
    return None


def geo_of(provider: str | None, region: str | None) -> str | None:
    """The geography of `region` as `provider` names it; None when the map does not say."""
    if not region or not region.strip():
        return None
    rules = _rules()
    key = region.strip().lower()
    found = _by_rules(rules, (provider or "").strip().lower(), key)
    if found is not None:
        return found
    country = key.rsplit(",", 1)[-1].strip()
    return rules.countries.get(country)


def with_geo(frame: pl.DataFrame, *, provider: str = "provider", region: str = "region",
             name: str = "geo") -> pl.DataFrame:
    """`frame` with a `geo` column (null where the map does not place the region)."""
    import polars as pl

    pairs = frame.select(provider, region).unique()
    mapped = pairs.with_columns(
        pl.struct(provider, region)
        .map_elements(lambda r: geo_of(r[provider], r[region]), return_dtype=pl.String)
        .alias(name))
    return frame.join(mapped, on=[provider, region], how="left", nulls_equal=True,
                      maintain_order="left")
