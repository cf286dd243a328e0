"""Land one raw capture: archive -> parse -> validate -> guard -> append, as one outcome.

This is the whole per-source pipeline after the network. The refresh flow, the backfill,
`reparse` and the tests all call it, so a capture lands the same way whichever path brought it.
A failure at any step is recorded (scrape_run) with a reason, never raised past the caller.

`ingest` = `prepare` (parse + convert + validate + the screens that need nothing but the rows:
CPU, the warehouse only read for exchange rates) then `land` (archive, the screens that need the
warehouse: the market's price band, jump flags, volume gates; append). The refresh flow runs
`prepare` outside the warehouse's write lock, so one source's parsing overlaps another's append.
Rows the parser skipped (`Skips`: "12 contact sales, 3 hidden row") and the rows the screens
held ("screened: 3 unknown GPU") are written into the run's note, so `gpuprices sources` and
the refresh summary show them.
"""

from __future__ import annotations

from collections import Counter
from dataclasses import dataclass, field, replace
from datetime import UTC, datetime
from pathlib import Path
from typing import Literal

import duckdb
import polars as pl

from contract import ParseError, RawCapture, Skips
from schemas.gpus import UNKNOWN_GPU
from schemas.observation import (
    OBSERVATION_SCHEMA,
    ValidatedBatch,
    batch_rejection,
    to_observations,
    validate_guarded,
)
from schemas.screens import (
    ScreenContext,
    band_screen,
    describe_counts,
    flag_jumps,
    provider_gates,
    reserved_without_term,
)
from scrapers.base import Source
from warehouse.append import (
    ScrapeRecord,
    append_batch,
    capture_stored,
    previous_good_rows,
)
from warehouse.archive import archive
from warehouse.fx import convert_batch, hold_out
from warehouse.screen_context import previous_parts, screen_context
from warehouse.summaries import days_refreshed_once
from warehouse.transaction import one_transaction, retrying


@dataclass(frozen=True, slots=True)
class ScrapeOutcome:
    source: str
    status: str  # success | unchanged | failed | rejected | skipped
    rows_parsed: int
    rows_stored: int
    rows_quarantined: int
    unknown_gpus: tuple[str, ...]
    error: str | None
    capture_id: str | None
    attempts: int
    url: str

    @classmethod
    def of(cls, record: ScrapeRecord, url: str) -> ScrapeOutcome:
        return cls(record.source, record.status, record.rows_parsed, record.rows_stored,
                   record.rows_quarantined, tuple(record.unknown_gpus), record.error,
                   record.capture_id, record.attempts, url)

    @property
    def ok(self) -> bool:
        return self.status in ("success", "unchanged", "skipped")


def capture_row(raw: RawCapture, archive_rel: Path,
                capture_id: str | None = None) -> dict[str, object]:
    return {
        "capture_id": capture_id or raw.capture_id, "source": raw.source, "url": raw.url,
        "fetched_at": raw.fetched_at, "content_type": raw.content_type,
        "size_bytes": len(raw.body), "archive_path": str(archive_rel),
    }


def parse_observations(source: Source, raw: RawCapture, run_id: str) -> pl.DataFrame:
    """Parse a capture into observation rows (unvalidated). Raises ParseError on any failure
    (SourceDef.parse turns a parser's own crash into one)."""
    return to_observations(source.parse(raw), raw, run_id)


def skips_note(note: str | None, skips: Skips, screens: Counter[str] | None = None) -> str | None:
    """The run's note with the parser's skips and the screens' counts after it
    ("<note>; screened: 3 unknown GPU; skipped: 2 contact sales")."""
    parts = [note]
    if screens and describe_counts(screens):
        parts.append(f"screened: {describe_counts(screens)}")
    if skips:
        parts.append(f"skipped: {skips.describe()}")
    return "; ".join(filter(None, parts)) or None


def unknown_names(observations: pl.DataFrame) -> list[str]:
    return sorted(
        observations.filter(pl.col("gpu_model") == UNKNOWN_GPU)["gpu_name"]
        .fill_null("(none)").unique().to_list()
    )


