"""The impact report of a methodology change: every published day recomputed under proposed
parameters (warehouse.index.replay: the same prices, read at each day's published fixing
time, the proposed series advancing from its own votes), compared fixing by fixing with what
was published. Nothing is written: a new version only ever applies forward."""

from __future__ import annotations

from datetime import date

import duckdb
import polars as pl

from reports.index.tables import kind_label
from warehouse.index.params import IndexParams
from warehouse.index.replay import replay
from warehouse.index.store import read_fixings

__all__ = ["impact_report"]

_KEY = ["gpu_model", "kind", "term_months", "segment", "geo"]


def impact_report(con: duckdb.DuckDBPyConnection, proposed: IndexParams, *,
                  gpu_models: list[str] | None = None, since: date | None = None,
                  until: date | None = None) -> tuple[pl.DataFrame, pl.DataFrame]:
    """(per series summary, every changed fixing) of `proposed` against the published days."""
    moments = dict(con.execute(
        "SELECT day, as_of FROM index_day WHERE ($since IS NULL OR day >= $since) "
        "AND ($until IS NULL OR day <= $until) ORDER BY day",
        {"since": since, "until": until}).fetchall())
    days = sorted(moments)
    if not days:
        empty = pl.DataFrame(schema={"gpu": pl.String})
        return empty, empty
    frames = [step.fixings[0] for step in replay(con, [proposed], days, moments=moments)]
    new = pl.concat(frames).select(
        "fixing_id", *_KEY, "day", pl.col("value").alias("new"),
        pl.col("withheld_reason").alias("new_reason"))
    old = read_fixings(con, since=days[0], until=days[-1], gpu_models=gpu_models).select(
        "fixing_id", *_KEY, "day", pl.col("value").alias("published"),
        pl.col("withheld_reason").alias("published_reason"))
    if gpu_models:
        new = new.filter(pl.col("gpu_model").is_in(gpu_models))
    both = old.join(new, on=["fixing_id", *_KEY, "day"], how="full", coalesce=True)
    both = both.with_columns(
        ((pl.col("new") / pl.col("published") - 1) * 100).round(3).alias("change_pct"),
        (pl.col("published").is_not_null() & pl.col("new").is_null()).alias("now_withheld"),
        (pl.col("published").is_null() & pl.col("new").is_not_null()).alias("now_published"))
    changed = both.filter(
        pl.col("now_withheld") | pl.col("now_published")
        | (pl.col("change_pct").abs() > 1e-6)).sort(
        pl.col("change_pct").abs(), descending=True, nulls_last=False)
    summary = both.group_by(_KEY).agg(
        pl.len().alias("days"),
        (pl.col("change_pct").abs() > 1e-6).sum().alias("days_changed"),
        pl.col("change_pct").abs().mean().round(3).alias("mean_abs_change_pct"),
        pl.col("change_pct").abs().max().round(3).alias("max_abs_change_pct"),
        pl.col("now_withheld").sum().alias("now_withheld"),
        pl.col("now_published").sum().alias("now_published"),
    ).filter((pl.col("days_changed") > 0) | (pl.col("now_withheld") > 0)
             | (pl.col("now_published") > 0) | (pl.col("segment") == "all")
             & (pl.col("geo") == "all")).sort(_KEY)
    summary = summary.select(pl.col("gpu_model").alias("gpu"), kind_label().alias("kind"),
                             "segment", "geo", "days", "days_changed", "mean_abs_change_pct",
                             "max_abs_change_pct", "now_withheld", "now_published")
    changes = changed.select("day", pl.col("gpu_model").alias("gpu"), kind_label().alias("kind"),
                             "segment", "geo", pl.col("published").round(4),
                             pl.col("new").round(4), "change_pct",
                             pl.coalesce("new_reason", "published_reason").alias("reason"))
    return summary, changes
