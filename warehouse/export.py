"""Export the history as files other tools read: Parquet (or CSV), with provenance and a manifest.

Layout under DIR (docs/export.md has every column):
    manifest.json                                           what is there: rows, sha256 and
                                                            size of every file, column types
                                                            and meanings, the export's as-of
    observations/day=<YYYY-MM-DD>/provider=<p>/data_0.<ext> every observation, by UTC day of
                                                            observed_at and provider
    <table>.<ext>                                           market_price, market_provider_price,
                                                            daily_cheapest, price_change,
                                                            price_move, latest_price,
                                                            scrape_run, refresh_run, raw_capture,
                                                            source, fx_rate, gpu_catalog

Incremental: each (day, provider) part has a content digest (row count and a sum of row
hashes, computed in DuckDB); a day whose parts are unchanged since the manifest is not written
again, so a nightly export writes the new day only (and a day a backfill or reparse changed).
The small tables are written whole each time. `latest_price` is exported as of the export
(`as_of` column, `stale` and `carried_days` left out: they depend on when they are read);
`last_success_at` is there to compute staleness at any later moment (stale: older than
`stale_after_hours` in the manifest).

Reads from a read-only connection to the read snapshot (it can read no other file), so
exporting never waits for a refresh; rows stream to a separate in-memory DuckDB that writes the
files. Every file and day folder is written beside its target under a temporary name and
renamed into place once whole, the manifest last: a full disk or a kill leaves the previous
export readable (the next export redoes what the manifest does not list), and the error is one
line (contract.files.FileWriteError).
"""

from __future__ import annotations

import hashlib
import json
import os
import shutil
import uuid
from collections.abc import Iterator
from dataclasses import dataclass, field
from datetime import UTC, date, datetime, time, timedelta
from pathlib import Path
from typing import Any, Literal

import duckdb

from contract import STALE_AFTER_H
from contract.files import FileWriteError, ensure_folder, write_text_atomic

__all__ = ["LAYOUT", "MANIFEST", "TABLES", "ExportFormat", "ExportResult", "export"]

ExportFormat = Literal["parquet", "csv"]
LAYOUT = "gpuprices-export/1"
MANIFEST = "manifest.json"
OBSERVATIONS = "observations"
# table or view -> the SELECT exported (whole, every export)
TABLES: dict[str, str] = {
    "market_price": "SELECT * FROM market_price ORDER BY day, gpu_model, segment",
    "market_provider_price": "SELECT * FROM market_provider_price ORDER BY day, gpu_model, "
                             "provider",
    "daily_cheapest": "SELECT * FROM daily_cheapest ORDER BY day, gpu_model",
    "price_change": "SELECT * FROM price_change ORDER BY changed_on, source, provider, offering",
    "price_move": "SELECT * FROM price_move ORDER BY changed_on, provider, offering",
    "latest_price": "SELECT * EXCLUDE (stale, carried_days), $as_of AS as_of FROM latest_price "
                    "ORDER BY gpu_model, provider, offering, region, pricing",
    "scrape_run": "SELECT * FROM scrape_run ORDER BY started_at, source",
    "refresh_run": "SELECT * FROM refresh_run ORDER BY started_at",
    "raw_capture": "SELECT * FROM raw_capture ORDER BY fetched_at, capture_id",
    "source": "SELECT * FROM source ORDER BY source",
    "fx_rate": "SELECT * FROM fx_rate ORDER BY rate_date, currency",
    "gpu_catalog": "SELECT * FROM gpu_catalog ORDER BY gpu_model",
}
_DAY = "strftime(utc_day(observed_at), '%Y-%m-%d')"
# Files one COPY may write. DuckDB keeps at most this many partition files open
# (partitioned_write_max_open_files, set to it); past it, it closes one and a part gets a
# second file (data_1, its rows unknown to the manifest). A year of history in one COPY (4,380
# parts) also peaked at 2.65 GB; in COPYs of at most 100 files, at 422 MiB (BENCHMARKS.md 17).
OPEN_FILES = 100


