"""The published index as files next to the board, a set per month, so a board writes the
months whose fixings changed (as a rule only the current one), never the whole history again:

- `gpu-index/YYYY-MM.json` and `gpu-index/YYYY-MM.parquet`: the month's fixings (series,
  values, bands, panels); `gpu-index/YYYY-MM-votes.parquet`: their votes (the panels);
- `gpu-index.json`: the parameters of each method version, and the months, each with its
  days, its fixings, the digest of its days (index_day.day_digest, so an unchanged month is
  known without reading its fixings) and its files' sha256;
- `gpu-index.sha256`: the sha256 of every file (sha256sum -c format, paths relative to the
  folder).

Published fixings are never revised (revision records are separate), so a month's files stay
as written while its days' digests stay the same. Each file is written atomically
(contract.files): a reader never sees half a file, and a failed write leaves the previous one
whole."""

from __future__ import annotations

import hashlib
import io
import json
from collections.abc import Iterable
from dataclasses import dataclass
from datetime import UTC, date, datetime
from pathlib import Path

import duckdb
import polars as pl

from contract.files import write_bytes_atomic
from warehouse.frames import sql_frame
from warehouse.index.store import read_fixings

__all__ = ["DIGESTS", "FORMER_FILES", "MANIFEST", "MONTHS_FOLDER", "IndexFiles", "month_files",
           "write_index_files"]

MANIFEST = "gpu-index.json"
DIGESTS = "gpu-index.sha256"
MONTHS_FOLDER = "gpu-index"
# The single-file layout before the month sets: in a board folder written before, these kept
# the fixings of their day, listed by no manifest or digest. They are removed, never refreshed.
FORMER_FILES = ("gpu-index.parquet", "gpu-index-votes.parquet")


@dataclass(frozen=True, slots=True)
class IndexFiles:
    paths: tuple[Path, ...]  # the files written this time (unchanged months are not)
    digests: dict[str, str]  # the page's list: the manifest and the newest month's files
    fixings: int  # every fixing the files hold
    months: int  # months published
    months_written: int


def month_files(month: str) -> tuple[str, str, str]:
    """The files of one month ("2026-11"), relative to the board's folder."""
    stem = f"{MONTHS_FOLDER}/{month}"
    return f"{stem}.json", f"{stem}.parquet", f"{stem}-votes.parquet"


def _json_value(value: object) -> object:
    if isinstance(value, datetime):
        return value.astimezone(UTC).isoformat()
    if isinstance(value, date):
        return value.isoformat()
    return value


_SECONDS, _MICROSECONDS = "%Y-%m-%dT%H:%M:%S+00:00", "%Y-%m-%dT%H:%M:%S%.6f+00:00"


def _dates_as_text(frame: pl.DataFrame) -> tuple[pl.DataFrame, list[str]]:
    """The frame with its dates and zoned times as the text `_json_value` makes of them,
    formatted by polars (a month at 14,000 offerings holds ~40k of them: 0.15 s value by
    value), as datetime.isoformat() does in UTC (no fraction when it is zero); and the names
    of its other temporal columns, left for `_json_value`."""
    text, rest = [], []
    for name, dtype in frame.schema.items():
        if isinstance(dtype, pl.Datetime) and dtype.time_zone:
            utc = pl.col(name).dt.convert_time_zone("UTC")
            text.append(pl.when(utc.dt.microsecond() == 0).then(utc.dt.to_string(_SECONDS))
                        .otherwise(utc.dt.to_string(_MICROSECONDS)).alias(name))
        elif dtype == pl.Date:
            text.append(pl.col(name).dt.to_string("%Y-%m-%d"))
        elif dtype.is_temporal():
            rest.append(name)
    return frame.with_columns(text), rest


def _json_rows(frame: pl.DataFrame) -> list[dict[str, object]]:
    """The frame's rows for json.dumps, each value as `_json_value` makes it."""
    texted, rest = _dates_as_text(frame)
    rows = texted.to_dicts()
    for row in rows if rest else ():
        for name in rest:
            row[name] = _json_value(row[name])
    return rows


