"""Writes to the warehouse: runs, captures, observations, quarantine. One transaction per source.

Everything a source produced in one run lands together or not at all: a crash in the middle
of an append leaves the previous state, and replaying a stored capture adds nothing. No write
relies on a PRIMARY KEY (a DuckLake has none): each guarded insert checks in its transaction.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass, field
from datetime import UTC, date, datetime

import duckdb
import polars as pl

from schemas.observation import OBSERVATION_SCHEMA
from warehouse.frames import scanned_once
from warehouse.summaries import UTC_DAY, after_append
from warehouse.transaction import retrying, transaction


@dataclass(frozen=True, slots=True)
class SourceInfo:
    source: str
    provider: str
    kind: str
    url: str
    aggregator: bool


@dataclass(slots=True)
class ScrapeRecord:
    """One row of scrape_run: what happened to one source in one run."""

    run_id: str
    source: str
    started_at: datetime
    status: str  # success | unchanged | failed | rejected
    attempts: int = 1
    finished_at: datetime | None = None
    observed_at: datetime | None = None
    capture_id: str | None = None
    rows_parsed: int = 0
    rows_stored: int = 0
    rows_quarantined: int = 0
    unknown_gpus: list[str] = field(default_factory=list)
    error: str | None = None
    note: str | None = None


def register_sources(con: duckdb.DuckDBPyConnection, sources: Iterable[SourceInfo]) -> None:
    rows = {(s.source, s.provider, s.kind, s.url, s.aggregator) for s in sources}
    rows -= set(con.execute("SELECT source, provider, kind, url, aggregator FROM source")
                .fetchall())
    if not rows:
        return
    def write() -> None:
        with transaction(con):  # one statement each (executemany: ~15 ms per row)
            values = ", ".join(["(?, ?, ?, ?, ?)"] * len(rows))
            params = [value for row in sorted(rows) for value in row]
            con.execute(f"DELETE FROM source WHERE source IN (SELECT col0 FROM (VALUES "
                        f"{values}))", params)
            con.execute(f"INSERT INTO source VALUES {values}", params)
    retrying(write, what="registering sources")


def start_run(con: duckdb.DuckDBPyConnection, run_id: str, flow: str, *, offline: bool,
              note: str | None = None) -> None:
    def write() -> None:
        with transaction(con):
            con.execute(
                "INSERT INTO refresh_run VALUES (?, ?, ?, NULL, ?, 'running', ?)",
                [run_id, flow, datetime.now(UTC), offline, note],
            )
    retrying(write, what=f"starting run {run_id}")


def finish_run(con: duckdb.DuckDBPyConnection, run_id: str, status: str,
               note: str | None = None) -> None:
    def write() -> None:
        with transaction(con):
            con.execute(
                "UPDATE refresh_run SET finished_at = ?, status = ?, note = coalesce(?, note) "
                "WHERE run_id = ?",
                [datetime.now(UTC), status, note, run_id],
            )
    retrying(write, what=f"finishing run {run_id}")


def previous_good_rows(con: duckdb.DuckDBPyConnection, source: str) -> int | None:
    """Rows parsed by the last run of `source` that stored or confirmed a capture."""
    row = con.execute(
        "SELECT arg_max(rows_parsed, finished_at) FROM scrape_run "
        "WHERE source = ? AND status = 'success'",
        [source],
    ).fetchone()
    return int(row[0]) if row and row[0] is not None else None


def capture_stored(con: duckdb.DuckDBPyConnection, source: str, capture_id: str) -> bool:
    row = con.execute(
        "SELECT count(*) FROM scrape_run WHERE source = ? AND capture_id = ? "
        "AND status = 'success'",
        [source, capture_id],
    ).fetchone()
    return bool(row and row[0])


def insert_frame(con: duckdb.DuckDBPyConnection, table: str, frame: pl.DataFrame) -> None:
    """Insert `frame`'s rows into `table` by column name (nothing for an empty frame)."""
    if frame.height == 0:
        return
    name = f"_batch_{table}"
    with scanned_once(con, name, frame):
        con.execute(f"INSERT INTO {table} BY NAME SELECT * FROM {name}")


def _insert_parts(con: duckdb.DuckDBPyConnection, run_id: str, good: pl.DataFrame) -> None:
    """An aggregator capture's parts: the providers its stored rows price, and how many rows."""
    parts = good.group_by("source", "provider", "capture_id", "observed_at").agg(
        pl.len().cast(pl.Int32).alias("rows")).with_columns(pl.lit(run_id).alias("run_id"))
    insert_frame(con, "provider_capture", parts)


def _days_by_source(frame: pl.DataFrame | None) -> dict[str, set[date]]:
    """The UTC days each source's rows in `frame` fall on (for the summary tables)."""
    if frame is None or frame.height == 0:
        return {}
    pairs = frame.select(
        "source", pl.col("observed_at").dt.convert_time_zone("UTC").dt.date().alias("day")
    ).unique()
    days: dict[str, set[date]] = {}
    for source, day in pairs.iter_rows():
        days.setdefault(source, set()).add(day)
    return days


def _utc_day(moment: datetime | None) -> date | None:
    return moment.astimezone(UTC).date() if moment is not None else None


