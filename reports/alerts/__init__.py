"""Price alerts: rules in a TOML file, checked after each refresh, each event sent once.

The parts, each in its own module:
- reports.alerts.config: the rules file ($GPUPRICES_ALERTS, else ./alerts.toml) -> AlertConfig;
- reports.alerts.rules: pure rules (frames -> events) and `evaluate` (reads only);
- reports.alerts.delivery: log + Apprise URLs + Prefect block;
- reports.alerts.state: the `alert_event` table (what was already sent).

`check_alerts` puts them together on a connection the caller opened (the refresh flow, or
`gpuprices alerts check`); nothing in reports opens the warehouse.
"""

from __future__ import annotations

from datetime import datetime

import duckdb

from reports.alerts.config import (
    AlertConfig,
    AlertConfigError,
    Rule,
    load_config,
    parse_config,
    rules_path,
)
from reports.alerts.delivery import deliver
from reports.alerts.rules import AlertEvent, evaluate
from reports.alerts.state import record, unsent

__all__ = ["AlertConfig", "AlertConfigError", "AlertEvent", "Rule", "check_alerts",
           "load_config", "parse_config", "rules_path"]


def check_alerts(con: duckdb.DuckDBPyConnection, config: AlertConfig, *,
                 now: datetime | None = None, send: bool = True) -> list[AlertEvent]:
    """Evaluate the rules, send the events not sent before, remember them. Returns those.
    `send=False` (a dry run) only reads: nothing is sent or recorded."""
    fresh = unsent(con, evaluate(con, config.rules, now))
    if send and fresh:
        deliver(fresh, config)
        record(con, fresh, now)
    return fresh
