"""Fix the index, day by day, and keep published days honest.

`fix_index` (the nightly refresh calls it after every source landed; `gpuprices index fix`):
1. checks every published day whose warehouse inputs may have changed since it was fixed (a
   backfill or a reparse of a capture observed before its fixing time) and, where the same
   method would now give another fixing, writes a revision record beside it;
2. fixes every day after the last fixed one, up to today: a past day as the prices stood at
   its end, today as they stand now (the fixing time is the first fix run of the day, normally
   the nightly refresh); the first fix starts at the first day with prices (or `since`).

A fixing is never rewritten. The parameters in force are one methodology version: a change of
any value with the same version is refused; a new version applies from the next unfixed day
(`gpuprices index impact` shows what it would have done to the stored history).
"""

from __future__ import annotations

import hashlib
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from datetime import UTC, date, datetime, timedelta

import duckdb
import polars as pl

from scrapers.base import Source
from warehouse.index.engine import History, fix_day, frames
from warehouse.index.params import IndexParams, default_params
from warehouse.index.prints import SeriesScope, day_inputs, day_prints
from warehouse.index.provenance import code_version, parser_digests
from warehouse.index.store import (
    DayRecord,
    day_record,
    history_before,
    inputs_digest,
    last_checks,
    last_fixed_day,
    latest_digests,
    method_params,
    read_inputs,
    record_method,
    runs_fingerprints,
    with_digests,
    write_check,
    write_day,
    write_revision,
)
from warehouse.semantic import day_end

__all__ = ["Computed", "FixResult", "IndexParamsChanged", "check_revisions", "compute_day",
           "first_priced_day", "fix_index", "indicative"]


class IndexParamsChanged(ValueError):
    """Parameters differ from the version they claim (one line)."""


@dataclass(frozen=True, slots=True)
class Computed:
    """One day's fixings as computed (not necessarily published)."""

    day: date
    as_of: datetime
    params: IndexParams
    fixings: pl.DataFrame  # FIXING_SCHEMA + content_digest
    votes: pl.DataFrame  # VOTE_SCHEMA


@dataclass(slots=True)
class FixResult:
    fixed: list[date] = field(default_factory=list)
    fixings: int = 0
    revisions: list[tuple[str, int, str]] = field(default_factory=list)  # (id, number, why)
    checked: list[date] = field(default_factory=list)


def compute_day(con: duckdb.DuckDBPyConnection, day: date, as_of: datetime,
                params: IndexParams, history: History,
                prints: pl.DataFrame | None = None,
                gpu_models: Sequence[str] | None = None,
                scope: SeriesScope | None = None) -> Computed:
    """The fixings of `day` as of `as_of` from the warehouse's prints (or `prints`); of
    `gpu_models`' series in `scope` alone when given (`history` then holds theirs alone)."""
    if prints is None:
        prints = day_prints(con, as_of, params, gpu_models)
    fixings, votes = frames(fix_day(day, prints, history, params, scope))
    fixings = with_digests(fixings, votes, method_version=params.version,
                           params_digest=params.digest, as_of=as_of)
    return Computed(day, as_of, params, fixings, votes)


def indicative(con: duckdb.DuckDBPyConnection, day: date, now: datetime | None = None,
               params: IndexParams | None = None,
               gpu_models: Sequence[str] | None = None,
               scope: SeriesScope | None = None) -> Computed:
    """A day's fixings computed from the published record, not written (a day not fixed yet:
    today before the nightly fixing, or a warehouse that has none). `gpu_models`: their
    series alone, the same fixings as computed with every model (a series reads its own
    model's offers and votes; the band is per model; the first day is the index's), at a
    fraction of the cost (BENCHMARKS §18); `scope`: the series of one kind, segment or
    geography alone (prints.SeriesScope)."""
    params = params or default_params()
    now = now or datetime.now(UTC)
    return compute_day(con, day, day_end(day, now), params,
                       history_before(con, day, params, gpu_models, scope),
                       gpu_models=gpu_models, scope=scope)


def first_priced_day(con: duckdb.DuckDBPyConnection) -> date | None:
    row = con.execute("SELECT min(utc_day(observed_at)) FROM scrape_run "
                      "WHERE confirms(status) AND capture_id IS NOT NULL").fetchone()
    return row[0] if row else None


def _check_version(con: duckdb.DuckDBPyConnection, params: IndexParams) -> None:
    row = con.execute("SELECT params_digest FROM index_method WHERE method_version = $v "
                      "AND params_digest <> $d LIMIT 1",
                      {"v": params.version, "d": params.digest}).fetchone()
    if row:
        raise IndexParamsChanged(
            f"index parameters changed but still say version {params.version!r} (published "
            f"with parameters {str(row[0])[:12]}…, now {params.digest[:12]}…): give the change "
            "a new `version` in params.toml (it applies from the next unfixed day; "
            "`gpuprices index impact` shows its effect on the stored history)")


def _inputs(con: duckdb.DuckDBPyConnection, as_of: datetime,
            parsers: dict[str, str | None]) -> pl.DataFrame:
    inputs = day_inputs(con, as_of)
    return inputs.with_columns(
        pl.col("source").replace_strict(parsers, default=None, return_dtype=pl.String)
        .alias("parser_digest"))