@dataclass(frozen=True, slots=True)
class ExportResult:
    directory: Path
    observations: int            # rows under observations/
    partitions: int              # (day, provider) files
    files: dict[str, int]        # file or folder -> rows
    days_written: list[str] = field(default_factory=list)
    days_unchanged: int = 0
    days_removed: list[str] = field(default_factory=list)


def _options(fmt: ExportFormat) -> str:
    return "FORMAT parquet, COMPRESSION zstd" if fmt == "parquet" else "FORMAT csv, HEADER true"


def _quote(path: Path) -> str:
    return "'" + str(path).replace("'", "''") + "'"


def _failed(target: Path, exc: BaseException) -> FileWriteError:
    detail = exc.strerror if isinstance(exc, OSError) and exc.strerror else \
        str(exc).splitlines()[0]
    return FileWriteError(f"cannot export {target}: {detail}")


def _copy(con: duckdb.DuckDBPyConnection, select: str, params: dict[str, Any], options: str,
          temporary: Path) -> None:
    """COPY the rows of `select` into `temporary`: read on `con`, written by an in-memory
    DuckDB that holds nothing but them (warehouse connections cannot write files)."""
    rows = con.execute(select, params).to_arrow_reader()
    out = duckdb.connect()
    try:
        out.execute("SET enable_progress_bar = false")  # DuckDB draws it on stdout
        out.execute(f"SET partitioned_write_max_open_files = {OPEN_FILES}")
        out.register("_rows", rows)
        out.execute(f"COPY _rows TO {_quote(temporary)} ({options})")
    finally:
        out.close()


def _replace(temporary: Path, target: Path) -> None:
    """Put `temporary` (a file or a folder) in place of `target`, whole."""
    if target.is_dir():  # swap folders: old out, new in, old gone
        retired = target.with_name(f".{target.name}.old-{uuid.uuid4().hex[:8]}")
        os.replace(target, retired)
        os.replace(temporary, target)
        shutil.rmtree(retired, ignore_errors=True)
    else:
        os.replace(temporary, target)


def _remove(path: Path) -> None:
    if path.is_dir():
        shutil.rmtree(path, ignore_errors=True)
    else:
        path.unlink(missing_ok=True)


def _sha256(path: Path) -> str:
    digest = hashlib.sha256()
    with path.open("rb") as handle:
        for block in iter(lambda: handle.read(1 << 20), b""):
            digest.update(block)
    return digest.hexdigest()


def _file_entry(path: Path, rows: int) -> dict[str, Any]:
    return {"rows": rows, "bytes": path.stat().st_size, "sha256": _sha256(path)}


def _columns(con: duckdb.DuckDBPyConnection, name: str, select: str,
             params: dict[str, Any]) -> dict[str, dict[str, str | None]]:
    """Each exported column's DuckDB type and its COMMENT in the warehouse (tables only)."""
    comments = dict(con.execute(
        "SELECT column_name, comment FROM duckdb_columns() WHERE table_name = $name "
        "AND schema_name = 'main'", {"name": name}).fetchall())
    described = con.execute(f"DESCRIBE {select}", params).fetchall()
    return {str(row[0]): {"type": str(row[1]), "comment": comments.get(row[0])}
            for row in described}


def _comment(con: duckdb.DuckDBPyConnection, name: str) -> str | None:
    row = con.execute(
        "SELECT comment FROM duckdb_tables() WHERE table_name = $n AND schema_name = 'main' "
        "UNION ALL SELECT comment FROM duckdb_views() WHERE view_name = $n "
        "AND schema_name = 'main'", {"n": name}).fetchone()
    if not row or not row[0]:
        return None
    return str(row[0]).split(" [reference data ")[0]  # gpu_catalog's sync fingerprint


