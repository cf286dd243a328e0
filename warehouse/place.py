"""WHERE an offer is: the one region / geography filter every ranking and aggregate applies.

A `Place` is the regions and geographies asked for (`--region`, `--geo`); empty means
everywhere. An offer is in the place when its region is one of the regions (without case) and
its geography (schemas.regions.geo_of, the one map of regions to geographies) is one of the
geographies. A region the map does not place has no geography: it is in no geography asked
for. A price a source quotes for every region ("global") is in the geography `global` only:
`--geo EU` asks for offers placed in the EU (add `--geo global` for the rest).

The same test is applied in SQL (`Place.sql`, on the offers before any rule or median, so a
cheapest, a market price and a ranking of one place are made of the same offers) and on
frames (`Place.keep`), both through geo_of: in SQL as the function `region_geo(provider,
region)` that `register` adds to a connection.
"""

from __future__ import annotations

from dataclasses import dataclass
from functools import lru_cache
from typing import TYPE_CHECKING

import duckdb

from schemas.regions import GEOGRAPHIES, geo_of

if TYPE_CHECKING:
    import polars as pl

__all__ = ["EVERYWHERE", "GEO_FUNCTION", "Place", "UnknownGeography", "register"]

GEO_FUNCTION = "region_geo"


class UnknownGeography(ValueError):
    """A geography not in schemas.regions.GEOGRAPHIES (the message lists them)."""


@lru_cache(maxsize=65536)
def _geo(provider: str | None, region: str | None) -> str | None:
    return geo_of(provider, region)


def register(con: duckdb.DuckDBPyConnection) -> None:
    """Add region_geo(provider, region) -> geography to this connection (once)."""
    found = con.execute("SELECT count(*) FROM system.main.duckdb_functions() "
                        "WHERE function_name = $name", {"name": GEO_FUNCTION}).fetchone()
    if found and found[0]:  # already there: a connection keeps its functions
        return
    con.create_function(GEO_FUNCTION, _geo, ["VARCHAR", "VARCHAR"], "VARCHAR",
                        null_handling="special", side_effects=False)


@dataclass(frozen=True, slots=True)
class Place:
    """Regions and geographies asked for; empty tuples mean any."""

    regions: tuple[str, ...] = ()
    geos: tuple[str, ...] = ()

    def __post_init__(self) -> None:
        known = {g.lower(): g for g in GEOGRAPHIES}
        unknown = [g for g in self.geos if g.lower() not in known]
        if unknown:
            raise UnknownGeography(f"unknown geography {', '.join(unknown)}; one of "
                                   f"{', '.join(GEOGRAPHIES)}")
        object.__setattr__(self, "geos", tuple(dict.fromkeys(known[g.lower()]
                                                              for g in self.geos)))
        object.__setattr__(self, "regions", tuple(dict.fromkeys(
            r.strip().lower() for r in self.regions if r.strip())))

    @classmethod
    def of(cls, regions: list[str] | tuple[str, ...] | None = None,
           geos: list[str] | tuple[str, ...] | None = None) -> Place:
        return cls(tuple(regions or ()), tuple(geos or ()))

    @property
    def everywhere(self) -> bool:
        return not self.regions and not self.geos

    def describe(self) -> str:
        """'region us-east-1; geography EU' ('' for everywhere): for titles."""
        parts = []
        if self.regions:
            parts.append(f"region {', '.join(self.regions)}")
        if self.geos:
            parts.append(f"geography {', '.join(self.geos)}")
        return "; ".join(parts)

    def sql(self, provider: str = "provider", region: str = "region") -> str:
        """A condition on the two columns (parameters $place_regions, $place_geos); TRUE for
        everywhere. The connection needs `register`."""
        conditions = []
        if self.regions:
            conditions.append(f"list_contains($place_regions, lower({region}))")
        if self.geos:
            conditions.append(f"list_contains($place_geos, {GEO_FUNCTION}({provider}, "
                              f"{region}))")
        return " AND ".join(conditions) or "true"

    def params(self) -> dict[str, object]:
        params: dict[str, object] = {}
        if self.regions:
            params["place_regions"] = list(self.regions)
        if self.geos:
            params["place_geos"] = list(self.geos)
        return params

    def keep(self, frame: pl.DataFrame, *, provider: str = "provider",
             region: str = "region") -> pl.DataFrame:
        """The rows of `frame` in the place (the same test as `sql`)."""
        if self.everywhere or frame.height == 0:
            return frame
        import polars as pl

        keep = pl.lit(True)
        if self.regions:
            keep &= pl.col(region).str.to_lowercase().is_in(list(self.regions))
        if self.geos:
            geo = pl.struct(provider, region).map_elements(
                lambda r: _geo(r[provider], r[region]), return_dtype=pl.String)
            keep &= geo.is_in(list(self.geos)).fill_null(False)
        return frame.filter(keep.fill_null(False))


EVERYWHERE = Place()