def _same_in_json(dtype: pl.DataType) -> bool:
    """Column types polars writes in JSON as json.dumps writes their Python values (Float32 is
    not: json.dumps writes the double it widens to, 0.10000000149011612 for 0.1)."""
    return dtype.is_integer() or dtype in (pl.String, pl.Boolean, pl.Float64, pl.Null)


def _polars_writes_as_json_dumps(frame: pl.DataFrame) -> bool:
    """Whether frame.write_json() is, byte for byte, json.dumps of its rows (compact). It is
    for the values indexes hold; it is not for a float below 1e-4 (json.dumps writes 1e-05,
    polars 0.00001), NaN or infinity (polars writes null) or text other than printable ASCII
    (json.dumps escapes it)."""
    if not all(_same_in_json(dtype) for dtype in frame.dtypes):
        return False
    checks = []
    for name, dtype in frame.schema.items():
        if dtype == pl.Float64:
            size = pl.col(name).abs()
            checks.append(((size < 1e-4) & (size > 0)) | (size >= 1e16)
                          | ~pl.col(name).is_finite())
        elif dtype == pl.String:
            checks.append(pl.col(name).str.contains(r"[^\x20-\x7e]"))
    if not checks or frame.is_empty():
        return True
    found = frame.select(pl.any_horizontal(checks).any()).item()
    return not found


def _month_json(month: str, fixings: pl.DataFrame) -> bytes:
    """The month's document, {"fixings": [its rows], "month": month}, as
    json.dumps(sort_keys=True, separators=(",", ":")) writes it: polars writes the rows (keys
    in sorted order) when that gives the same bytes (0.02 s for a month at 14,000 offerings,
    against 0.15 s through dicts and json.dumps), json.dumps otherwise."""
    texted, rest = _dates_as_text(fixings)
    if not rest and _polars_writes_as_json_dumps(texted):
        # Into one buffer: write_json() returns a str, which .encode() and the joins would
        # copy three times (+40 MiB at 50 M, over the nightly report's 500 MiB).
        document = io.BytesIO()
        document.write(b'{"fixings":')
        texted.select(sorted(texted.columns)).write_json(document)
        document.write(b',"month":' + json.dumps(month).encode() + b"}")
        return document.getvalue()
    document = {"month": month, "fixings": _json_rows(fixings)}
    return json.dumps(document, sort_keys=True, separators=(",", ":")).encode()


def _parquet(frame: pl.DataFrame) -> bytes:
    buffer = io.BytesIO()
    frame.write_parquet(buffer, compression="zstd", statistics=False)
    return buffer.getvalue()


def _sha256(body: bytes) -> str:
    return hashlib.sha256(body).hexdigest()


def _months(con: duckdb.DuckDBPyConnection, until: date | None) -> dict[str, dict[str, object]]:
    """Per month: its first and last day, days, fixings and the digest of its days."""
    rows = con.execute(
        "SELECT strftime(day, '%Y-%m') AS month, min(day), max(day), count(*), sum(fixings), "
        "       sha256(string_agg(day_digest, ',' ORDER BY day)) "
        "FROM index_day WHERE $until IS NULL OR day <= $until GROUP BY month ORDER BY month",
        {"until": until}).fetchall()
    return {month: {"first_day": first.isoformat(), "last_day": last.isoformat(), "days": days,
                    "fixings": int(fixings), "days_digest": digest}
            for month, first, last, days, fixings, digest in rows}


def _previous(out_dir: Path) -> dict[str, dict[str, object]]:
    """The months the folder's manifest lists, when it can be read (else none: all written)."""
    try:
        document = json.loads((out_dir / MANIFEST).read_text(encoding="utf-8"))
        return {str(m["month"]): m for m in document["months"]}
    except (OSError, ValueError, KeyError, TypeError):
        return {}


