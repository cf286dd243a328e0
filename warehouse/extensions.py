"""DuckDB extensions from their Python wheels, and object-storage credentials from the environment.

Every extension a lake needs (ducklake; postgres_scanner or sqlite_scanner for the catalog;
httpfs for s3:// data) ships as a `duckdb-extension-<name>` wheel locked in uv.lock. It is
loaded from the wheel's own file with `LOAD '<path>'`: nothing is ever installed or downloaded
(autoinstall and autoload stay off), so a lake opens offline and on a machine with no
extension directory.

S3-compatible storage is configured by the standard variables, AWS_ACCESS_KEY_ID,
AWS_SECRET_ACCESS_KEY (AWS_SESSION_TOKEN), AWS_REGION (or AWS_DEFAULT_REGION) and
AWS_ENDPOINT_URL (MinIO, Ceph, moto, R2 ...): they become a temporary DuckDB secret of the
connection, never written to a file, a log or an error message.
"""

from __future__ import annotations

import importlib
from collections.abc import Mapping
from pathlib import Path
from urllib.parse import urlsplit

import duckdb

from warehouse.errors import WarehouseError

__all__ = ["LAKE_CONFIG", "extension_path", "load_extension", "s3_secret"]

# A lake connection reads its own data files (local or s3://), so external access stays on;
# extensions come only from LOAD '<wheel path>'.
LAKE_CONFIG: dict[str, object] = {
    "autoinstall_known_extensions": False,
    "autoload_known_extensions": False,
    "allow_community_extensions": False,
}
_WHEELS = {
    "ducklake": "duckdb_extension_ducklake",
    "postgres_scanner": "duckdb_extension_postgres_scanner",
    "sqlite_scanner": "duckdb_extension_sqlite_scanner",
    "httpfs": "duckdb_extension_httpfs",
}


def extension_path(name: str) -> Path:
    """The extension file inside its wheel, for this DuckDB version; WarehouseError (one
    line) when the wheel is missing or was built for another DuckDB."""
    module = _WHEELS.get(name)
    if module is None:
        raise WarehouseError(f"no wheel is known for the DuckDB extension {name}")
    package = f"duckdb-extension-{module.removeprefix('duckdb_extension_').replace('_', '-')}"
    try:
        root = Path(importlib.import_module(module).__file__ or "").parent / "extensions"
    except ImportError:
        raise WarehouseError(f"the DuckDB extension {name} is not installed: install the "
                             f"`{package}=={duckdb.__version__}` wheel (uv sync does)") from None
    found = sorted(root.glob(f"v{duckdb.__version__}/**/{name}.duckdb_extension"))
    if not found:
        raise WarehouseError(f"the `{package}` wheel has no {name} extension for DuckDB "
                             f"{duckdb.__version__}: install version {duckdb.__version__}")
    return found[0]


def load_extension(con: duckdb.DuckDBPyConnection, name: str) -> None:
    """LOAD the extension from its wheel (once per connection)."""
    loaded = con.execute("SELECT loaded FROM duckdb_extensions() WHERE extension_name = ?",
                         [name]).fetchone()
    if loaded and loaded[0]:
        return
    path = str(extension_path(name)).replace("'", "''")
    try:
        con.execute(f"LOAD '{path}'")
    except duckdb.Error as exc:
        raise WarehouseError(f"cannot load the DuckDB extension {name}: "
                             f"{str(exc).splitlines()[0]}") from None


def _quote(text: str) -> str:
    return "'" + text.replace("'", "''") + "'"


def s3_secret(con: duckdb.DuckDBPyConnection, env: Mapping[str, str]) -> bool:
    """Create the connection's S3 secret from the AWS_* variables; False when none is set.

    A temporary secret (the connection's only): DuckDB keeps it in memory and shows it
    redacted in duckdb_secrets()."""
    key, secret = env.get("AWS_ACCESS_KEY_ID", ""), env.get("AWS_SECRET_ACCESS_KEY", "")
    endpoint = env.get("AWS_ENDPOINT_URL_S3") or env.get("AWS_ENDPOINT_URL", "")
    if not (key or endpoint):
        return False
    if bool(key) != bool(secret):
        raise WarehouseError("AWS_ACCESS_KEY_ID and AWS_SECRET_ACCESS_KEY must be set together")
    options = ["TYPE s3"]
    if key:
        options += [f"KEY_ID {_quote(key)}", f"SECRET {_quote(secret)}"]
        if env.get("AWS_SESSION_TOKEN"):
            options.append(f"SESSION_TOKEN {_quote(env['AWS_SESSION_TOKEN'])}")
    region = env.get("AWS_REGION") or env.get("AWS_DEFAULT_REGION")
    if region:
        options.append(f"REGION {_quote(region)}")
    if endpoint:
        parts = urlsplit(endpoint if "://" in endpoint else f"https://{endpoint}")
        if parts.scheme not in ("http", "https") or not parts.netloc:
            raise WarehouseError(f"AWS_ENDPOINT_URL={endpoint[:60]!r} is not an http(s) URL")
        # A custom endpoint (MinIO, moto ...) serves buckets as paths, not as host names.
        options += [f"ENDPOINT {_quote(parts.netloc)}", "URL_STYLE 'path'",
                    f"USE_SSL {'true' if parts.scheme == 'https' else 'false'}"]
    load_extension(con, "httpfs")
    con.execute(f"CREATE OR REPLACE TEMPORARY SECRET gpuprices_s3 ({', '.join(options)})")
    return True
