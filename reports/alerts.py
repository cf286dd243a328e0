"""Price alerts: rules in a TOML file, checked after each refresh, each event sent once.

Rule kinds (see alerts.toml at the repo root for a commented example):
- `cheapest_below`: the cheapest current whole-offering $/GPU-hour of a GPU (a catalog model
  such as "H100 SXM", or a family such as "H100") is below `below_usd_per_gpu_hour`.
  One event per cheapest offer and price: it fires when that offer first gets there, and again
  only if the cheapest offer or its price changes, not every night it stays there.
- `price_drop`: any offering of the GPU dropped by at least `drop_pct` % (from the
  price_change view), within the last `within_days` days. One event per change.
- `source_stale`: a source (or "*" for all) has had no successful run for `stale_hours`.
  One event per stale episode (keyed by its last success).

Events are deduplicated in the `alert_event` table, logged and printed, and, when
configured, sent to Apprise URLs (`[notify] apprise_urls`, plus $GPUPRICES_ALERT_URLS,
comma-separated, for URLs that carry tokens) and/or a Prefect notification block.
The rules file is $GPUPRICES_ALERTS, else ./alerts.toml; with neither, alerts are off.
"""

from __future__ import annotations

import logging
import os
import tomllib
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from datetime import UTC, datetime, timedelta
from pathlib import Path

import duckdb

log = logging.getLogger("gpuprices.alerts")

KINDS = ("cheapest_below", "price_drop", "source_stale")
DEFAULT_RULES_FILE = Path("alerts.toml")
_REQUIRED: dict[str, tuple[str, ...]] = {
    "cheapest_below": ("gpu", "below_usd_per_gpu_hour"),
    "price_drop": ("gpu", "drop_pct"),
    "source_stale": ("source", "stale_hours"),
}


class AlertConfigError(ValueError):
    """The alerts file is not valid; the message names the rule and the field."""


@dataclass(frozen=True, slots=True)
class Rule:
    name: str
    kind: str
    gpu: str | None = None
    pricing: str = "on_demand"  # or "any"
    below_usd_per_gpu_hour: float | None = None
    drop_pct: float | None = None
    within_days: int = 7
    source: str | None = None
    stale_hours: float | None = None


@dataclass(frozen=True, slots=True)
class AlertConfig:
    rules: tuple[Rule, ...]
    apprise_urls: tuple[str, ...] = ()
    prefect_block: str | None = None


@dataclass(frozen=True, slots=True)
class AlertEvent:
    rule: str
    kind: str
    event_key: str
    title: str
    message: str
    delivered: list[str] = field(default_factory=list, compare=False)


def rules_path(env: Mapping[str, str] | None = None) -> Path | None:
    env = os.environ if env is None else env
    if env.get("GPUPRICES_ALERTS"):
        return Path(env["GPUPRICES_ALERTS"])
    return DEFAULT_RULES_FILE if DEFAULT_RULES_FILE.exists() else None


def parse_config(data: Mapping[str, object], env: Mapping[str, str] | None = None
                 ) -> AlertConfig:
    env = os.environ if env is None else env
    rules = []
    raw_rules = data.get("rule", [])
    if not isinstance(raw_rules, list):
        raise AlertConfigError("`rule` must be an array of tables: [[rule]]")
    known = set(Rule.__dataclass_fields__)
    for index, item in enumerate(raw_rules):
        if not isinstance(item, dict):
            raise AlertConfigError(f"rule #{index + 1} is not a table")
        name = str(item.get("name") or f"rule-{index + 1}")
        kind = item.get("kind")
        if kind not in KINDS:
            raise AlertConfigError(f"rule {name!r}: kind must be one of {', '.join(KINDS)}")
        unknown = set(item) - known
        if unknown:
            raise AlertConfigError(f"rule {name!r}: unknown field(s) {', '.join(sorted(unknown))}")
        missing = [f for f in _REQUIRED[str(kind)] if item.get(f) in (None, "")]
        if missing:
            raise AlertConfigError(f"rule {name!r} ({kind}) needs {', '.join(missing)}")
        rules.append(Rule(**{**item, "name": name}))
    names = [r.name for r in rules]
    if len(set(names)) != len(names):
        raise AlertConfigError("rule names must be unique (they key the sent-events table)")
    notify = data.get("notify", {})
    notify = notify if isinstance(notify, dict) else {}
    urls = [str(u) for u in notify.get("apprise_urls", []) if u]
    urls += [u.strip() for u in env.get("GPUPRICES_ALERT_URLS", "").split(",") if u.strip()]
    block = str(notify.get("prefect_block") or "") or None
    return AlertConfig(tuple(rules), tuple(urls), block)