def _day_digest(fixings: pl.DataFrame) -> str:
    return hashlib.sha256("\n".join(fixings.sort("fixing_id")["content_digest"].to_list())
                          .encode()).hexdigest()


def fix_index(con: duckdb.DuckDBPyConnection, *, now: datetime | None = None,
              params: IndexParams | None = None, sources: Mapping[str, Source] | None = None,
              since: date | None = None, through: date | None = None) -> FixResult:
    """Check published days for revisions, then fix every unfixed day up to `through`
    (default today). `sources`: the source registry, to record each input's parser digest."""
    now = now or datetime.now(UTC)
    params = params or default_params()
    _check_version(con, params)
    result = check_revisions(con, now=now)
    today = now.astimezone(UTC).date()
    last = last_fixed_day(con)
    if last is None:
        start = since or first_priced_day(con)
        if start is None:
            return result
    else:
        if since is not None and since != last + timedelta(days=1):
            raise ValueError(f"the index is fixed up to {last}: the next day to fix is "
                             f"{last + timedelta(days=1)} (published days are never fixed "
                             "again and none is skipped)")
        start = last + timedelta(days=1)
    end = min(through or today, today)
    if start > end:
        return result
    parsers = parser_digests(sources)
    history = history_before(con, start, params)
    if history.genesis is None:
        history.genesis = start
    record_method(con, params, start)
    day = start
    while day <= end:
        as_of = day_end(day, now)
        computed = compute_day(con, day, as_of, params, history)
        inputs = _inputs(con, as_of, parsers)
        record = DayRecord(
            day=day, as_of=as_of, method_version=params.version,
            params_digest=params.digest, inputs_digest=inputs_digest(inputs),
            runs_fingerprint=runs_fingerprints(con, {day: as_of})[day],
            code_version=code_version(), fixings=computed.fixings.height,
            day_digest=_day_digest(computed.fixings), published_at=datetime.now(UTC))
        write_day(con, record, inputs, computed.fixings, computed.votes)
        history.add(computed.votes)
        result.fixed.append(day)
        result.fixings += computed.fixings.height
        day += timedelta(days=1)
    return result


def _changes(old: pl.DataFrame, new: pl.DataFrame) -> str:
    """What differs between two days' inputs, in words."""
    key = ["source", "capture_id"]

    def rows(frame: pl.DataFrame) -> dict[tuple[str, str], tuple[int, str]]:
        return {(r["source"], r["capture_id"]): (int(r["rows"]), str(r["rows_hash"]))
                for r in frame.select(*key, "rows", "rows_hash").iter_rows(named=True)}

    before, after = rows(old), rows(new)
    parts = [f"capture added: {s} {c[:12]}" for s, c in sorted(set(after) - set(before))]
    parts += [f"capture no longer in force: {s} {c[:12]}"
              for s, c in sorted(set(before) - set(after))]
    parts += [f"rows changed: {s} {c[:12]} ({before[(s, c)][0]} -> {after[(s, c)][0]} rows)"
              for s, c in sorted(set(before) & set(after)) if before[(s, c)] != after[(s, c)]]
    return "; ".join(parts) or "capture times changed"


def check_revisions(con: duckdb.DuckDBPyConnection, *,
                    now: datetime | None = None) -> FixResult:
    """Compare every published day whose runs changed since its last check with what the
    warehouse now holds; a fixing the same method would now make differently gets a revision
    record (the fixing stands). Records each check."""
    result = FixResult()
    known = last_checks(con)
    if not known:
        return result
    moments = dict(con.execute("SELECT day, as_of FROM index_day").fetchall())
    current = runs_fingerprints(con, moments)
    for day in sorted(d for d in known if current.get(d) != known[d][0]):
        record = day_record(con, day)
        assert record is not None
        inputs = day_inputs(con, record.as_of)
        digest = inputs_digest(inputs)
        revisions = 0
        if digest != known[day][1]:
            params = method_params(con, record.params_digest)
            if params is None:  # a version whose parameters were not recorded: cannot judge
                continue
            computed = compute_day(con, day, record.as_of, params,
                                   history_before(con, day, params))
            standing = latest_digests(con, day)
            why = _changes(read_inputs(con, [day]), inputs)
            votes = computed.votes
            for fixing in computed.fixings.iter_rows(named=True):
                if standing.get(fixing["fixing_id"]) == fixing["content_digest"]:
                    continue
                mine = votes.filter(pl.col("fixing_id") == fixing["fixing_id"]).to_dicts()
                note = why if fixing["fixing_id"] in standing else f"not published: {why}"
                number = write_revision(con, fixing, mine, note)
                result.revisions.append((fixing["fixing_id"], number, note))
                revisions += 1
            for gone in sorted(set(standing) - set(computed.fixings["fixing_id"])):
                empty = {"fixing_id": gone, "day": day, "value": None, "band_low": None,
                         "band_high": None, "panel": 0,
                         "withheld_reason": "no vote any more", "content_digest": "none"}
                number = write_revision(con, empty, [], f"no vote any more: {why}")
                result.revisions.append((gone, number, f"no vote any more: {why}"))
                revisions += 1
        write_check(con, day, current.get(day, ""), digest, revisions)
        result.checked.append(day)
    return result
