"""Alert rules as pure functions: rule + the frame it looks at (+ now) -> events.

`evaluate` reads those frames through the connection it is given (SELECTs only, so a
read-only connection does) and hands them to the pure functions; nothing here sends or
writes. Rule kinds (alerts.toml at the repo root has a commented example):

- `cheapest_below`: the cheapest current whole-offering $/GPU-hour of a GPU (a catalog model
  such as "H100 SXM", or a family such as "H100") is below `below_usd_per_gpu_hour`. Keyed by
  the offer and price: it fires again only if the cheapest offer or its price changes.
- `price_drop`: an offering of the GPU dropped by at least `drop_pct` % (price_change), within
  the last `within_days` days. One event per change (its regions grouped).
- `source_stale`: a source (or "*") has had no successful run for `stale_hours`. One event
  per stale episode (keyed by its last success).
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass, field
from datetime import UTC, datetime, timedelta

import duckdb
import polars as pl

from reports.alert_config import Rule

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


def _gpu_matches(frame: pl.DataFrame, gpu: str | None) -> pl.DataFrame:
    """Rows of a catalog model `gpu` or of any model of the family `gpu`."""
    return frame.filter((pl.col("gpu_model") == gpu) | (pl.col("family") == gpu))


def _pricing_matches(frame: pl.DataFrame, pricing: str) -> pl.DataFrame:
    return frame if pricing == "any" else frame.filter(pl.col("pricing") == pricing)


def cheapest_below_events(latest: pl.DataFrame, rule: Rule) -> list[AlertEvent]:
    """`latest`: current prices (gpu_model, family, provider, offering, region, pricing,
    price_usd_per_gpu_hour, gpu_only, stale)."""
    if rule.below_usd_per_gpu_hour is None:
        return []
    offers = _pricing_matches(_gpu_matches(latest, rule.gpu), rule.pricing).filter(
        ~pl.col("gpu_only") & ~pl.col("stale").fill_null(False)
    ).sort("price_usd_per_gpu_hour", "provider", "offering", "region", "pricing")
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


def price_drop_events(changes: pl.DataFrame, rule: Rule, now: datetime) -> list[AlertEvent]:
    """`changes`: price moves (price_change columns plus the model's family)."""
    if rule.drop_pct is None:
        return []
    since = (now - timedelta(days=rule.within_days)).astimezone(UTC).date()
    drops = _pricing_matches(_gpu_matches(changes, rule.gpu), rule.pricing).filter(
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


# What each rule kind looks at. The GPU filter only narrows the read; the pure functions
# above decide everything again on what they are given.
_FAMILY = "LEFT JOIN (SELECT gpu_model, family FROM gpu_catalog) USING (gpu_model)"
_FOR_GPU = "WHERE gpu_model = $gpu OR family = $gpu"
_QUERIES = {
    "cheapest_below": (
        "SELECT gpu_model, family, provider, offering, region, pricing, "
        f"price_usd_per_gpu_hour, gpu_only, stale FROM latest_price {_FAMILY} {_FOR_GPU}"),
    "price_drop": (
        f"SELECT {', '.join(_CHANGE)}, region, family FROM price_change {_FAMILY} {_FOR_GPU}"),
    "source_stale": ("SELECT source, last_run_at, last_status, last_error, last_success_at "
                     "FROM source_status"),
}


def rule_frame(con: duckdb.DuckDBPyConnection, rule: Rule) -> pl.DataFrame:
    """The rows `rule` is decided on, read from the warehouse (SELECT only)."""
    sql = _QUERIES[rule.kind]
    params = {"gpu": rule.gpu} if "$gpu" in sql else {}
    return con.execute(sql, params).pl()


def evaluate(con: duckdb.DuckDBPyConnection, rules: Iterable[Rule],
             now: datetime | None = None) -> list[AlertEvent]:
    """Every event the rules see in the warehouse now (sent or not). Reads only."""
    now = now or datetime.now(UTC)
    events: list[AlertEvent] = []
    for rule in rules:
        frame = rule_frame(con, rule)
        if rule.kind == "cheapest_below":
            events += cheapest_below_events(frame, rule)
        elif rule.kind == "price_drop":
            events += price_drop_events(frame, rule, now)
        else:
            events += stale_source_events(frame, rule, now)
    return events
