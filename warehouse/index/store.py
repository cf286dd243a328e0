"""The index's records (migration 013): written once, read back, digested.

Nothing here updates or deletes a record: a day is written whole in one transaction
(index_day, its index_input rows, every index_fixing and index_vote), a revision is a new
index_revision row beside the fixing it revises, a check is a new index_check row.

The content digest of a fixing is the sha256 of its canonical JSON document (`document`): the
series, day, fixing time, method version and parameters digest, the value, band, panel counts,
reason, and every vote with its value, spread, weight, flags, offers, sources and capture ids
(floats rounded to 8 decimals, lists sorted, keys sorted).
"""

from __future__ import annotations

import json
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from datetime import UTC, date, datetime, timedelta
from typing import TYPE_CHECKING, Any

import duckdb

from warehouse.frames import scanned_once, sql_frame
from warehouse.index.params import IndexParams, canonical_json, params_from_json
from warehouse.transaction import transaction

if TYPE_CHECKING:  # polars where a frame is made: `index` prints a fixed day without it
    import polars as pl

    from warehouse.index.engine import History
    from warehouse.index.prints import SeriesScope

__all__ = [
    "DayRecord",
    "day_record",
    "digest_of",
    "document",
    "fixed_days",
    "fixings_query",
    "history_before",
    "inputs_digest",
    "last_checks",
    "last_fixed_day",
    "latest_digests",
    "method_params",
    "read_fixings",
    "read_inputs",
    "read_revisions",
    "read_votes",
    "record_method",
    "runs_fingerprints",
    "votes_query",
    "with_digests",
    "write_check",
    "write_day",
    "write_revision",
]

_ROUND = 8


def _r(value: float | None) -> float | None:
    return None if value is None else round(float(value), _ROUND)


def _day(value: date | None) -> str | None:
    return value.isoformat() if value is not None else None


def _vote_doc(v: dict[str, Any]) -> dict[str, Any]:
    return {"provider": v["provider"], "provider_segment": v["provider_segment"],
            "value": _r(v["value"]), "native_value": _r(v["native_value"]),
            "currency": v["currency"], "sd": _r(v["sd"]), "weight": _r(v["weight"]),
            "passing": bool(v["passing"]), "fresh": bool(v["fresh"]),
            "carried_from": _day(v["carried_from"]), "flags": sorted(v["flags"] or []),
            "note": v["note"], "offers": int(v["offers"]),
            "sources": sorted(v["sources"] or []), "capture_ids": sorted(v["capture_ids"] or [])}


def document(fixing: dict[str, Any], votes: Iterable[dict[str, Any]], *, method_version: str,
             params_digest: str, as_of: datetime) -> dict[str, Any]:
    """The canonical document a fixing's content digest is taken over."""
    return {
        "fixing_id": fixing["fixing_id"], "day": _day(fixing["day"]),
        "gpu_model": fixing["gpu_model"], "kind": fixing["kind"],
        "term_months": int(fixing["term_months"]), "segment": fixing["segment"],
        "geo": fixing["geo"], "value": _r(fixing["value"]),
        "band": [_r(fixing["band_low"]), _r(fixing["band_high"])],
        "panel": int(fixing["panel"]), "fresh": int(fixing["fresh"]),
        "carried": int(fixing["carried"]), "flagged": int(fixing["flagged"]),
        "withheld_reason": fixing["withheld_reason"], "method_version": method_version,
        "params_digest": params_digest,
        "as_of": as_of.astimezone(UTC).isoformat(timespec="microseconds"),
        "votes": sorted((_vote_doc(v) for v in votes), key=lambda d: d["provider"]),
    }


def digest_of(doc: dict[str, Any]) -> str:
    import hashlib  # OpenSSL's start: where a digest is made, never a read

    return hashlib.sha256(canonical_json(doc).encode()).hexdigest()


def with_digests(fixings: pl.DataFrame, votes: pl.DataFrame, *, method_version: str,
                 params_digest: str, as_of: datetime) -> pl.DataFrame:
    """`fixings` with its content_digest column."""
    import polars as pl

    by_fixing: dict[str, list[dict[str, Any]]] = {}
    for vote in votes.iter_rows(named=True):
        by_fixing.setdefault(vote["fixing_id"], []).append(vote)
    digests = [digest_of(document(f, by_fixing.get(f["fixing_id"], []),
                                  method_version=method_version, params_digest=params_digest,
                                  as_of=as_of)) for f in fixings.iter_rows(named=True)]
    return fixings.with_columns(pl.Series("content_digest", digests, pl.String()))


