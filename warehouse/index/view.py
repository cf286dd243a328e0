"""THE market table as a view of the index, in SQL: per GPU model and segment, the on-demand
index of the day (NULL = no index, `withheld_reason` its reason), its band, panel and method,
beside the day's offer statistics (market_price: the two-stage median, min, p25, p75, max,
providers, offers, dispersion). warehouse.index.read.market_view runs it over the day's stored
or computed rows; `market` prints a stored, fixed day's table from it without polars
(start-up: issue 23)."""

from __future__ import annotations

from collections.abc import Callable
from contextlib import closing
from datetime import date
from typing import TYPE_CHECKING

from warehouse.frames import rounded_sql, scanned_once, sql_frame

if TYPE_CHECKING:
    import duckdb
    import polars as pl

__all__ = ["MARKET_VIEW", "NO_VOTE", "market_table", "market_table_sql", "stored_view_query"]

# Why a GPU model and segment with offer statistics has no fixing.
NO_VOTE = "no index: no fresh print of it (every offer carried forward or left out)"
# `{stats}`: rows with market_price's columns (computed_at aside) of the day; `{fixings}`:
# rows with index_fixing's columns, the day's on-demand fixings of every geography ('all').
MARKET_VIEW = """
WITH idx AS (
    SELECT gpu_model, segment, value AS index_usd, withheld_reason AS index_reason,
           band_low AS band_low_usd_per_gpu_hour, band_high AS band_high_usd_per_gpu_hour,
           panel, fresh AS panel_fresh, carried AS panel_carried, method_version, fixing_id
    FROM ({fixings}) WHERE term_months = 0
)
SELECT $day::DATE AS day, gpu_model, segment, i.index_usd AS market_usd_per_gpu_hour,
       i.band_low_usd_per_gpu_hour, i.band_high_usd_per_gpu_hour, i.panel,
       s.median_usd_per_gpu_hour, s.min_usd_per_gpu_hour, s.p25_usd_per_gpu_hour,
       s.p75_usd_per_gpu_hour, s.max_usd_per_gpu_hour, s.providers, s.offers, s.dispersion,
       s.carried_providers, s.pricing, i.panel_fresh, i.panel_carried, i.method_version,
       i.fixing_id,
       CASE WHEN i.fixing_id IS NULL THEN $no_vote ELSE i.index_reason END AS withheld_reason,
       $index_status AS index_status
FROM ({stats}) s FULL JOIN idx i USING (gpu_model, segment)
ORDER BY gpu_model, segment <> 'all', segment
"""
_STORED_STATS = """
SELECT * EXCLUDE (computed_at) FROM market_price
WHERE day = $day AND ($models IS NULL OR list_contains($models, gpu_model))
  AND ($segment IS NULL OR segment = $segment)
"""
_FIXED = """
SELECT * FROM index_fixing
WHERE day = $day AND kind = 'on_demand' AND geo = 'all'
  AND ($models IS NULL OR list_contains($models, gpu_model))
  AND ($segment IS NULL OR segment = $segment)
"""


def stored_view_query(con: duckdb.DuckDBPyConnection, day: date,
                      gpu_models: list[str] | None = None, segment: str | None = None
                      ) -> tuple[str, dict[str, object]] | None:
    """MARKET_VIEW over the stored offer statistics and the published fixings of `day`, and
    its parameters; None when the day is not fixed or its statistics are not stored (the
    view is then computed: warehouse.index.read.market_view)."""
    params: dict[str, object] = {"day": day, "models": gpu_models, "segment": segment}
    fixed = con.execute("SELECT count(*) FROM index_day WHERE day = $day",
                        {"day": day}).fetchone()
    if fixed == (0,) or con.execute(f"SELECT count(*) FROM ({_STORED_STATS})",
                                    params).fetchone() == (0,):
        return None
    sql = MARKET_VIEW.format(stats=_STORED_STATS, fixings=_FIXED)
    return sql, params | {"no_vote": NO_VOTE, "index_status": "published"}


def market_table_sql(view: str, label: Callable[[str], str] = str,
                     per_geo: bool = False) -> str:
    """What `market` shows of `view` (MARKET_VIEW's columns, amounts named by `label`, a
    `geo` column first with `per_geo`): amounts rounded to 3 places and dispersion to 2, as
    polars rounds them (rounded_sql)."""
    def money(column: str, shown: str) -> str:  # a column named for its currency
        quoted = '"' + label(column) + '"'
        return f"{rounded_sql(quoted, 3)} AS {shown}"

    return (f"SELECT {'geo, ' if per_geo else ''}day, gpu_model AS gpu, segment, "
            f"{money('market_usd_per_gpu_hour', 'market')}, "
            f"{money('min_usd_per_gpu_hour', 'min')}, {money('p25_usd_per_gpu_hour', 'p25')}, "
            f"{money('p75_usd_per_gpu_hour', 'p75')}, providers, offers, "
            f"{rounded_sql('dispersion', 2)} AS dispersion, carried_providers AS carried, "
            f"withheld_reason AS withheld FROM ({view})")


def market_table(view: pl.DataFrame, label: Callable[[str], str] = str,
                 per_geo: bool = False) -> pl.DataFrame:
    """market_table_sql over a frame of the view (a day computed now, a place, per
    geography, amounts in another currency)."""
    import duckdb

    with closing(duckdb.connect()) as con, scanned_once(con, "_market_view", view):
        return sql_frame(con, market_table_sql("SELECT * FROM _market_view", label, per_geo))
