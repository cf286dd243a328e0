"""The backtest behind the choice of aggregate (docs/index-methodology.md, "Backtest").

Two parts, both run through the index's own engine (warehouse/index/engine.py):

1. HISTORY: every day of the warehouse's stored history replayed under each aggregate
   (warehouse.index.replay: the same prints, each series advancing from its own votes), the
   on-demand all-provider series of each GPU set against the old two-stage median (the
   market_price table). Two parameter sets: as published (carry 3 days), and `held` (each
   provider's price stands until its next capture, up to 120 days, equal weights), because
   backfilled history is sparse snapshots, not daily captures.
2. SIMULATION: for each GPU with at least 5 providers in the latest day's real panel, 150
   simulated days built on those real prices (seeded): quiet days with missing prints and
   one-day glitches (a price x0.3, x0.5, x2 or x3), a few idiosyncratic repricings, and at
   day 60 a real market move (70 % of providers cut 20 %, each on a day within a week). Each
   aggregate is judged against the true level (the median of the providers' true prices): how
   often it moved on a quiet day and how far, its worst error on a glitch day, and how many
   days it took to show half and 90 % of the real move.

Numbers for the documentation come from `gpuprices index backtest`.
"""

from __future__ import annotations

from dataclasses import replace
from datetime import date, timedelta

import duckdb
import numpy as np
import polars as pl

from warehouse.frames import sql_frame
from warehouse.index.engine import History, fix_day, frames
from warehouse.index.params import METHODS, IndexParams, default_params
from warehouse.index.prints import PRINT_SCHEMA
from warehouse.index.replay import priced_days, replay

__all__ = ["backtest_tables", "history_backtest", "simulate"]

MOVE_EPS = 0.001  # a change under 0.1 % is no move
DISAGREE = 0.05  # index and old median more than 5 % apart


def _variants(base: IndexParams, **overrides: object) -> list[IndexParams]:
    return [replace(base, method=m, **overrides) for m in METHODS]  # type: ignore[arg-type]


def _moves(series: pl.DataFrame, value: str) -> pl.DataFrame:
    """Day-over-day relative change of `value` per GPU, over days it is published."""
    return (series.filter(pl.col(value).is_not_null()).sort("gpu_model", "day")
            .with_columns((pl.col(value) / pl.col(value).shift(1).over("gpu_model") - 1)
                          .alias("change")))


def _summary(label: str, moves: pl.DataFrame, quiet: pl.DataFrame | None = None
             ) -> dict[str, object]:
    changes = moves.filter(pl.col("change").is_not_null())
    moved = changes.filter(pl.col("change").abs() > MOVE_EPS)
    row: dict[str, object] = {
        "aggregate": label, "published days": moves.height,
        "moves": moved.height,
        "mean |move| %": round(float(moved["change"].abs().mean() or 0) * 100, 2),
        "max |move| %": round(float(moved["change"].abs().max() or 0) * 100, 2),
    }
    if quiet is not None:
        on_quiet = changes.join(quiet, on=["gpu_model", "day"], how="inner")
        moved_quiet = on_quiet.filter(pl.col("change").abs() > MOVE_EPS)
        row["quiet days"] = on_quiet.height
        row["moved on quiet days"] = moved_quiet.height
        row["mean |move| quiet %"] = round(
            float(on_quiet["change"].abs().mean() or 0) * 100, 3)
    return row


def _quiet_days(votes: pl.DataFrame) -> pl.DataFrame:
    """(gpu_model, day) on which no provider's fresh print differs from its previous one."""
    fresh = votes.filter(pl.col("fresh")).sort("gpu_model", "provider", "day").with_columns(
        pl.col("value").shift(1).over("gpu_model", "provider").alias("before"))
    per_day = fresh.group_by("gpu_model", "day").agg(
        ((pl.col("before").is_not_null()) & ((pl.col("value") / pl.col("before") - 1).abs()
                                             > MOVE_EPS)).sum().alias("repriced"))
    return per_day.filter(pl.col("repriced") == 0).select("gpu_model", "day")