def inputs_digest(inputs: pl.DataFrame) -> str:
    rows = [{"source": r["source"], "capture_id": r["capture_id"],
             "observed_at": r["observed_at"].astimezone(UTC).isoformat(),
             "seen_at": r["seen_at"].astimezone(UTC).isoformat(),
             "providers": r["providers"], "rows": int(r["rows"]), "rows_hash": r["rows_hash"]}
            for r in inputs.sort("source", "observed_at", "capture_id").iter_rows(named=True)]
    import hashlib  # OpenSSL's start: where a digest is made, never a read

    return hashlib.sha256(canonical_json(rows).encode()).hexdigest()


# ---- methodology versions -------------------------------------------------------------------

def record_method(con: duckdb.DuckDBPyConnection, params: IndexParams, first_day: date) -> None:
    """Record a methodology version's parameters (once)."""
    # an explicit check, not ON CONFLICT: a DuckLake warehouse has no keys (warehouse.dialect)
    con.execute("INSERT INTO index_method SELECT $d, $v, $j, $first, $now WHERE NOT EXISTS "
                "(SELECT 1 FROM index_method WHERE params_digest = $d)",
                {"d": params.digest, "v": params.version, "j": params.to_json(),
                 "first": first_day, "now": datetime.now(UTC)})


def method_params(con: duckdb.DuckDBPyConnection, params_digest: str) -> IndexParams | None:
    row = con.execute("SELECT params_json FROM index_method WHERE params_digest = $d",
                      {"d": params_digest}).fetchone()
    return params_from_json(str(row[0])) if row else None


# ---- days -------------------------------------------------------------------------------

@dataclass(frozen=True, slots=True)
class DayRecord:
    day: date
    as_of: datetime
    method_version: str
    params_digest: str
    inputs_digest: str
    runs_fingerprint: str
    code_version: str
    fixings: int
    day_digest: str
    published_at: datetime


def write_day(con: duckdb.DuckDBPyConnection, record: DayRecord, inputs: pl.DataFrame,
              fixings: pl.DataFrame, votes: pl.DataFrame) -> None:
    """One day's records, in one transaction (the caller holds none)."""
    import polars as pl

    fixings = fixings.with_columns(
        pl.lit(record.method_version).alias("method_version"),
        pl.lit(record.params_digest).alias("params_digest"),
        pl.lit(record.as_of).cast(pl.Datetime("us", "UTC")).alias("as_of"),
        pl.lit(record.published_at).cast(pl.Datetime("us", "UTC")).alias("published_at"))
    from warehouse.append import insert_frame  # pandera: only a fixing writes, never a read

    with transaction(con):
        con.execute(
            "INSERT INTO index_day VALUES ($day, $as_of, $v, $p, $i, $r, $c, $n, $d, $at)",
            {"day": record.day, "as_of": record.as_of, "v": record.method_version,
             "p": record.params_digest, "i": record.inputs_digest,
             "r": record.runs_fingerprint, "c": record.code_version, "n": record.fixings,
             "d": record.day_digest, "at": record.published_at})
        insert_frame(con, "index_input", inputs.with_columns(pl.lit(record.day).alias("day")))
        insert_frame(con, "index_fixing", fixings)
        insert_frame(con, "index_vote", votes)


def day_record(con: duckdb.DuckDBPyConnection, day: date) -> DayRecord | None:
    row = con.execute("SELECT day, as_of, method_version, params_digest, inputs_digest, "
                      "runs_fingerprint, code_version, fixings, day_digest, published_at "
                      "FROM index_day WHERE day = $d", {"d": day}).fetchone()
    return DayRecord(*row) if row else None


def fixed_days(con: duckdb.DuckDBPyConnection) -> list[date]:
    return [r[0] for r in con.execute("SELECT day FROM index_day ORDER BY day").fetchall()]


def last_fixed_day(con: duckdb.DuckDBPyConnection) -> date | None:
    row = con.execute("SELECT max(day) FROM index_day").fetchone()
    return row[0] if row else None


def read_inputs(con: duckdb.DuckDBPyConnection, days: list[date]) -> pl.DataFrame:
    return sql_frame(con, "SELECT * EXCLUDE (day), day FROM index_input "
                     "WHERE list_contains($days, day) ORDER BY day, source, observed_at",
                     {"days": days})