def _insert_run(con: duckdb.DuckDBPyConnection, record: ScrapeRecord) -> None:
    """The run's row for the source, replacing an earlier one of the same (run, source)."""
    con.execute("DELETE FROM scrape_run WHERE run_id = ? AND source = ?",
                [record.run_id, record.source])
    con.execute(
        "INSERT INTO scrape_run (run_id, source, started_at, finished_at, observed_at, status, "
        "attempts, capture_id, rows_parsed, rows_stored, rows_quarantined, unknown_gpus, error, "
        "note) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)",
        [
            record.run_id, record.source, record.started_at,
            record.finished_at or datetime.now(UTC), record.observed_at, record.status,
            record.attempts, record.capture_id, record.rows_parsed, record.rows_stored,
            record.rows_quarantined, record.unknown_gpus, record.error, record.note,
        ],
    )


def append_batch(
    con: duckdb.DuckDBPyConnection,
    record: ScrapeRecord,
    *,
    capture: dict[str, object] | None = None,
    good: pl.DataFrame | None = None,
    quarantined: pl.DataFrame | None = None,
    parts: bool = False,
    screen_market: pl.DataFrame | None = None,
) -> None:
    """Write one source's outcome in a single transaction.

    `capture` is the raw_capture row (kept even for failed parses, so the day can be re-parsed);
    `good` rows become observations, `quarantined` rows go to quarantine with their failed check;
    `parts` (aggregators): record which providers `good` prices (provider_capture);
    `screen_market`: the market the price band was narrowed to (screen_market, for reproduce).

    Idempotent by capture id, checked inside the transaction (on a lake another worker may
    have landed the same payload since the caller looked): a capture already stored for the
    source becomes an `unchanged` run and writes no observation twice. On a lake a concurrent
    writer's commit makes this one fail (warehouse.transaction.LakeConflict): the caller runs its
    whole landing again (warehouse.ingest.land does).
    """
    with transaction(con):
        if capture is not None:
            con.execute(
                "INSERT INTO raw_capture SELECT $capture_id, $source, $url, $fetched_at, "
                "$content_type, $size_bytes, $archive_path WHERE NOT EXISTS (SELECT 1 FROM "
                "raw_capture WHERE capture_id = $capture_id)",
                capture,
            )
        if good is not None and record.capture_id is not None and \
                capture_stored(con, record.source, record.capture_id):
            good = quarantined = None  # landed meanwhile by another worker: no second copy
            record.status, record.rows_stored, record.rows_quarantined = "unchanged", 0, 0
            record.note = "payload identical to a stored capture (landed by another worker " \
                "meanwhile); prices re-confirmed"
        if good is not None:
            insert_frame(con, "observation", good.select(list(OBSERVATION_SCHEMA)))
            if parts:
                _insert_parts(con, record.run_id, good)
        if quarantined is not None:
            insert_frame(con, "quarantine", quarantined)
        if screen_market is not None and record.capture_id:
            insert_frame(con, "screen_market", screen_market.select(
                pl.lit(record.run_id).alias("run_id"), pl.lit(record.source).alias("source"),
                pl.lit(record.capture_id).alias("capture_id"), "gpu_model",
                pl.col("providers").cast(pl.Int32),
                pl.col("median_usd_per_gpu_hour").cast(pl.Float64)))
        record.finished_at = record.finished_at or datetime.now(UTC)
        _insert_run(con, record)
        days = _days_by_source(good)
        run_day = _utc_day(record.observed_at)
        for source in {record.source, *days}:
            after_append(con, source, days.get(source, ()), capture_id=record.capture_id,
                         written=good, run_day=run_day if source == record.source else None)


def replace_capture_observations(
    con: duckdb.DuckDBPyConnection, record: ScrapeRecord, capture_id: str,
    good: pl.DataFrame, quarantined: pl.DataFrame,
) -> int:
    """Re-parse support: swap one capture's observations for new ones, atomically.

    Returns how many old observations were replaced. The re-parse is itself a scrape_run row.
    """
    with transaction(con):
        row = con.execute("SELECT count(*) FROM observation WHERE capture_id = ?",
                          [capture_id]).fetchone()
        old = int(row[0]) if row else 0
        days = _days_by_source(good)
        for source, day in con.execute(
            f"SELECT DISTINCT source, {UTC_DAY.format('observed_at')} FROM observation "
            "WHERE capture_id = ?", [capture_id]
        ).fetchall():
            days.setdefault(source, set()).add(day)
        con.execute("DELETE FROM observation WHERE capture_id = ?", [capture_id])
        con.execute("DELETE FROM quarantine WHERE capture_id = ?", [capture_id])
        con.execute("DELETE FROM provider_capture WHERE capture_id = ?", [capture_id])
        insert_frame(con, "observation", good.select(list(OBSERVATION_SCHEMA)))
        aggregator = con.execute("SELECT aggregator FROM source WHERE source = ?",
                                 [record.source]).fetchone()
        if aggregator and aggregator[0] and good.height:
            _insert_parts(con, record.run_id, good)
        insert_frame(con, "quarantine", quarantined)
        record.finished_at = record.finished_at or datetime.now(UTC)
        _insert_run(con, record)
        for source in {record.source, *days}:
            after_append(con, source, days.get(source, ()), capture_id=capture_id,
                         written=good)
    return old
