"""Exchange rates into the warehouse: the refresh's daily step and the history backfill.

Wiring only: fetching and parsing are scrapers.ecb's, storing is warehouse.fx's. The refresh
calls `refresh_rates` once, before any price source runs, so tonight's euro prices convert at
the rate just published. A failure is logged and recorded nowhere else: prices then convert at
the last stored rate (up to 7 days old) or are held out with the reason, never guessed.

Offline (the demo, the tests) the bundled daily file is replayed as of the replay's day, as
the bundled prices are: the rates keep the file's capture id, the day is the replay's.
"""

from __future__ import annotations

import logging
from dataclasses import dataclass
from datetime import UTC, datetime
from pathlib import Path
from typing import TYPE_CHECKING

import duckdb

from contract import FetchError, ParseError, RawCapture
from contract.settings import Settings
from scrapers import ecb
from scrapers.http import with_retries
from warehouse.fx import RatesStored, store_rates

if TYPE_CHECKING:  # imported where a live refresh opens its client
    import httpx

__all__ = ["RatesResult", "backfill_rates", "held_for_rates", "land_rates", "refresh_rates"]

log = logging.getLogger("gpuprices.fx")


@dataclass(frozen=True, slots=True)
class RatesResult:
    """One rates file: what it added, or why it could not be read."""

    url: str
    stored: RatesStored | None
    error: str | None = None

    @property
    def message(self) -> str:
        if self.stored is None:
            return f"ecb: no rates from {self.url}: {self.error}"
        s = self.stored
        return (f"ecb: {s.rates_added} new of {s.rates_in_file} rates "
                f"({s.first_day} .. {s.last_day}) from {self.url}")


def land_rates(con: duckdb.DuckDBPyConnection, raw: RawCapture, *, archive_root: Path,
               replay_day: datetime | None = None) -> RatesResult:
    """Parse an ECB file and store its rates (as of `replay_day` for an offline replay)."""
    try:
        rates = ecb.parse_rates(raw)
    except ParseError as exc:
        return RatesResult(raw.url, None, str(exc))
    day = replay_day.astimezone(UTC).date() if replay_day else None
    if day is not None:
        rates = rates.filter(rates["rate_date"] == rates["rate_date"].max())
    try:
        stored = store_rates(con, raw, rates, archive_root=archive_root, rate_date=day)
    except OSError as exc:  # the archive cannot be written (full or read-only disk)
        return RatesResult(raw.url, None, str(exc))
    return RatesResult(raw.url, stored)


def refresh_rates(con: duckdb.DuckDBPyConnection, client: httpx.Client | None,
                  settings: Settings, *, offline: bool = False) -> RatesResult:
    """Fetch (or, offline, replay) the ECB daily rates and store them. Never raises for
    bad input; `client` may be None offline only."""
    if offline:
        now = datetime.now(UTC)
        raw = RawCapture(source=ecb.NAME, url=ecb.DAILY_URL, fetched_at=now,
                         body=ecb.EXAMPLE.read_bytes(), content_type="application/xml")
        result = land_rates(con, raw, archive_root=settings.archive_root, replay_day=now)
    elif client is None:
        raise ValueError("live ECB rates need an HTTP client (none given)")
    else:
        try:
            raw = with_retries(lambda: ecb.fetch_daily(client, settings.http),
                               attempts=settings.retries, base_s=settings.backoff_base_s)
        except FetchError as exc:
            result = RatesResult(ecb.DAILY_URL, None, str(exc))
        else:
            result = land_rates(con, raw, archive_root=settings.archive_root)
    (log.info if result.stored else log.warning)("%s", result.message)
    return result


def held_for_rates(con: duckdb.DuckDBPyConnection) -> int:
    """Rows in quarantine held out for want of an exchange rate (a reparse may land them)."""
    row = con.execute("SELECT count(*) FROM quarantine "
                      "WHERE failed_check LIKE 'no % rate within % days of %'").fetchone()
    return int(row[0]) if row else 0


def backfill_rates(con: duckdb.DuckDBPyConnection, client: httpx.Client, settings: Settings,
                   source: str | None = None) -> RatesResult:
    """Store a history of rates: a file (ZIP, CSV or XML), a URL, or by default the ECB's
    eurofxref-hist.zip. Safe to run again (stored rates are kept, new days added)."""
    if source is not None and not source.startswith(("http://", "https://")):
        path = Path(source)
        if not path.is_file():
            return RatesResult(source, None, "no such file")
        raw = ecb.capture_from_file(path)
    else:
        try:
            raw = with_retries(lambda: ecb.fetch_history(client, settings.http, source),
                               attempts=settings.retries, base_s=settings.backoff_base_s)
        except FetchError as exc:
            return RatesResult(source or ecb.HISTORY_URL, None, str(exc))
    return land_rates(con, raw, archive_root=settings.archive_root)