def fixings_query(*, days: list[date] | None = None, since: date | None = None,
                  until: date | None = None, gpu_models: list[str] | None = None,
                  kind: str | None = None, segment: str | None = None,
                  geo: str | None = None) -> tuple[str, dict[str, object]]:
    """The SQL and parameters of the published fixings (every column of index_fixing), by
    day and series."""
    return ("""
        SELECT * FROM index_fixing
        WHERE ($days IS NULL OR list_contains($days, day))
          AND ($since IS NULL OR day >= $since) AND ($until IS NULL OR day <= $until)
          AND ($models IS NULL OR list_contains($models, gpu_model))
          AND ($kind IS NULL OR kind = $kind)
          AND ($segment IS NULL OR segment = $segment) AND ($geo IS NULL OR geo = $geo)
        ORDER BY day, gpu_model, kind, term_months, segment <> 'all', segment, geo <> 'all', geo
        """,
            {"days": days, "since": since, "until": until, "models": gpu_models, "kind": kind,
             "segment": segment, "geo": geo})


def read_fixings(con: duckdb.DuckDBPyConnection, *, days: list[date] | None = None,
                 since: date | None = None, until: date | None = None,
                 gpu_models: list[str] | None = None, kind: str | None = None,
                 segment: str | None = None, geo: str | None = None) -> pl.DataFrame:
    """Published fixings (every column of index_fixing), by day and series: fixings_query's
    rows as a frame."""
    return sql_frame(con, *fixings_query(days=days, since=since, until=until,
                                         gpu_models=gpu_models, kind=kind, segment=segment,
                                         geo=geo))


def read_votes(con: duckdb.DuckDBPyConnection, fixing_ids: list[str]) -> pl.DataFrame:
    """The votes of these fixings (by fixing, then provider: the table's key). A semi join,
    not list_contains, which compares every vote with every id (a day's 1,470 fixings at
    14,000 offerings: 118 ms against 27 ms)."""
    return sql_frame(con, *votes_query(fixing_ids))


def votes_query(fixing_ids: list[str]) -> tuple[str, dict[str, object]]:
    """read_votes' SQL and parameters."""
    return ("SELECT * FROM index_vote SEMI JOIN (SELECT unnest($ids) AS fixing_id) "
            "USING (fixing_id) ORDER BY fixing_id, provider", {"ids": fixing_ids})


def history_before(con: duckdb.DuckDBPyConnection, day: date, params: IndexParams,
                   gpu_models: Sequence[str] | None = None,
                   scope: SeriesScope | None = None) -> History:
    """The published record the fixing of `day` reads: votes of the lookback window before
    it (of `gpu_models`' series in `scope` alone when given), and the series' first day (the
    index's first fixed day, whatever the series)."""
    # the engine (and numpy) only where a day is fixed: readers of the record never load it
    from warehouse.index.engine import PAST_COLUMNS, VOTE_SCHEMA, History

    lookback = max(params.attendance_window_days, params.sd_window_days, params.dormant_days,
                   params.carry_days, 1)
    votes = sql_frame(
        con,
        f"SELECT {', '.join(PAST_COLUMNS)} FROM index_vote "  # not the notes: ~10 MiB at 50 M
        """WHERE day < $day AND day >= $since
             AND ($models IS NULL OR list_contains($models, gpu_model))
             AND ($kind IS NULL OR kind = $kind)
             AND ($segment IS NULL OR segment = $segment) AND ($geo IS NULL OR geo = $geo)
           ORDER BY day, fixing_id, provider""",
        {"day": day, "since": day - timedelta(days=lookback),
         "models": None if gpu_models is None else list(gpu_models),
         "kind": scope.kind if scope else None, "segment": scope.segment if scope else None,
         "geo": scope.geo if scope else None})
    row = con.execute("SELECT min(day) FROM index_day WHERE day < $day", {"day": day}).fetchone()
    return History(votes.cast({c: VOTE_SCHEMA[c] for c in PAST_COLUMNS}) if votes.height
                   else None,
                   genesis=row[0] if row and row[0] else None)


# ---- revisions and checks -----------------------------------------------------------------

