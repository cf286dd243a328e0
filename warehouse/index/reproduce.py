"""`reproduce index`: recompute published fixings from the archived raw captures.

For the days asked: every capture the days' fixings stood on (index_input) is read back from
the raw archive, its sha256 checked against its id, parsed with the CURRENT parser of its
source and screened as at landing (warehouse.ingest.prepare: conversion, row screens,
validation; the price band narrowed to the market recorded when it landed; an aggregator's
providers as stored). The rows go into a scratch warehouse (in memory) with the runs that
made each capture current (stored, then seen at the recorded times), so the semantic layer
there answers each fixing time exactly as the warehouse did. Each day is then fixed again
with its recorded parameters, from the published record before it, and compared with what
was published: SAME, or each difference (value, band, panel, reason, and per vote the value,
flags, weight, offers and captures; a capture whose bytes changed; a capture that no longer
parses).
"""

from __future__ import annotations

import hashlib
from collections.abc import Mapping
from dataclasses import dataclass, field
from datetime import date, datetime
from pathlib import Path

import duckdb
import polars as pl

from contract import RawCapture
from schemas.observation import OBSERVATION_SCHEMA
from schemas.screens import band_screen
from scrapers.base import Source
from warehouse.append import insert_frame
from warehouse.archive import read_archived
from warehouse.connection import connect
from warehouse.frames import scanned_once, sql_frame
from warehouse.index.prints import day_prints
from warehouse.index.provenance import code_version, parser_digest
from warehouse.index.publish import compute_day
from warehouse.index.store import (
    day_record,
    history_before,
    method_params,
    read_fixings,
    read_inputs,
    read_votes,
)
from warehouse.ingest import prepare
from warehouse.screen_context import recorded_market

__all__ = ["Reproduction", "reproduce_days"]

_FIXING_FIELDS = ("value", "band_low", "band_high", "panel", "fresh", "carried", "flagged",
                  "withheld_reason")
_VOTE_FIELDS = ("value", "native_value", "sd", "weight", "passing", "fresh", "carried_from",
                "flags", "offers", "sources", "capture_ids")


@dataclass(slots=True)
class Reproduction:
    day: date
    as_of: datetime | None = None
    method_version: str = ""
    compared: int = 0
    same: int = 0
    differences: list[str] = field(default_factory=list)
    notes: list[str] = field(default_factory=list)

    @property
    def ok(self) -> bool:
        return not self.differences and self.compared > 0


def _round(value: object) -> object:
    if isinstance(value, float):
        return round(value, 8)
    if isinstance(value, list):
        return sorted(value)
    return value


def _shown(value: object) -> str:
    if isinstance(value, float):
        return f"{value:.6g}"
    if isinstance(value, list):
        return "[" + ", ".join(str(v)[:12] for v in sorted(value)) + "]"
    return str(value)


def _compare(published: pl.DataFrame, published_votes: pl.DataFrame, computed: pl.DataFrame,
             computed_votes: pl.DataFrame) -> tuple[int, list[str]]:
    """(fixings that are the same, one line per difference)."""
    lines: list[str] = []
    same = 0
    mine = {r["fixing_id"]: r for r in computed.iter_rows(named=True)}
    for old in published.iter_rows(named=True):
        fid = old["fixing_id"]
        new = mine.pop(fid, None)
        if new is None:
            lines.append(f"{fid}: published, but no longer made (no vote)")
            continue
        if new["content_digest"] == old["content_digest"]:
            same += 1
            continue
        head = f"{fid}:"
        for name in _FIXING_FIELDS:
            if _round(old[name]) != _round(new[name]):
                lines.append(f"{head} {name} published {_shown(old[name])}, "
                             f"recomputed {_shown(new[name])}")
        before = {v["provider"]: v for v in published_votes.filter(
            pl.col("fixing_id") == fid).iter_rows(named=True)}
        after = {v["provider"]: v for v in computed_votes.filter(
            pl.col("fixing_id") == fid).iter_rows(named=True)}
        for provider in sorted(set(before) | set(after)):
            a, b = before.get(provider), after.get(provider)
            if a is None or b is None:
                lines.append(f"{head} vote {provider} {'added' if a is None else 'gone'}")
                continue
            for name in _VOTE_FIELDS:
                if _round(a[name]) != _round(b[name]):
                    lines.append(f"{head} vote {provider} {name} published {_shown(a[name])}, "
                                 f"recomputed {_shown(b[name])}")
        if not any(line.startswith(head) for line in lines):
            lines.append(f"{head} content digest differs ({old['content_digest'][:12]} vs "
                         f"{new['content_digest'][:12]})")
    for fid in sorted(mine):
        lines.append(f"{fid}: recomputed, but was not published")
    return same, lines