def history_backtest(con: duckdb.DuckDBPyConnection, *, gpu_models: list[str] | None,
                     since: date | None, until: date | None
                     ) -> list[tuple[str, pl.DataFrame]]:
    days = priced_days(con, since, until)
    if not days:
        return [("history backtest: no stored history", pl.DataFrame())]
    base = default_params()
    configs = {"as published": _variants(base),
               "held": _variants(base, carry_days=120, attendance_eta=0.0, min_fresh=1)}
    old = sql_frame(
        con, "SELECT day, gpu_model, market_usd_per_gpu_hour AS old FROM market_price "
        "WHERE segment = 'all' AND day BETWEEN $a AND $b", {"a": days[0], "b": days[-1]})
    tables: list[tuple[str, pl.DataFrame]] = []
    for name, params in configs.items():
        per_method: list[pl.DataFrame] = []
        reference_votes: list[pl.DataFrame] = []
        for step in replay(con, params, days, from_record=False):
            for method, fixings in zip(METHODS, step.fixings, strict=True):
                main = fixings.filter((pl.col("kind") == "on_demand") & (pl.col("segment") == "all")
                                      & (pl.col("geo") == "all"))
                per_method.append(main.select("day", "gpu_model", "value", "panel", "carried",
                                              "flagged").with_columns(pl.lit(method)
                                                                      .alias("method")))
            reference_votes.append(step.votes[0].filter(
                (pl.col("kind") == "on_demand") & (pl.col("segment") == "all")
                & (pl.col("geo") == "all")))
        series = pl.concat(per_method)
        if gpu_models:
            series = series.filter(pl.col("gpu_model").is_in(gpu_models))
        quiet = _quiet_days(pl.concat(reference_votes))
        rows = [_summary(m, _moves(series.filter(pl.col("method") == m), "value"), quiet)
                for m in METHODS]
        baseline = old.filter(pl.col("gpu_model").is_in(series["gpu_model"].unique().implode()))
        rows.append(_summary("old two-stage median", _moves(baseline, "old"), quiet))
        tables.append((f"history ({days[0]} .. {days[-1]}, {name}): on-demand index per GPU, "
                       "all providers", pl.DataFrame(rows)))
        chosen = series.filter(pl.col("method") == base.method).join(
            old, on=["day", "gpu_model"], how="inner")
        apart = chosen.filter(pl.col("value").is_not_null() & pl.col("old").is_not_null()
                              & ((pl.col("value") / pl.col("old") - 1).abs() > DISAGREE))
        only = chosen.filter(pl.col("value").is_null() != pl.col("old").is_null())
        tables.append((f"days the index ({base.method}, {name}) and the old median disagree "
                       f"by more than {DISAGREE:.0%}, or only one publishes",
                       pl.concat([apart, only]).sort("day", "gpu_model").select(
                           "day", "gpu_model", pl.col("value").round(4).alias("index"),
                           pl.col("old").round(4).alias("old median"), "panel", "carried",
                           "flagged")))
    return tables


# ---- simulation ---------------------------------------------------------------------------

def _latest_panels(con: duckdb.DuckDBPyConnection, min_providers: int = 5
                   ) -> dict[str, dict[str, float]]:
    """GPU -> provider -> its latest on-demand print (index_vote of the last fixed day, else
    the market's stage one of the last priced day)."""
    rows = con.execute(
        """
        SELECT gpu_model, provider, value FROM index_vote
        WHERE day = (SELECT max(day) FROM index_day) AND kind = 'on_demand'
          AND segment = 'all' AND geo = 'all' AND fresh
        """).fetchall()
    if not rows:
        rows = con.execute(
            "SELECT gpu_model, provider, median_usd_per_gpu_hour FROM market_provider_price "
            "WHERE day = (SELECT max(day) FROM market_provider_price)").fetchall()
    panels: dict[str, dict[str, float]] = {}
    for gpu, provider, value in rows:
        panels.setdefault(gpu, {})[provider] = float(value)
    return {g: p for g, p in sorted(panels.items()) if len(p) >= min_providers}


def _simulated_prints(panel: dict[str, float], rng: np.random.Generator, days: int,
                      move_day: int) -> tuple[list[list[tuple[str, float]]], list[float],
                                              list[str]]:
    """Per day: (provider, printed price) of those that printed; the true level; the day's
    kind (quiet, glitch, reprice, move)."""
    providers = sorted(panel)
    true = {p: panel[p] for p in providers}
    movers = set(rng.choice(providers, size=max(1, round(0.7 * len(providers))),
                            replace=False).tolist())
    cut_on = {p: move_day + int(rng.integers(0, 7)) for p in sorted(movers)}  # set order varies
    printed, level, kind = [], [], []
    for day in range(days):
        tag = "quiet"
        for p in providers:
            if cut_on.get(p) == day:
                true[p] *= 0.8
                tag = "move"
            elif day > 5 and rng.random() < 0.004:
                true[p] *= float(1 + rng.choice([-1, 1]) * rng.uniform(0.05, 0.15))
                tag = "reprice" if tag == "quiet" else tag
        today = []
        for p in providers:
            if rng.random() < 0.04:  # the source failed today
                continue
            price = true[p]
            if day > 25 and rng.random() < 0.01:
                price *= float(rng.choice([0.3, 0.5, 2.0, 3.0]))
                tag = "glitch" if tag == "quiet" else tag
            today.append((p, price))
        printed.append(today)
        level.append(float(np.median(list(true.values()))))
        kind.append(tag)
    return printed, level, kind