def _previous(directory: Path, fmt: ExportFormat) -> dict[str, Any]:
    """The manifest of the export already in `directory`, if it is one of this layout and
    format (anything else: write everything again)."""
    try:
        manifest = json.loads((directory / MANIFEST).read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return {}
    if manifest.get("layout") != LAYOUT or manifest.get("file_format") != fmt:
        return {}
    return manifest


def _parts(con: duckdb.DuckDBPyConnection) -> dict[str, dict[str, tuple[int, str]]]:
    """day -> provider -> (rows, content digest) of every observation, in one scan."""
    found: dict[str, dict[str, tuple[int, str]]] = {}
    for day, provider, rows, digest in con.execute(
            f"SELECT {_DAY} AS day, provider, count(*), CAST(sum(hash(o)::HUGEINT) AS VARCHAR) "
            "FROM observation o GROUP BY ALL").fetchall():
        found.setdefault(str(day), {})[str(provider)] = (int(rows), f"{rows}:{digest}")
    return found


def _day_digest(parts: dict[str, tuple[int, str]]) -> str:
    text = "\n".join(f"{p}={d}" for p, (_, d) in sorted(parts.items()))
    return hashlib.sha256(text.encode()).hexdigest()


def _batches(days: list[str], parts: dict[str, dict[str, tuple[int, str]]]
             ) -> Iterator[list[str]]:
    """`days` (sorted) in runs whose (day, provider) files number at most OPEN_FILES (a day
    with more is a run of its own)."""
    batch: list[str] = []
    files = 0
    for day in days:
        if batch and files + len(parts[day]) > OPEN_FILES:
            yield batch
            batch, files = [], 0
        batch.append(day)
        files += len(parts[day])
    if batch:
        yield batch


def _write_days(con: duckdb.DuckDBPyConnection, directory: Path, days: list[str],
                parts: dict[str, dict[str, tuple[int, str]]], fmt: ExportFormat,
                token: str) -> dict[str, dict[str, Any]]:
    """Write the observations of `days`, a COPY per batch of days (`_batches`), and move each
    day's folder into place; the manifest entries of those days."""
    entries: dict[str, dict[str, Any]] = {}
    for batch in _batches(sorted(days), parts):
        entries.update(_write_batch(con, directory, batch, parts, fmt, token))
    return entries


def _write_batch(con: duckdb.DuckDBPyConnection, directory: Path, days: list[str],
                 parts: dict[str, dict[str, tuple[int, str]]], fmt: ExportFormat,
                 token: str) -> dict[str, dict[str, Any]]:
    """One COPY of the observations of `days` (consecutive in the sorted list), partitioned by
    day and provider; the time range lets DuckDB skip the row groups of other days."""
    folder = directory / OBSERVATIONS
    staging = directory / f".{OBSERVATIONS}.tmp-{token}"
    entries: dict[str, dict[str, Any]] = {}
    first = datetime.combine(date.fromisoformat(days[0]), time(), UTC)
    end = datetime.combine(date.fromisoformat(days[-1]) + timedelta(days=1), time(), UTC)
    try:
        folder.mkdir(exist_ok=True)
        _copy(con, f"SELECT *, {_DAY} AS day FROM observation WHERE observed_at >= $first "
              f"AND observed_at < $end AND list_contains($days, {_DAY})",
              {"days": days, "first": first, "end": end},
              f"{_options(fmt)}, PARTITION_BY (day, provider)", staging)
        for day in days:
            written = staging / f"day={day}"
            files: dict[str, Any] = {}
            for provider, (rows, _) in sorted(parts[day].items()):
                found = sorted((written / f"provider={provider}").glob(f"*.{fmt}"))
                for data in found:  # one file per part, unless DuckDB split a large one
                    relative = f"{OBSERVATIONS}/day={day}/provider={provider}/{data.name}"
                    files[relative] = _file_entry(data, rows if len(found) == 1 else -1)
            _replace(written, folder / f"day={day}")
            entries[day] = {"rows": sum(r for r, _ in parts[day].values()),
                            "content": _day_digest(parts[day]), "files": files}
    except (duckdb.Error, OSError, ValueError) as exc:
        raise _failed(folder, exc) from None
    finally:
        _remove(staging)
    return entries


def _write_table(con: duckdb.DuckDBPyConnection, directory: Path, name: str,
                 params: dict[str, Any], fmt: ExportFormat, token: str) -> dict[str, Any]:
    target = directory / f"{name}.{fmt}"
    if target.exists() and not target.is_file():
        raise FileWriteError(f"cannot export {target}: it exists and is not a file")
    temporary = directory / f".{name}.tmp-{token}.{fmt}"
    select = TABLES[name]
    try:
        _copy(con, select, params, _options(fmt), temporary)
        _replace(temporary, target)
        count = con.execute(f"SELECT count(*) FROM ({select})", params).fetchone()
    except (duckdb.Error, OSError) as exc:
        _remove(temporary)
        raise _failed(target, exc) from None
    return {"file": target.name, **_file_entry(target, int(count[0]) if count else 0),
            "comment": _comment(con, name), "columns": _columns(con, name, select, params)}


def export(con: duckdb.DuckDBPyConnection, directory: Path, fmt: ExportFormat = "parquet",
           *, now: datetime | None = None) -> ExportResult:
    """Write (or bring up to date) the export in `directory`: the observation days that are
    new or changed since its manifest, every small table, then the manifest."""
    if fmt not in ("parquet", "csv"):
        raise ValueError(f"unknown export format {fmt!r}: parquet or csv")
    ensure_folder(directory)
    folder = directory / OBSERVATIONS
    if folder.exists() and not folder.is_dir():
        raise FileWriteError(f"cannot export {folder}: it exists and is not a folder")
    as_of = now or datetime.now(UTC)
    token = uuid.uuid4().hex[:8]
    previous = _previous(directory, fmt)
    known = previous.get(OBSERVATIONS, {}).get("days", {})
    parts = _parts(con)
    digests = {day: _day_digest(found) for day, found in parts.items()}
    changed = sorted(day for day in parts if known.get(day, {}).get("content") != digests[day]
                     or not (folder / f"day={day}").is_dir())
    removed = sorted(day for day in known if day not in parts)
    days = {day: entry for day, entry in known.items() if day in parts and day not in changed}
    if changed:
        days.update(_write_days(con, directory, changed, parts, fmt, token))
    for day in removed:
        _remove(folder / f"day={day}")
    if not folder.exists():
        folder.mkdir()
    for stray in folder.glob("day=*"):  # a folder no manifest lists (an older export's kill)
        if stray.name.removeprefix("day=") not in days:
            _remove(stray)
    params = {"as_of": as_of}
    tables = {name: _write_table(con, directory, name, params if "$as_of" in TABLES[name]
                                 else {}, fmt, token) for name in TABLES}
    version = con.execute("SELECT max(version) FROM schema_version").fetchone()
    observation_columns = _columns(con, "observation", "SELECT * FROM observation", {})
    observation_columns["day"] = {"type": "VARCHAR", "comment": "Partition (folder name): the "
                                  "UTC day of observed_at, YYYY-MM-DD."}
    manifest = {
        "layout": LAYOUT, "file_format": fmt, "exported_at": as_of.isoformat(),
        "warehouse_schema_version": int(version[0]) if version and version[0] else None,
        "duckdb_version": duckdb.__version__, "stale_after_hours": STALE_AFTER_H,
        "naming_rule": "hourly prices: <what>_usd_per_gpu_hour (per GPU-hour) and "
                       "<what>_usd_per_hour (the whole offering), US dollars",
        OBSERVATIONS: {
            "path": f"{OBSERVATIONS}/day=<YYYY-MM-DD>/provider=<provider>/data_0.{fmt}",
            "partitioning": "hive: day, provider", "comment": _comment(con, "observation"),
            "rows": sum(entry["rows"] for entry in days.values()),
            "columns": observation_columns, "days": dict(sorted(days.items()))},
        "tables": tables,
    }
    write_text_atomic(directory / MANIFEST, json.dumps(manifest, indent=1, default=str) + "\n")
    observations = manifest[OBSERVATIONS]["rows"]
    return ExportResult(
        directory, observations, sum(len(entry["files"]) for entry in days.values()),
        {f"{OBSERVATIONS}/": observations, **{t["file"]: t["rows"] for t in tables.values()}},
        days_written=changed, days_unchanged=len(days) - len(changed), days_removed=removed)


def exported_days(directory: Path) -> list[date]:
    """The observation days an export in `directory` holds (from its manifest)."""
    manifest = json.loads((directory / MANIFEST).read_text(encoding="utf-8"))
    return [date.fromisoformat(day) for day in manifest[OBSERVATIONS]["days"]]
