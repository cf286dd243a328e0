"""Alert rules as pure functions: rule + the frame it looks at (+ now) -> events.

`evaluate` reads those frames through the connection it is given (SELECTs only, so a
read-only connection does) and hands them to the pure functions; nothing here sends or
writes. Rule kinds (alerts.toml at the repo root has a commented example):

- `cheapest_below`: the cheapest comparable offer of a GPU (a catalog model such as
  "H100 SXM", or a family such as "H100"; warehouse.semantic: the cheapest every view names)
  is below `below_usd_per_gpu_hour`. Keyed by the offer and price: it fires again only if the
  cheapest offer or its price changes.
- `price_drop`: an offering of the GPU dropped by at least `drop_pct` % (the price_move view:
  moves of the source that speaks for the offering), within the last `within_days` days. One
  event per change (its regions grouped).
- `source_stale`: a source (or "*") has had no successful run for `stale_hours`. One event
  per stale episode (keyed by its last success).
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass, field
from datetime import UTC, date, datetime, timedelta

import duckdb
import polars as pl

from reports.alerts.config import Rule
from warehouse.frames import sql_frame
from warehouse.semantic import Prices

__all__ = ["AlertEvent", "cheapest_below_events", "evaluate", "price_drop_events",
           "rule_frame", "stale_source_events"]


@dataclass(frozen=True, slots=True)
class AlertEvent:
    rule: str
    kind: str
    event_key: str
    title: str
    message: str
    delivered: list[str] = field(default_factory=list, compare=False)


def _rule_rows(frame: pl.DataFrame, rule: Rule) -> pl.DataFrame:
    """Rows of the rule's GPU models (resolved when the rules file loaded) and pricing."""
    return frame.filter(pl.col("gpu_model").is_in(list(rule.gpu_models))
                        & pl.col("pricing").is_in(list(rule.pricing)))


def cheapest_below_events(comparable: pl.DataFrame, rule: Rule) -> list[AlertEvent]:
    """`comparable`: the comparable offers now, cheapest first (warehouse.semantic
    Prices.comparable), in the rule's pricing set."""
    if rule.below_usd_per_gpu_hour is None:
        return []
    offers = _rule_rows(comparable, rule).sort(Prices.ORDER)
    if offers.height == 0:
        return []
    top = offers.row(0, named=True)
    price = top["price_usd_per_gpu_hour"]
    if price >= rule.below_usd_per_gpu_hour:
        return []
    key = f"{top['provider']}|{top['offering']}|{top['region']}|{top['pricing']}|{price:.4f}"
    title = f"{rule.gpu} below ${rule.below_usd_per_gpu_hour:.2f}/GPU-h"
    message = (f"cheapest {rule.gpu} ({top['gpu_model']}, {top['pricing']}) is ${price:.2f}"
               f"/GPU-h at {top['provider']} {top['offering']} ({top['region']}), below "
               f"${rule.below_usd_per_gpu_hour:.2f}")
    return [AlertEvent(rule.name, rule.kind, key, title, message)]


_CHANGE = ["source", "provider", "offering", "pricing", "gpu_model", "changed_on",
           "old_price_usd_per_hour", "new_price_usd_per_hour", "pct_change"]


def _window_start(rule: Rule, now: datetime) -> date:
    """The first UTC day of a price_drop rule's window at `now`."""
    return (now - timedelta(days=rule.within_days)).astimezone(UTC).date()


def price_drop_events(changes: pl.DataFrame, rule: Rule, now: datetime) -> list[AlertEvent]:
    """`changes`: price moves (the price_move view's columns)."""
    if rule.drop_pct is None:
        return []
    since = _window_start(rule, now)
    drops = _rule_rows(changes, rule).filter(
        (pl.col("pct_change") <= -rule.drop_pct) & (pl.col("changed_on") >= since)
    ).group_by(_CHANGE).agg(pl.len().alias("regions"), pl.col("region").min()
                            ).sort("changed_on", "provider", "offering", "pricing", "source")
    events = []
    for row in drops.iter_rows(named=True):
        day, old, new = row["changed_on"], row["old_price_usd_per_hour"], \
            row["new_price_usd_per_hour"]
        model, provider, offering = row["gpu_model"], row["provider"], row["offering"]
        where = f"{row['regions']} regions" if row["regions"] > 1 else row["region"]
        key = f"{row['source']}|{provider}|{offering}|{row['pricing']}|{day}|{old:.4f}|{new:.4f}"
        message = (f"{model} at {provider} {offering} ({row['pricing']}, {where}): "
                   f"${old:.2f} -> ${new:.2f}/h ({row['pct_change']:+.1f} %) on {day}")
        events.append(AlertEvent(rule.name, rule.kind, key,
                                 f"{model} price drop at {provider}", message))
    return events


def stale_source_events(status: pl.DataFrame, rule: Rule, now: datetime) -> list[AlertEvent]:
    """`status`: one row per source (source, last_run_at, last_status, last_error,
    last_success_at), as in the source_status view."""
    hours = rule.stale_hours or 0.0
    cutoff = now - timedelta(hours=hours)
    events = []
    for row in status.sort("source").iter_rows(named=True):
        last_success = row["last_success_at"]
        if (rule.source not in ("*", row["source"]) or row["last_run_at"] is None
                or row["last_status"] == "skipped"
                or (last_success is not None and last_success >= cutoff)):
            continue
        if last_success is None:
            since = "never succeeded"
        else:
            age_h = (now - last_success).total_seconds() / 3600
            since = f"last success {last_success:%Y-%m-%d %H:%M} UTC ({age_h:.0f} h ago)"
        error = row["last_error"]
        detail = f"; last run {row['last_status']}" + (f": {error}" if error else "")
        key = f"{row['source']}|{last_success.isoformat() if last_success else 'never'}"
        events.append(AlertEvent(rule.name, rule.kind, key, f"source {row['source']} is stale",
                                 f"source {row['source']} stale for more than {hours:g} h: "
                                 f"{since}{detail}"))
    return events


def rule_frame(prices: Prices, rule: Rule) -> pl.DataFrame:
    """The rows `rule` is decided on, read from the semantic layer (SELECT only). The GPU
    filter only narrows the read; the pure functions above decide again on what they get."""
    if rule.kind == "cheapest_below":
        return prices.comparable(rule.pricing)
    if rule.kind == "price_drop":  # the moves of the rule's window (price_drop_events' since)
        since = _window_start(rule, prices.as_of)
        return sql_frame(
            prices.con, f"SELECT {', '.join(_CHANGE)}, region FROM price_moves_since($since) "
            "WHERE list_contains($models, gpu_model)",
            {"models": list(rule.gpu_models), "since": since})
    return sql_frame(prices.con, "SELECT source, last_run_at, last_status, last_error, "
                     "last_success_at FROM source_status")


def evaluate(con: duckdb.DuckDBPyConnection, rules: Iterable[Rule],
             now: datetime | None = None) -> list[AlertEvent]:
    """Every event the rules see in the warehouse now (sent or not). Reads only."""
    now = now or datetime.now(UTC)
    prices = Prices(con, now)
    events: list[AlertEvent] = []
    for rule in rules:
        frame = rule_frame(prices, rule)
        if rule.kind == "cheapest_below":
            events += cheapest_below_events(frame, rule)
        elif rule.kind == "price_drop":
            events += price_drop_events(frame, rule, now)
        else:
            events += stale_source_events(frame, rule, now)
    return events
