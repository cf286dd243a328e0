"""Which alert events were already sent (the `alert_event` table): read and record."""

from __future__ import annotations

from datetime import UTC, datetime

import duckdb

from reports.alerts.rules import AlertEvent

__all__ = ["record", "unsent"]


def unsent(con: duckdb.DuckDBPyConnection, events: list[AlertEvent]) -> list[AlertEvent]:
    sent = set(con.execute("SELECT rule, event_key FROM alert_event").fetchall())
    return [e for e in events if (e.rule, e.event_key) not in sent]


def record(con: duckdb.DuckDBPyConnection, events: list[AlertEvent],
           now: datetime | None = None) -> None:
    fired = now or datetime.now(UTC)
    # No key to lean on (a DuckLake has none): an event already recorded is skipped here.
    con.executemany(
        "INSERT INTO alert_event SELECT $1, $2, $3, $4, $5, $6 WHERE NOT EXISTS (SELECT 1 FROM "
        "alert_event WHERE rule = $1 AND event_key = $2)",
        [(e.rule, e.event_key, e.kind, fired, e.message, ", ".join(e.delivered))
         for e in events],
    )
