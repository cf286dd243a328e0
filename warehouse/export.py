"""Export the warehouse as files other tools read: Parquet or CSV, hive-partitioned.

Layout under DIR:
    observations/provider=<p>/month=<YYYY-MM>/data_0.<ext>   every observation
    latest_price.<ext>                                       current prices (latest_price view)
    daily_cheapest.<ext>                                     cheapest per GPU model per day

DuckDB, polars, pandas/pyarrow and Spark read the partitioned folder with hive partitioning
(the `provider` and `month` columns come back from the folder names). Reads from a read-only
connection to the read snapshot (it can read no other file), so exporting never waits for a
refresh; the rows stream to a separate in-memory DuckDB that writes the files.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import Literal

import duckdb

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


def _copy_out(con: duckdb.DuckDBPyConnection, select: str, target: Path, options: str) -> None:
    """COPY the rows of `select` to `target`: read on `con`, written by an in-memory DuckDB
    that holds nothing but those rows (warehouse connections cannot write files)."""
    rows = con.execute(select).to_arrow_reader()
    out = duckdb.connect()
    try:
        out.register("_rows", rows)
        out.execute(f"COPY _rows TO {_quote(target)} ({options})")
    finally:
        out.close()


def export(con: duckdb.DuckDBPyConnection, directory: Path,
           fmt: ExportFormat = "parquet") -> ExportResult:
    """Write observations (partitioned by provider and month) and the current-price tables."""
    if fmt not in ("parquet", "csv"):
        raise ValueError(f"unknown export format {fmt!r}: parquet or csv")
    directory.mkdir(parents=True, exist_ok=True)
    observations_dir = directory / "observations"
    # month as 'YYYY-MM' (UTC), a plain string: the same partition names in every reader.
    _copy_out(con, "SELECT *, strftime(timezone('UTC', observed_at), '%Y-%m') AS month "
              "FROM observation ORDER BY observed_at", observations_dir,
              f"{_options(fmt)}, PARTITION_BY (provider, month), OVERWRITE true")
    files: dict[str, int] = {}
    row = con.execute("SELECT count(*), count(DISTINCT (provider, "
                      "strftime(timezone('UTC', observed_at), '%Y-%m'))) FROM observation"
                      ).fetchone()
    observations, partitions = (int(row[0]), int(row[1])) if row else (0, 0)
    files["observations/"] = observations
    for table in TABLES:
        target = directory / f"{table}.{fmt}"
        _copy_out(con, f"SELECT * FROM {table}", target, _options(fmt))
        count = con.execute(f"SELECT count(*) FROM {table}").fetchone()
        files[target.name] = int(count[0]) if count else 0
    return ExportResult(directory, observations, partitions, files)