@dataclass(frozen=True, slots=True)
class Prepared:
    """A capture parsed and validated, not yet landed: `batch` or the parse `error`."""

    capture_id: str
    run_id: str
    rows_parsed: int = 0
    batch: ValidatedBatch | None = None
    unknown_gpus: tuple[str, ...] = ()
    error: str | None = None
    skips: Skips = field(default_factory=Skips)
    prices: pl.Series | None = None  # every parsed row's price (the zero-price gate)


def prepare(source: Source, raw: RawCapture, run_id: str,
            con: duckdb.DuckDBPyConnection | None = None) -> Prepared:
    """Parse, convert, validate and screen `raw` (no clock; the warehouse `con` is only read,
    for exchange rates: without it a non-USD price is held out). Never raises for bad input.
    Screens that need the warehouse (the market's band, jumps, gates) run in `land`."""
    capture_id = raw.capture_id  # a sha256 of the whole payload: ~1 ms per MB, so once
    try:
        report = source.parse_report(raw)
        observations = to_observations(report.frame, raw, run_id)
    except ParseError as exc:
        return Prepared(capture_id, run_id, error=f"parse error: {exc}")
    # Non-USD prices -> USD at the ECB rate of the capture's day (warehouse.fx); a row with no
    # rate is held out into quarantine with the reason, for `reparse` once rates arrive.
    converted = convert_batch(con, observations, raw.fetched_at)
    batch = hold_out(validate_guarded(converted.rows, aggregator=source.aggregator), converted)
    terms = reserved_without_term(batch.good)
    if terms:
        batch = replace(batch, screens=batch.screens + Counter(reserved_without_term=terms))
    return Prepared(capture_id, run_id, observations.height, batch,
                    tuple(unknown_names(observations)), skips=report.skips,
                    # the price as quoted (USD, or the native price of a non-USD row)
                    prices=observations.select(pl.coalesce("price_usd_per_hour",
                                                           "price_native_per_hour")).to_series())


def screen_in_warehouse(con: duckdb.DuckDBPyConnection, source: Source, raw: RawCapture,
                        batch: ValidatedBatch, context: ScreenContext | None = None
                        ) -> tuple[ValidatedBatch, list[str]]:
    """The screens that need the warehouse, over a prepared batch: the band narrowed to the
    market's current prices, jump flags, and (aggregators) each provider's volume gate.
    Returns the batch and what the run's note must say about an aggregator's providers (gated
    ones, and ones this capture leaves out: both keep their earlier prices). `context`: read
    here when not given."""
    context = context or screen_context(con, source.name, raw.fetched_at,
                                        aggregator=source.aggregator)
    rescreened = band_screen(batch.good, context.market)
    good, counts = rescreened.good, batch.screens + rescreened.counts
    good, jumps = flag_jumps(good, context)
    if jumps:
        counts["jump"] += jumps
    batch = replace(batch, good=good, screens=counts, quarantined=pl.concat(
        [batch.quarantined, rescreened.quarantined], how="vertical_relaxed"))
    if not source.aggregator:
        return batch, []
    parsed = pl.concat([batch.good.select(list(OBSERVATION_SCHEMA)),
                        batch.quarantined.select(list(OBSERVATION_SCHEMA))])
    previous = previous_parts(con, source.name, raw.fetched_at)
    gates = provider_gates(parsed, previous)
    absent = sorted(set(previous) - set(parsed["provider"].unique().to_list()))
    notes = [f"gated (earlier prices kept): {'; '.join(gates.values())}"] if gates else []
    if absent:
        notes.append(f"not in this capture (earlier prices kept): {', '.join(absent)}")
    if not gates:
        return batch, notes
    gated = pl.col("provider").is_in(list(gates))
    held = batch.good.filter(gated)
    counts["volume_gate"] += held.height
    reason = pl.concat_str(pl.lit("volume gate: "), pl.col("provider").replace_strict(
        gates, default=None), pl.lit("; the provider's earlier prices stay current"))
    quarantined = pl.concat([batch.quarantined, held.with_columns(reason.alias("failed_check"))],
                            how="vertical_relaxed")
    return replace(batch, good=batch.good.filter(~gated), quarantined=quarantined,
                   screens=counts), notes