def _scratch_rows(con: duckdb.DuckDBPyConnection, sources: Mapping[str, Source],
                  archive_root: Path, capture: dict[str, object],
                  problems: list[tuple[str, str]]) -> pl.DataFrame | None:
    """The capture re-parsed and screened as at landing, or None (with the reason)."""
    source, capture_id = str(capture["source"]), str(capture["capture_id"])
    label = f"capture {source} {capture_id[:12]}"
    src = sources.get(source)
    if src is None:
        problems.append((capture_id, f"{label}: source {source!r} is no longer registered"))
        return None
    row = con.execute("SELECT url, content_type, archive_path FROM raw_capture "
                      "WHERE capture_id = $c", {"c": capture_id}).fetchone()
    if row is None:
        problems.append((capture_id, f"{label}: no raw_capture record"))
        return None
    try:
        body = read_archived(archive_root, str(row[2]))
    except (OSError, EOFError) as exc:
        problems.append((capture_id, f"{label}: archived payload unreadable ({exc})"))
        return None
    actual = hashlib.sha256(body).hexdigest()
    if actual != capture_id:
        problems.append((capture_id, f"{label}: archived payload altered (its sha256 is now "
                                     f"{actual[:12]})"))
    observed = capture["observed_at"]
    assert isinstance(observed, datetime)
    raw = RawCapture(source=source, url=str(row[0]), fetched_at=observed, body=body,
                     content_type=str(row[1] or "application/octet-stream"))
    prepared = prepare(src, raw, f"reproduce:{capture_id[:12]}", con)
    if prepared.batch is None:
        problems.append((capture_id, f"{label}: the current parser fails: "
                                     f"{prepared.error}"))
        return None
    if prepared.batch.suspect:
        problems.append((capture_id, f"{label}: the current parser reads a suspect layout: "
                                     f"{prepared.batch.suspect}"))
        return None
    good = band_screen(prepared.batch.good, recorded_market(con, source, capture_id)).good
    good = good.with_columns(pl.lit(capture_id).alias("capture_id"),
                             pl.lit(observed).cast(pl.Datetime("us", "UTC")).alias("observed_at"))
    if src.aggregator:
        parts = [r[0] for r in con.execute(
            "SELECT provider FROM provider_capture WHERE source = $s AND capture_id = $c "
            "AND observed_at = $t", {"s": source, "c": capture_id, "t": observed}).fetchall()]
        good = good.filter(pl.col("provider").is_in(parts))
    return good.select(list(OBSERVATION_SCHEMA))