def runs_fingerprints(con: duckdb.DuckDBPyConnection,
                      moments: dict[date, datetime]) -> dict[date, str]:
    """Per day, a fingerprint of every run that could shape prices as they stood at its
    moment (runs observed at or before it: landed, re-confirmed, re-parsed): a backfill or a
    reparse that touches a published day changes it."""
    if not moments:
        return {}
    import polars as pl

    days = pl.DataFrame({"day": list(moments), "as_of": list(moments.values())},
                        schema={"day": pl.Date(), "as_of": pl.Datetime("us", "UTC")})
    with scanned_once(con, "_index_moments", days):
        rows = con.execute(
            """
            WITH runs AS (
                SELECT observed_at, hash(run_id, source, status, capture_id, rows_stored,
                                         rows_quarantined) AS h
                FROM scrape_run
                WHERE observed_at IS NOT NULL
                  AND status IN ('success', 'unchanged', 'reparsed')
            )
            SELECT m.day, CAST(count(r.h) AS VARCHAR) || '-' ||
                          CAST(coalesce(sum(r.h), 0) AS VARCHAR)
            FROM _index_moments m LEFT JOIN runs r ON r.observed_at <= m.as_of
            GROUP BY m.day
            """).fetchall()
    return {day: str(fingerprint) for day, fingerprint in rows}


def last_checks(con: duckdb.DuckDBPyConnection) -> dict[date, tuple[str, str]]:
    """Per published day, the latest (runs fingerprint, inputs digest) known to hold."""
    rows = con.execute(
        """
        SELECT d.day, coalesce(arg_max(c.runs_fingerprint, c.checked_at), d.runs_fingerprint),
               coalesce(arg_max(c.inputs_digest, c.checked_at), d.inputs_digest)
        FROM index_day d LEFT JOIN index_check c USING (day)
        GROUP BY d.day, d.runs_fingerprint, d.inputs_digest
        """).fetchall()
    return {day: (str(runs), str(inputs)) for day, runs, inputs in rows}


def write_check(con: duckdb.DuckDBPyConnection, day: date, runs_fingerprint: str,
                inputs: str, revisions: int) -> None:
    con.execute("INSERT INTO index_check VALUES ($d, $now, $r, $i, $n)",
                {"d": day, "now": datetime.now(UTC), "r": runs_fingerprint, "i": inputs,
                 "n": revisions})


def latest_digests(con: duckdb.DuckDBPyConnection, day: date) -> dict[str, str]:
    """fixing_id -> the digest now standing for it (its latest revision's, else its own)."""
    rows = con.execute(
        """
        SELECT f.fixing_id, coalesce(arg_max(r.content_digest, r.revision), f.content_digest)
        FROM index_fixing f LEFT JOIN index_revision r USING (fixing_id)
        WHERE f.day = $d GROUP BY f.fixing_id, f.content_digest
        """, {"d": day}).fetchall()
    return {str(fid): str(digest) for fid, digest in rows}


def write_revision(con: duckdb.DuckDBPyConnection, fixing: dict[str, Any],
                   votes: list[dict[str, Any]], reason: str) -> int:
    """A revision record beside a published fixing (its number)."""
    row = con.execute("SELECT coalesce(max(revision), 0) + 1 FROM index_revision "
                      "WHERE fixing_id = $f", {"f": fixing["fixing_id"]}).fetchone()
    number = int(row[0]) if row else 1
    votes_json = json.dumps([_vote_doc(v) for v in votes], sort_keys=True)
    con.execute(
        "INSERT INTO index_revision VALUES ($f, $n, $day, $v, $lo, $hi, $panel, $why, $digest, "
        "$reason, $votes, $now)",
        {"f": fixing["fixing_id"], "n": number, "day": fixing["day"], "v": fixing["value"],
         "lo": fixing["band_low"], "hi": fixing["band_high"], "panel": fixing["panel"],
         "why": fixing["withheld_reason"], "digest": fixing["content_digest"],
         "reason": reason, "votes": votes_json, "now": datetime.now(UTC)})
    return number


def read_revisions(con: duckdb.DuckDBPyConnection, day: date | None = None) -> pl.DataFrame:
    """Revision records (of one day, or all), beside the fixings they revise."""
    return sql_frame(
        con,
        "SELECT fixing_id, revision, value, band_low, band_high, panel, withheld_reason, "
        "reason, created_at FROM index_revision WHERE ($day IS NULL OR day = $day) "
        "ORDER BY day, fixing_id, revision", {"day": day})
