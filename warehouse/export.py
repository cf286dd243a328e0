"""Export the warehouse as files other tools read: Parquet or CSV, hive-partitioned.

Layout under DIR:
    observations/provider=<p>/month=<YYYY-MM>/data_0.<ext>   every observation
    latest_price.<ext>                                       current prices (latest_price view)
    daily_cheapest.<ext>                                     cheapest per GPU model per day

DuckDB, polars, pandas/pyarrow and Spark read the partitioned folder with hive partitioning
(the `provider` and `month` columns come back from the folder names). Reads from a read-only
connection to the read snapshot (it can read no other file), so exporting never waits for a
refresh; the rows stream to a separate in-memory DuckDB that writes the files.

Every file is written beside its target under a temporary name and renamed into place once
whole, the observations folder likewise (the old folder is swapped out, then removed): a full
disk or a kill leaves the previous export readable, and the error is one line
(contract.files.FileWriteError).
"""

from __future__ import annotations

import os
import shutil
import uuid
from dataclasses import dataclass
from pathlib import Path
from typing import Literal

import duckdb

from contract.files import FileWriteError, ensure_folder

ExportFormat = Literal["parquet", "csv"]
TABLES = ("latest_price", "daily_cheapest")


@dataclass(frozen=True, slots=True)
class ExportResult:
    directory: Path
    observations: int
    partitions: int
    files: dict[str, int]  # file or folder -> rows


def _options(fmt: ExportFormat) -> str:
    return "FORMAT parquet, COMPRESSION zstd" if fmt == "parquet" else "FORMAT csv, HEADER true"


def _quote(path: Path) -> str:
    return "'" + str(path).replace("'", "''") + "'"


def _copy(con: duckdb.DuckDBPyConnection, select: str, options: str, temporary: Path,
          target: Path) -> None:
    """COPY the rows of `select` into `temporary`, then rename it over `target`; nothing
    half-written stays. Rows are read on `con` and written by an in-memory DuckDB that holds
    nothing but them (warehouse connections cannot write files)."""
    try:
        rows = con.execute(select).to_arrow_reader()
        out = duckdb.connect()
        try:
            out.register("_rows", rows)
            out.execute(f"COPY _rows TO {_quote(temporary)} ({options})")
        finally:
            out.close()
        if "PARTITION_BY" in options and not temporary.exists():
            temporary.mkdir()  # no rows: an empty folder, as the readers expect
        if target.is_dir() and temporary.is_dir():  # swap folders: old out, new in, old gone
            retired = target.with_name(f".{target.name}.old-{uuid.uuid4().hex[:8]}")
            os.replace(target, retired)
            os.replace(temporary, target)
            shutil.rmtree(retired, ignore_errors=True)
        else:
            os.replace(temporary, target)
    except (duckdb.Error, OSError) as exc:
        _remove(temporary)
        detail = exc.strerror if isinstance(exc, OSError) and exc.strerror else \
            str(exc).splitlines()[0]
        raise FileWriteError(f"cannot export {target}: {detail}") from None


def _remove(path: Path) -> None:
    if path.is_dir():
        shutil.rmtree(path, ignore_errors=True)
    else:
        path.unlink(missing_ok=True)


def export(con: duckdb.DuckDBPyConnection, directory: Path,
           fmt: ExportFormat = "parquet") -> ExportResult:
    """Write observations (partitioned by provider and month) and the current-price tables."""
    if fmt not in ("parquet", "csv"):
        raise ValueError(f"unknown export format {fmt!r}: parquet or csv")
    ensure_folder(directory)
    token = uuid.uuid4().hex[:8]
    observations_dir = directory / "observations"
    if observations_dir.exists() and not observations_dir.is_dir():
        raise FileWriteError(f"cannot export {observations_dir}: it exists and is not a folder")
    # month as 'YYYY-MM' (UTC), a plain string: the same partition names in every reader.
    _copy(con, "SELECT *, strftime(timezone('UTC', observed_at), '%Y-%m') AS month "
          "FROM observation ORDER BY observed_at",
          f"{_options(fmt)}, PARTITION_BY (provider, month)",
          directory / f".observations.tmp-{token}", observations_dir)
    files: dict[str, int] = {}
    row = con.execute("SELECT count(*), count(DISTINCT (provider, "
                      "strftime(timezone('UTC', observed_at), '%Y-%m'))) FROM observation"
                      ).fetchone()
    observations, partitions = (int(row[0]), int(row[1])) if row else (0, 0)
    files["observations/"] = observations
    for table in TABLES:
        target = directory / f"{table}.{fmt}"
        if target.exists() and not target.is_file():
            raise FileWriteError(f"cannot export {target}: it exists and is not a file")
        _copy(con, f"SELECT * FROM {table}", _options(fmt),
              directory / f".{table}.tmp-{token}.{fmt}", target)
        count = con.execute(f"SELECT count(*) FROM {table}").fetchone()
        files[target.name] = int(count[0]) if count else 0
    return ExportResult(directory, observations, partitions, files)