def _scratch(con: duckdb.DuckDBPyConnection, sources: Mapping[str, Source], archive_root: Path,
             inputs: pl.DataFrame, problems: list[tuple[str, str]]
             ) -> duckdb.DuckDBPyConnection:
    """An in-memory warehouse holding the inputs' captures, re-parsed, and their runs."""
    scratch = connect(":memory:")
    insert_frame(scratch, "source", sql_frame(con, "SELECT * FROM source"))
    captures = inputs.select("source", "capture_id", "observed_at").unique().sort(
        "source", "observed_at", "capture_id")
    runs: list[dict[str, object]] = []
    for i, capture in enumerate(captures.iter_rows(named=True)):
        rows = _scratch_rows(con, sources, archive_root, capture, problems)
        run_id = f"reproduce-{i}"
        seen = inputs.filter((pl.col("source") == capture["source"])
                             & (pl.col("capture_id") == capture["capture_id"])
                             & (pl.col("observed_at") == capture["observed_at"]))["seen_at"]
        times = sorted({capture["observed_at"], *seen.to_list()})
        for j, moment in enumerate(times):
            runs.append({"run_id": f"{run_id}-{j}", "source": capture["source"],
                         "started_at": moment, "finished_at": moment, "observed_at": moment,
                         "status": "success" if j == 0 else "unchanged",
                         "attempts": 1, "capture_id": capture["capture_id"],
                         "rows_parsed": 0 if rows is None else rows.height,
                         "rows_stored": 0 if rows is None else rows.height,
                         "rows_quarantined": 0})
        if rows is not None and rows.height:
            insert_frame(scratch, "observation", rows.with_columns(
                pl.lit(f"{run_id}-0").alias("run_id")))
    insert_frame(scratch, "scrape_run", pl.DataFrame(runs))
    keys = captures.select("source", "capture_id")
    with scanned_once(con, "_reproduce_keys", keys):
        parts = sql_frame(con, "SELECT p.* FROM provider_capture p "
                          "SEMI JOIN _reproduce_keys k USING (source, capture_id)")
    insert_frame(scratch, "provider_capture", parts)
    scratch.execute("""
        INSERT INTO latest_observation
        SELECT o.* FROM observation o
        JOIN latest_capture c ON o.source = c.source AND o.capture_id = c.capture_id
                             AND o.observed_at = c.observed_at""")
    return scratch


def _parser_notes(inputs: pl.DataFrame, sources: Mapping[str, Source]) -> list[str]:
    notes = []
    recorded = inputs.select("source", "parser_digest").unique().sort("source")
    for name, digest in recorded.iter_rows():
        now = parser_digest(sources[name]) if name in sources else None
        if digest and now and digest != now:
            notes.append(f"parser of {name} changed since the fixing (sha256 {digest[:12]} -> "
                         f"{now[:12]})")
    return notes


def reproduce_days(con: duckdb.DuckDBPyConnection, sources: Mapping[str, Source],
                   archive_root: Path, days: list[date], *,
                   gpu_models: list[str] | None = None) -> list[Reproduction]:
    """Recompute the published fixings of `days` (of `gpu_models`, default all) from their
    archived captures; one Reproduction per day."""
    results = [Reproduction(day) for day in days]
    records = {r.day: day_record(con, r.day) for r in results}
    known = [d for d, record in records.items() if record is not None]
    for result in results:
        if records[result.day] is None:
            result.differences.append(f"{result.day}: no published fixing that day")
    if not known:
        return results
    inputs = read_inputs(con, known)
    problems: list[tuple[str, str]] = []
    scratch = _scratch(con, sources, archive_root, inputs, problems)
    try:
        for result in results:
            record = records[result.day]
            if record is None:
                continue
            result.as_of, result.method_version = record.as_of, record.method_version
            mine = inputs.filter(pl.col("day") == result.day)
            ids = set(mine["capture_id"].to_list())
            result.differences += [text for capture_id, text in problems if capture_id in ids]
            params = method_params(con, record.params_digest)
            if params is None:
                result.differences.append(f"{result.day}: parameters {record.params_digest[:12]}"
                                          " not recorded")
                continue
            prints = day_prints(scratch, record.as_of, params)
            computed = compute_day(scratch, result.day, record.as_of, params,
                                   history_before(con, result.day, params), prints=prints)
            published = read_fixings(con, days=[result.day], gpu_models=gpu_models)
            fixings = computed.fixings
            if gpu_models:
                fixings = fixings.filter(pl.col("gpu_model").is_in(gpu_models))
            votes = computed.votes.filter(pl.col("fixing_id").is_in(fixings["fixing_id"].implode()))
            result.compared = published.height
            same, lines = _compare(published, read_votes(con, published["fixing_id"].to_list()),
                                   fixings, votes)
            result.same = same
            result.differences += lines
            result.notes += _parser_notes(mine, sources)
            if record.code_version != code_version():
                result.notes.append(f"fixed by {record.code_version}; recomputed by "
                                    f"{code_version()}")
            revisions = con.execute(
                "SELECT count(*) FROM index_revision WHERE day = $d", {"d": result.day}
            ).fetchone()
            if revisions and revisions[0]:
                result.notes.append(f"{revisions[0]} revision record(s) stand beside this "
                                    "day's fixings (`gpuprices index --revisions`)")
    finally:
        scratch.close()
    return results