def _kept(entry: dict[str, object] | None, month: dict[str, object], out_dir: Path) -> bool:
    if entry is None or entry.get("days_digest") != month["days_digest"]:
        return False
    files = entry.get("files")
    return isinstance(files, dict) and set(files) == set(month_files(str(entry["month"]))) \
        and all((out_dir / name).is_file() for name in files)


def _month_contents(con: duckdb.DuckDBPyConnection, month: str,
                    bounds: dict[str, object]) -> dict[str, bytes]:
    first, last = date.fromisoformat(str(bounds["first_day"])), \
        date.fromisoformat(str(bounds["last_day"]))
    fixings = read_fixings(con, since=first, until=last)
    # A vote's day is its fixing's (warehouse.index.engine writes both from the fixing), so
    # the month's votes are read by their own day, not joined to the fixings (65 -> 52 ms at
    # 50 M observations). Sorted by polars: DuckDB sorts the rows with their three lists
    # (~45 ms for a month of 91k votes at 50 M, polars ~6 ms); the key (fixing_id, provider)
    # makes the order total, so the rows and the file's bytes are the same.
    votes = sql_frame(con, "SELECT * FROM index_vote WHERE day BETWEEN $first AND $last",
                      {"first": first, "last": last}).sort("day", "fixing_id", "provider")
    names = month_files(month)
    return {names[0]: _month_json(month, fixings), names[1]: _parquet(fixings),
            names[2]: _parquet(votes)}


def _write(out_dir: Path, contents: dict[str, bytes]) -> Iterable[Path]:
    for name, body in contents.items():
        write_bytes_atomic(out_dir / name, body)
        yield out_dir / name


def write_index_files(con: duckdb.DuckDBPyConnection, out_dir: Path, *,
                      until: date | None = None) -> IndexFiles:
    """Write the published fixings up to `until` (default all) and their votes: the months
    not already in `out_dir` as they are now, then the manifest and the digests; files of the
    layout before the month sets (FORMER_FILES) are removed."""
    (out_dir / MONTHS_FOLDER).mkdir(parents=True, exist_ok=True)
    months, previous = _months(con, until), _previous(out_dir)
    written: list[Path] = []
    entries = []
    rewritten = 0
    for month, bounds in months.items():
        entry = previous.get(month)
        if not _kept(entry, bounds, out_dir):
            rewritten += 1
            contents = _month_contents(con, month, bounds)
            written += _write(out_dir, contents)
            entry = {"month": month, **bounds,
                     "files": {name: _sha256(body) for name, body in contents.items()}}
        entries.append(entry)
    methods = con.execute("SELECT method_version, params_digest, params_json, first_day "
                          "FROM index_method ORDER BY first_day").fetchall()
    manifest = json.dumps({
        "what": "GPU price index fixings, $/GPU-hour (docs/index-methodology.md), a set of "
                "files per month (fixings as JSON and Parquet, votes as Parquet); value null "
                "= no index, withheld_reason says why; never revised (revision records are "
                "separate)",
        "methods": [{"version": v, "params_digest": d, "first_day": _json_value(first),
                     "params": json.loads(p)} for v, d, p, first in methods],
        "months": entries,
    }, sort_keys=True, separators=(",", ":")).encode()
    written += _write(out_dir, {MANIFEST: manifest})
    every = {MANIFEST: _sha256(manifest)}
    for entry in entries:
        every.update(entry["files"])  # type: ignore[arg-type]
    listing = "".join(f"{digest}  {name}\n" for name, digest in every.items())
    written += _write(out_dir, {DIGESTS: listing.encode()})
    for name in FORMER_FILES:
        (out_dir / name).unlink(missing_ok=True)
    shown = {MANIFEST: every[MANIFEST], **(entries[-1]["files"] if entries else {})}
    return IndexFiles(tuple(written), shown,  # type: ignore[arg-type]
                      sum(int(m["fixings"]) for m in months.values()), len(entries), rewritten)