def load_config(path: Path, env: Mapping[str, str] | None = None) -> AlertConfig:
    try:
        data = tomllib.loads(path.read_text(encoding="utf-8"))
    except tomllib.TOMLDecodeError as exc:
        raise AlertConfigError(f"{path}: {exc}") from None
    return parse_config(data, env)


_GPU_MATCH = ("(gpu_model = $gpu OR gpu_model IN "
              "(SELECT gpu_model FROM gpu_catalog WHERE family = $gpu))")


def _cheapest_below(con: duckdb.DuckDBPyConnection, rule: Rule) -> list[AlertEvent]:
    row = con.execute(
        "SELECT gpu_model, provider, offering, region, pricing, price_usd_per_gpu_hour "
        f"FROM latest_price WHERE {_GPU_MATCH} AND NOT gpu_only AND NOT coalesce(stale, false) "
        "AND ($pricing = 'any' OR pricing = $pricing) "
        "ORDER BY price_usd_per_gpu_hour, provider, offering LIMIT 1",
        {"gpu": rule.gpu, "pricing": rule.pricing},
    ).fetchone()
    if row is None or rule.below_usd_per_gpu_hour is None:
        return []
    model, provider, offering, region, pricing, price = row
    if price >= rule.below_usd_per_gpu_hour:
        return []
    key = f"{provider}|{offering}|{region}|{pricing}|{price:.4f}"
    title = f"{rule.gpu} below ${rule.below_usd_per_gpu_hour:.2f}/GPU-h"
    message = (f"cheapest {rule.gpu} ({model}, {pricing}) is ${price:.2f}/GPU-h at {provider} "
               f"{offering} ({region}), below ${rule.below_usd_per_gpu_hour:.2f}")
    return [AlertEvent(rule.name, rule.kind, key, title, message)]


def _price_drops(con: duckdb.DuckDBPyConnection, rule: Rule, now: datetime
                 ) -> list[AlertEvent]:
    rows = con.execute(
        "SELECT source, provider, offering, pricing, gpu_model, changed_on, "
        "old_price_usd_per_hour, new_price_usd_per_hour, pct_change, "
        "count(*) AS regions, min(region) AS a_region "
        f"FROM price_change WHERE {_GPU_MATCH} AND pct_change <= -$drop "
        "AND changed_on >= CAST($since AS DATE) AND ($pricing = 'any' OR pricing = $pricing) "
        "GROUP BY ALL ORDER BY changed_on, provider, offering",
        {"gpu": rule.gpu, "drop": rule.drop_pct, "pricing": rule.pricing,
         "since": now - timedelta(days=rule.within_days)},
    ).fetchall()
    events = []
    for source, provider, offering, pricing, model, day, old, new, pct, regions, region in rows:
        where = f"{regions} regions" if regions > 1 else region
        key = f"{source}|{provider}|{offering}|{pricing}|{day}|{old:.4f}|{new:.4f}"
        title = f"{model} price drop at {provider}"
        message = (f"{model} at {provider} {offering} ({pricing}, {where}): ${old:.2f} -> "
                   f"${new:.2f}/h ({pct:+.1f} %) on {day}")
        events.append(AlertEvent(rule.name, rule.kind, key, title, message))
    return events


def _stale_sources(con: duckdb.DuckDBPyConnection, rule: Rule, now: datetime
                   ) -> list[AlertEvent]:
    hours = rule.stale_hours or 0.0
    rows = con.execute(
        "SELECT source, last_success_at, last_status, last_error FROM source_status "
        "WHERE ($source = '*' OR source = $source) AND last_run_at IS NOT NULL "
        "AND last_status <> 'skipped' "
        "AND (last_success_at IS NULL OR last_success_at < $cutoff) ORDER BY source",
        {"source": rule.source, "cutoff": now - timedelta(hours=hours)},
    ).fetchall()
    events = []
    for source, last_success, status, error in rows:
        if last_success is None:
            since = "never succeeded"
        else:
            age_h = (now - last_success).total_seconds() / 3600
            since = f"last success {last_success:%Y-%m-%d %H:%M} UTC ({age_h:.0f} h ago)"
        detail = f"; last run {status}: {error}" if error else f"; last run {status}"
        key = f"{source}|{last_success.isoformat() if last_success else 'never'}"
        events.append(AlertEvent(rule.name, rule.kind, key, f"source {source} is stale",
                                 f"source {source} stale for more than {hours:g} h: "
                                 f"{since}{detail}"))
    return events


