"""The refresh's last step: check the alert rules on the warehouse it just wrote."""

from __future__ import annotations

import logging
import sys
from collections.abc import Mapping
from pathlib import Path

from reports.alerts import AlertEvent, check_alerts, load_config, rules_path
from warehouse.connection import open_warehouse

__all__ = ["alerts_after_refresh"]

log = logging.getLogger("gpuprices.alerts")


def alerts_after_refresh(warehouse: str | Path, env: Mapping[str, str] | None = None
                         ) -> list[AlertEvent]:
    """Load the rules, open the warehouse, check. Never raises: an alert problem must not
    fail a refresh (its prices are already stored)."""
    path = rules_path(env)
    if path is None:
        return []
    try:
        config = load_config(path, env)
        with open_warehouse(warehouse, wait_s=30) as con:
            return check_alerts(con, config)
    except Exception as exc:
        log.warning("alerts not checked: %s: %s", type(exc).__name__, exc)
        print(f"alerts not checked: {exc}", file=sys.stderr)
        return []
