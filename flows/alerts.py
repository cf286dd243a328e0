"""The refresh's last step: check the alert rules on the warehouse it just wrote."""

from __future__ import annotations

import logging
import sys
from collections.abc import Mapping
from pathlib import Path

from reports.alerts import AlertEvent, check_alerts, load_config, rules_path
from warehouse.connection import REFRESH_THREADS, open_warehouse

__all__ = ["alerts_after_refresh"]

log = logging.getLogger("gpuprices.alerts")


def alerts_after_refresh(warehouse: str | Path, env: Mapping[str, str] | None = None
                         ) -> list[AlertEvent]:
    """Load the rules, look for new events, send them. Never raises: an alert problem must
    not fail a refresh (its prices are already stored).

    The rules are first evaluated on a reader: most nights bring no new event, and opening
    the writer would change the file and publish a new read snapshot, a copy of the whole
    warehouse (2–4 s at 50 M observations). Only new events open the writer, which evaluates
    again (under the writers' lock), sends and records them."""
    path = rules_path(env)
    if path is None:
        return []
    try:
        config = load_config(path, env)
        with open_warehouse(warehouse, read_only=True) as con:
            if not check_alerts(con, config, send=False):
                return []
        with open_warehouse(warehouse, wait_s=30, threads=REFRESH_THREADS) as con:
            return check_alerts(con, config)
    except Exception as exc:
        log.warning("alerts not checked: %s: %s", type(exc).__name__, exc)
        print(f"alerts not checked: {exc}", file=sys.stderr)
        return []
