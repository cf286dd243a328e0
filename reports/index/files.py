"""The published index as files next to the board: every fixing (series, values, bands,
panels) as JSON and Parquet, every vote (the panels) as Parquet, and their sha256 digests in
a sha256sum-style file. Each file is written atomically (contract.files): a reader never sees
half a file, and a failed write leaves the previous one whole."""

from __future__ import annotations

import hashlib
import io
import json
from dataclasses import dataclass
from datetime import UTC, date, datetime
from pathlib import Path

import duckdb
import polars as pl

from contract.files import write_bytes_atomic
from warehouse.frames import sql_frame
from warehouse.index.store import read_fixings

__all__ = ["INDEX_FILES", "IndexFiles", "write_index_files"]

INDEX_FILES = ("gpu-index.json", "gpu-index.parquet", "gpu-index-votes.parquet")
DIGESTS = "gpu-index.sha256"


@dataclass(frozen=True, slots=True)
class IndexFiles:
    paths: tuple[Path, ...]
    digests: dict[str, str]  # file name -> sha256
    fixings: int


def _json_value(value: object) -> object:
    if isinstance(value, datetime):
        return value.astimezone(UTC).isoformat()
    if isinstance(value, date):
        return value.isoformat()
    return value


def _parquet(frame: pl.DataFrame) -> bytes:
    buffer = io.BytesIO()
    frame.write_parquet(buffer, compression="zstd", statistics=False)
    return buffer.getvalue()


def write_index_files(con: duckdb.DuckDBPyConnection, out_dir: Path, *,
                      until: date | None = None) -> IndexFiles:
    """Write the published fixings up to `until` (default all) and their votes."""
    fixings = read_fixings(con, until=until)
    votes = sql_frame(con, "SELECT v.* FROM index_vote v JOIN index_fixing f USING (fixing_id) "
                      "WHERE $until IS NULL OR f.day <= $until "
                      "ORDER BY v.day, v.fixing_id, v.provider", {"until": until})
    methods = con.execute("SELECT method_version, params_digest, params_json, first_day "
                          "FROM index_method ORDER BY first_day").fetchall()
    document = {
        "what": "GPU price index fixings, $/GPU-hour (docs/index-methodology.md); value null "
                "= no index, withheld_reason says why; never revised (revision records are "
                "separate)",
        "methods": [{"version": v, "params_digest": d, "first_day": _json_value(first),
                     "params": json.loads(p)} for v, d, p, first in methods],
        "fixings": [{k: _json_value(v) for k, v in row.items()}
                    for row in fixings.iter_rows(named=True)],
    }
    contents = {
        "gpu-index.json": json.dumps(document, sort_keys=True, separators=(",", ":")).encode(),
        "gpu-index.parquet": _parquet(fixings),
        "gpu-index-votes.parquet": _parquet(votes),
    }
    digests = {name: hashlib.sha256(body).hexdigest() for name, body in contents.items()}
    paths = []
    for name, body in contents.items():
        write_bytes_atomic(out_dir / name, body)
        paths.append(out_dir / name)
    listing = "".join(f"{digests[name]}  {name}\n" for name in INDEX_FILES)
    write_bytes_atomic(out_dir / DIGESTS, listing.encode())
    return IndexFiles((*paths, out_dir / DIGESTS), digests, fixings.height)
