"""The index's fixings and votes as the command line shows them (presentation only: every
number is a stored fixing or one computed by warehouse/index the same way)."""

from __future__ import annotations

from contextlib import closing
from typing import TYPE_CHECKING

from warehouse.frames import rounded_sql, scanned_once, sql_frame

if TYPE_CHECKING:  # reproducing parses archives (pandera, httpx): never a plain `index` read
    import polars as pl  # where a frame is shaped: a fixed day's table prints without it

    from warehouse.index.reproduce import Reproduction

__all__ = ["FIXINGS_TABLE", "INDEX_AMOUNTS", "VOTE_AMOUNTS", "fixings_table", "kind_label",
           "reproduce_lines", "term_curve", "votes_table"]

# The USD amounts of a fixing and of a vote (--currency converts them; the index is fixed in USD).
INDEX_AMOUNTS = ("value", "band_low", "band_high")
VOTE_AMOUNTS = ("value", "sd")


def kind_label() -> pl.Expr:
    """on_demand, spot, or "reserved 12m"."""
    import polars as pl

    return (pl.when(pl.col("kind") == "reserved")
            .then(pl.format("reserved {}m", pl.col("term_months")))
            .otherwise(pl.col("kind")))


# One row per fixing as `index` shows it, over `{fixings}` (rows with index_fixing's
# columns): the value and band rounded to 4 places as polars rounds (rounded_sql; a DOUBLE
# prints as polars formats it), the band only where there is an index.
FIXINGS_TABLE = f"""
SELECT day, gpu_model AS gpu,
       CASE WHEN kind = 'reserved' THEN 'reserved ' || term_months || 'm' ELSE kind END
           AS kind,
       segment, geo, {rounded_sql("value", 4)} AS "index",
       CASE WHEN value IS NOT NULL THEN {rounded_sql("band_low", 4)}::VARCHAR || '-'
                                        || {rounded_sql("band_high", 4)}::VARCHAR END AS band,
       panel, carried, flagged, withheld_reason AS "no index because", method_version AS method
FROM ({{fixings}})
"""


def fixings_table(fixings: pl.DataFrame) -> pl.DataFrame:
    """One row per fixing: the value, its band, the panel (carried votes counted in it), the
    votes kept out, why there is no index, the methodology version (FIXINGS_TABLE)."""
    import duckdb

    with closing(duckdb.connect()) as con, scanned_once(con, "_fixings", fixings):
        return sql_frame(con, FIXINGS_TABLE.format(fixings="SELECT * FROM _fixings"))


def votes_table(votes: pl.DataFrame) -> pl.DataFrame:
    """Every vote of a fixing: the provider's print, its spread and weight, its flags."""
    import polars as pl

    return votes.select(
        "provider", pl.col("provider_segment").alias("segment"),
        pl.col("value").round(4).alias("print"),
        pl.when(pl.col("currency") != "USD")
        .then(pl.format("{} {}", pl.col("native_value").round(4), pl.col("currency")))
        .alias("quoted"),
        pl.col("sd").round(4), pl.col("weight").round(4), "passing",
        pl.when(pl.col("fresh")).then(pl.lit("today"))
        .otherwise(pl.format("carried from {}", pl.col("carried_from"))).alias("print of"),
        "flags", "offers", "sources", "note")


def term_curve(fixings: pl.DataFrame) -> pl.DataFrame:
    """Per GPU: the on-demand index, spot, and each reserved term's index (NULL: no index)."""
    import polars as pl

    rows = fixings.filter((pl.col("segment") == "all") & (pl.col("geo") == "all")).with_columns(
        kind_label().alias("label"))
    if rows.height == 0:
        return pl.DataFrame(schema={"gpu": pl.String})
    order = ["on_demand", "spot", *[f"reserved {t}m" for t in
                                    sorted(rows.filter(pl.col("kind") == "reserved")
                                           ["term_months"].unique().to_list())]]
    wide = rows.pivot(on="label", index="gpu_model", values="value",
                      aggregate_function="first").rename({"gpu_model": "gpu"})
    shown = [c for c in order if c in wide.columns]
    return (wide.select("gpu", *[pl.col(c).round(4) for c in shown])
            .filter(pl.any_horizontal(pl.col(c).is_not_null() for c in shown)).sort("gpu"))


def reproduce_lines(results: list[Reproduction], gpu_label: str) -> list[str]:
    """The `reproduce index` report: per day SAME, or each difference; notes after."""
    lines: list[str] = []
    for result in results:
        head = f"{gpu_label} {result.day}"
        if result.as_of is not None:
            head += (f" (fixed as of {result.as_of:%Y-%m-%d %H:%M:%S} UTC, method "
                     f"{result.method_version})")
        if result.ok:
            lines.append(f"SAME  {head}: {result.same} of {result.compared} fixings "
                         "recomputed from the archived captures")
        elif not result.differences:
            lines.append(f"NONE  {head}: no published fixing of it that day")
        else:
            lines.append(f"DIFFERENT  {head}: {len(result.differences)} difference(s)")
            lines += [f"  {line}" for line in result.differences]
        lines += [f"  note: {note}" for note in result.notes]
    return lines
