"""The availability table as `gpuprices availability` prints it, in SQL over the rows of
warehouse.semantic_stock's AVAILABILITY: each region's geography (schemas.regions.geo_of,
as the frames' `geo` column: looked up in parameters, as a Python function in SQL would load
numpy), runs in stock of runs, the share in stock in % (rounded as polars rounds:
warehouse.frames.rounded_sql), the last run in stock to the minute, the state now. Printed
from DuckDB's rows, without polars (start-up: issue 23)."""

from __future__ import annotations

from collections.abc import Iterable

from schemas.regions import geo_of
from warehouse.frames import rounded_sql

__all__ = ["AVAILABILITY_TABLE", "geo_params"]

# A provider and region as one key of $geo_keys (the unit and record separators: in no name).
_KEY = "provider || chr(31) || coalesce(region, chr(30))"
# `{series}`: a table, view or parenthesised query of AVAILABILITY's rows; its parameters:
# geo_params(the rows' providers and regions).
AVAILABILITY_TABLE = f"""
SELECT gpu_model AS gpu, provider, region,
       $geo_names[list_position($geo_keys, {_KEY})] AS geo,
       in_stock_observations || '/' || observations AS "runs in stock",
       {rounded_sql("share_in_stock * 100", 0)} AS "% in stock",
       strftime(last_in_stock, '%Y-%m-%d %H:%M') AS "last in stock", state AS now,
       gpus_free AS "GPUs free", source
FROM {{series}}
"""


def geo_params(pairs: Iterable[tuple[str, str | None]]) -> dict[str, list[str | None]]:
    """The geography of each (provider, region) as AVAILABILITY_TABLE reads it."""
    listed = sorted(set(pairs), key=lambda pair: (pair[0], pair[1] or ""))
    return {"geo_keys": [f"{p}\x1f{chr(30) if r is None else r}" for p, r in listed],
            "geo_names": [geo_of(p, r) for p, r in listed]}