def ingest(
    con: duckdb.DuckDBPyConnection,
    source: Source,
    raw: RawCapture,
    *,
    run_id: str,
    archive_root: Path,
    started_at: datetime | None = None,
    attempts: int = 1,
    note: str | None = None,
    previous_rows: int | Literal["last_run"] | None = "last_run",
) -> ScrapeOutcome:
    """Land one capture of `source`. Never raises for bad input: the outcome says what happened.

    `previous_rows`: what the shrink guard compares with; by default the source's last good
    run. A backfill passes the previous snapshot's rows (history lands behind newer data).
    """
    return land(con, source, raw, None, run_id=run_id, archive_root=archive_root,
                started_at=started_at, attempts=attempts, note=note,
                previous_rows=previous_rows)


def land(
    con: duckdb.DuckDBPyConnection,
    source: Source,
    raw: RawCapture,
    prepared: Prepared | None,
    *,
    run_id: str,
    archive_root: Path,
    started_at: datetime | None = None,
    attempts: int = 1,
    note: str | None = None,
    previous_rows: int | Literal["last_run"] | None = "last_run",
) -> ScrapeOutcome:
    """The warehouse half of `ingest`: archive, skip a stored payload, guard, append.

    `prepared`: `prepare(source, raw, run_id)` done earlier (e.g. outside a lock); None to
    parse here, and only when the payload is not already stored. On a lake another worker's
    commit may come first: the whole landing (its checks included) then runs again
    (warehouse.transaction.retrying).
    """
    if prepared is not None and prepared.run_id != run_id:
        raise ValueError(f"prepared for run {prepared.run_id!r}, landing run {run_id!r}")
    return retrying(lambda: _land_once(
        con, source, raw, prepared, run_id=run_id, archive_root=archive_root,
        started_at=started_at, attempts=attempts, note=note, previous_rows=previous_rows),
        what=f"landing {source.name}")


@dataclass(frozen=True, slots=True)
class Landing:
    """One source's capture waiting to land (the arguments of `land`, for `land_group`)."""

    source: Source
    raw: RawCapture
    prepared: Prepared | None
    started_at: datetime
    attempts: int = 1
    note: str | None = None


def land_group(con: duckdb.DuckDBPyConnection, landings: list[Landing], *, run_id: str,
               archive_root: Path) -> list[ScrapeOutcome]:
    """`land` for several captures in one transaction: each lands exactly as `land` would
    land it alone (same checks, screens and outcome), the day-by-day tables are recomputed
    once, and the group commits once (on a lake a commit is the expensive, serial part).
    A conflict runs the whole group again; any other error rolls the whole group back and is
    raised: the caller lands each capture alone then, so one bad capture keeps no other out."""
    for landing in landings:
        if landing.prepared is not None and landing.prepared.run_id != run_id:
            raise ValueError(f"prepared for run {landing.prepared.run_id!r}, landing run "
                             f"{run_id!r}")

    def once() -> list[ScrapeOutcome]:
        with one_transaction(con), days_refreshed_once(con):
            return [_land_once(con, x.source, x.raw, x.prepared, run_id=run_id,
                               archive_root=archive_root, started_at=x.started_at,
                               attempts=x.attempts, note=x.note, previous_rows="last_run")
                    for x in landings]
    return retrying(once, what=f"landing {', '.join(x.source.name for x in landings)}")