def evaluate(con: duckdb.DuckDBPyConnection, rules: Iterable[Rule],
             now: datetime | None = None) -> list[AlertEvent]:
    """Every event the rules see in the warehouse now (sent or not). Reads only."""
    now = now or datetime.now(UTC)
    events: list[AlertEvent] = []
    for rule in rules:
        if rule.kind == "cheapest_below":
            events += _cheapest_below(con, rule)
        elif rule.kind == "price_drop":
            events += _price_drops(con, rule, now)
        else:
            events += _stale_sources(con, rule, now)
    return events


def unsent(con: duckdb.DuckDBPyConnection, events: list[AlertEvent]) -> list[AlertEvent]:
    sent = set(con.execute("SELECT rule, event_key FROM alert_event").fetchall())
    return [e for e in events if (e.rule, e.event_key) not in sent]


def send_apprise(urls: Iterable[str], title: str, body: str) -> bool:
    import apprise

    notifier = apprise.Apprise()
    for url in urls:
        notifier.add(url)
    return bool(notifier.notify(title=title, body=body))


def send_prefect_block(block_name: str, title: str, body: str) -> None:
    from prefect.blocks.core import Block

    block = Block.load(block_name)
    block.notify(body, subject=title)  # type: ignore[attr-defined]


def deliver(events: list[AlertEvent], config: AlertConfig) -> None:
    """Log/print every event, then send one message per event to each configured channel."""
    for event in events:
        text = f"ALERT [{event.rule}] {event.message}"
        print(text)  # stdout; inside the refresh flow (log_prints) also a Prefect log line
        log.info(text)
        event.delivered.append("log")
        if config.apprise_urls:
            ok = send_apprise(config.apprise_urls, event.title, event.message)
            event.delivered.append(f"apprise x{len(config.apprise_urls)}" if ok
                                   else "apprise FAILED")
            if not ok:
                log.warning("alert %s: an Apprise URL did not accept it", event.rule)
        if config.prefect_block:
            try:
                send_prefect_block(config.prefect_block, event.title, event.message)
                event.delivered.append(f"prefect block {config.prefect_block}")
            except Exception as exc:  # a missing block must not lose the other channels
                event.delivered.append("prefect block FAILED")
                log.warning("alert %s: Prefect block %s: %s", event.rule,
                            config.prefect_block, exc)


def record(con: duckdb.DuckDBPyConnection, events: list[AlertEvent],
           now: datetime | None = None) -> None:
    fired = now or datetime.now(UTC)
    con.executemany(
        "INSERT INTO alert_event VALUES (?, ?, ?, ?, ?, ?) ON CONFLICT DO NOTHING",
        [(e.rule, e.event_key, e.kind, fired, e.message, ", ".join(e.delivered))
         for e in events],
    )


def check_alerts(con: duckdb.DuckDBPyConnection, config: AlertConfig, *,
                 now: datetime | None = None, send: bool = True) -> list[AlertEvent]:
    """Evaluate the rules, send the events not sent before, remember them. Returns those."""
    fresh = unsent(con, evaluate(con, config.rules, now))
    if send and fresh:
        deliver(fresh, config)
        record(con, fresh, now)
    return fresh


def run_after_refresh(warehouse: str | Path, env: Mapping[str, str] | None = None
                      ) -> list[AlertEvent]:
    """The refresh flow's last step. Never raises: an alert problem must not fail a refresh."""
    from warehouse.connection import open_warehouse

    path = rules_path(env)
    if path is None:
        return []
    try:
        config = load_config(path, env)
        with open_warehouse(warehouse, wait_s=30) as con:
            return check_alerts(con, config)
    except Exception as exc:
        log.warning("alerts not checked: %s: %s", type(exc).__name__, exc)
        print(f"alerts not checked: {exc}")
        return []