def _prints_frame(gpu: str, today: list[tuple[str, float]]) -> pl.DataFrame:
    return pl.DataFrame(
        [{"gpu_model": gpu, "kind": "on_demand", "term_months": 0, "segment": "all",
          "geo": "all", "provider": p, "provider_segment": "sim", "value": v,
          "native_value": v, "currency": "USD", "offers": 1, "via_aggregator": False,
          "sources": [p], "capture_ids": [f"sim-{p}"]} for p, v in today],
        schema=PRINT_SCHEMA)


def _mean(values: list[float | None]) -> float:
    return float(np.mean([v for v in values if v is not None]))


def simulate(con: duckdb.DuckDBPyConnection, *, gpu_models: list[str] | None = None,
             days: int = 150, move_day: int = 60, seed: int = 7,
             params: IndexParams | None = None) -> pl.DataFrame:
    """Per aggregate, over every simulated GPU (see the module docstring), under `params`
    (default: the published ones) with each aggregate in turn."""
    base = replace(params or default_params(), segments=False, geographies=False, band=True)
    panels = _latest_panels(con)
    if gpu_models:
        panels = {g: p for g, p in panels.items() if g in gpu_models}
    stats: dict[str, dict[str, list[float]]] = {m: {} for m in (*METHODS, "old two-stage median")}
    start = date(2030, 1, 1)
    for n, (gpu, panel) in enumerate(panels.items()):
        rng = np.random.default_rng(seed + n)
        printed, level, kind = _simulated_prints(panel, rng, days, move_day)
        series: dict[str, list[float | None]] = {}
        for method in METHODS:
            params = replace(base, method=method)
            history = History(genesis=start)
            values: list[float | None] = []
            for i, today in enumerate(printed):
                day = start + timedelta(days=i)
                f, v = frames(fix_day(day, _prints_frame(gpu, today), history, params))
                history.add(v)
                values.append(f["value"][0] if f.height else None)
            series[method] = values
        series["old two-stage median"] = [float(np.median([v for _, v in t])) if len(t) >= 3
                                          else None for t in printed]
        for method, values in series.items():
            s = stats[method]
            for i in range(1, days):
                a, b = values[i - 1], values[i]
                if a is None or b is None:
                    continue
                change = abs(b / a - 1)
                if kind[i] == "quiet" and kind[i - 1] == "quiet":
                    s.setdefault("quiet", []).append(change)
                if kind[i] == "glitch" and kind[i - 1] == "quiet":
                    s.setdefault("glitch", []).append(change)  # no true move that day
            errors = [abs(v / t - 1) for v, t in zip(values, level, strict=True)
                      if v is not None]
            s.setdefault("error", []).extend(errors)
            # speed: days until the aggregate shows half and 90 % of ITS OWN move (its level
            # 25-30 days after the move began against the 5 days before), so an aggregate is
            # not scored on how far it moves (the central third moves less than the median
            # when 30 % of providers hold their price), only on how soon
            start_value = _mean(values[move_day - 5:move_day])
            target = _mean(values[move_day + 25:move_day + 30]) - start_value
            for share, name in ((0.5, "half"), (0.9, "ninety")):
                reached = next((i - move_day for i in range(move_day, days)
                                if values[i] is not None and target
                                and (values[i] - start_value) / target >= share), None)
                s.setdefault(name, []).append(float(reached) if reached is not None
                                              else float("nan"))
            s.setdefault("published", []).append(sum(v is not None for v in values) / days)
    rows = []
    for method, s in stats.items():
        if not s:
            continue
        quiet = np.array(s.get("quiet", [0.0]))
        rows.append({
            "aggregate": method, "GPUs": len(panels),
            "quiet days moved %": round(float((quiet > MOVE_EPS).mean() * 100), 1),
            "mean |move| quiet %": round(float(quiet.mean() * 100), 3),
            "glitch-day |move| max %": round(float(max(s.get("glitch", [0.0])) * 100), 1),
            "glitch-day |move| mean %": round(float(np.mean(s.get("glitch", [0.0])) * 100), 2),
            "error vs true median mean %": round(float(np.mean(s["error"]) * 100), 2),
            "days to 50 % of move": round(float(np.nanmean(s["half"])), 1),
            "days to 90 % of move": round(float(np.nanmean(s["ninety"])), 1),
            "published %": round(float(np.mean(s["published"]) * 100), 1),
        })
    return pl.DataFrame(rows)


def backtest_tables(con: duckdb.DuckDBPyConnection, *, gpu_models: list[str] | None = None,
                    since: date | None = None, until: date | None = None,
                    with_simulation: bool = True) -> list[tuple[str, pl.DataFrame]]:
    tables = history_backtest(con, gpu_models=gpu_models, since=since, until=until)
    if with_simulation:
        tables.append(("simulation on the latest real panels (150 days each, seeded): "
                       "stability, glitches, speed", simulate(con, gpu_models=gpu_models)))
    return tables