def _land_once(
    con: duckdb.DuckDBPyConnection,
    source: Source,
    raw: RawCapture,
    prepared: Prepared | None,
    *,
    run_id: str,
    archive_root: Path,
    started_at: datetime | None,
    attempts: int,
    note: str | None,
    previous_rows: int | Literal["last_run"] | None,
) -> ScrapeOutcome:
    capture_id = prepared.capture_id if prepared is not None else raw.capture_id
    record = ScrapeRecord(run_id=run_id, source=source.name,
                          started_at=started_at or datetime.now(UTC), status="failed",
                          attempts=attempts, observed_at=raw.fetched_at,
                          capture_id=capture_id, note=note)
    archive_rel = archive(raw, archive_root)
    capture = capture_row(raw, archive_rel, capture_id)
    if capture_stored(con, source.name, capture_id):
        record.status = "unchanged"
        record.note = note or "payload identical to a stored capture; prices re-confirmed"
        append_batch(con, record, capture=capture)
        return ScrapeOutcome.of(record, raw.url)
    if prepared is None:
        prepared = prepare(source, raw, run_id, con)
    if prepared.batch is None:
        record.error = prepared.error
        append_batch(con, record, capture=capture)
        return ScrapeOutcome.of(record, raw.url)

    batch = prepared.batch
    parts: list[str] = []
    context: ScreenContext | None = None
    if not batch.suspect:
        # the market the band is narrowed to is stored with the capture (screen_market), so
        # the index's `reproduce` screens the capture again exactly as here
        context = screen_context(con, source.name, raw.fetched_at, aggregator=source.aggregator)
        batch, parts = screen_in_warehouse(con, source, raw, batch, context)
    record.note = "; ".join(filter(None, [skips_note(note, prepared.skips, batch.screens),
                                          *parts])) or None
    record.rows_parsed = prepared.rows_parsed
    record.rows_quarantined = batch.quarantined.height
    record.unknown_gpus = list(prepared.unknown_gpus)
    if batch.suspect:
        # A misread layout: the source fails, its earlier prices stay current, and the raw
        # capture (archived above) waits for `reparse` with a fixed parser.
        record.error = batch.suspect
        append_batch(con, record, capture=capture, quarantined=batch.quarantined)
        return ScrapeOutcome.of(record, raw.url)
    previous = previous_good_rows(con, source.name) if previous_rows == "last_run" \
        else previous_rows
    if source.aggregator:
        # An aggregator's shrink is judged per provider (screen_in_warehouse's gates): a file
        # naming fewer providers lands, and the providers it leaves out keep their prices.
        previous = None
    rejection = batch_rejection(prepared.rows_parsed, previous, prepared.prices)
    if rejection is None and batch.good.height == 0:
        rejection = f"no row passed the screens ({prepared.rows_parsed} parsed)"
    if rejection and record.rows_quarantined:
        checks = batch.quarantined["failed_check"].value_counts(sort=True)
        top = checks.row(0)[0] if checks.height else "?"
        rejection += f"; {record.rows_quarantined} rows quarantined (most: {top})"
    if rejection:
        record.status = "rejected"
        record.error = f"batch rejected: {rejection}"
        append_batch(con, record, capture=capture, quarantined=batch.quarantined)
        return ScrapeOutcome.of(record, raw.url)
    record.status = "success"
    record.rows_stored = batch.good.height
    append_batch(con, record, capture=capture, good=batch.good, quarantined=batch.quarantined,
                 parts=source.aggregator,
                 screen_market=context.market if context is not None else None)
    return ScrapeOutcome.of(record, raw.url)


def record_fetch_failure(
    con: duckdb.DuckDBPyConnection, source: Source, *, run_id: str, started_at: datetime,
    attempts: int, error: str, status: str = "failed",
) -> ScrapeOutcome:
    """Record a source that produced no capture: fetch failed, task died, or it was skipped."""
    def write() -> ScrapeOutcome:
        record = ScrapeRecord(run_id=run_id, source=source.name, started_at=started_at,
                              status=status, attempts=attempts, error=error)
        append_batch(con, record)
        return ScrapeOutcome.of(record, source.url)
    return retrying(write, what=f"recording {source.name}")
