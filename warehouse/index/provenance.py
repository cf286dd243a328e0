"""Which code made a fixing: the package version, a sha256 over every file that turns captured
bytes into a fixing (contract, schemas, scrapers without their bundled examples, warehouse),
and per source the sha256 of its parser's module."""

from __future__ import annotations

import hashlib
import inspect
from collections.abc import Mapping
from functools import cache
from importlib import metadata
from pathlib import Path

from scrapers.base import Source

__all__ = ["code_digest", "code_version", "parser_digest", "parser_digests"]

_ROOT = Path(__file__).resolve().parents[2]
_PACKAGES = ("contract", "schemas", "scrapers", "warehouse")
_SUFFIXES = {".py", ".sql", ".toml", ".csv"}


@cache
def code_digest() -> str:
    digest = hashlib.sha256()
    for package in _PACKAGES:
        for path in sorted((_ROOT / package).rglob("*")):
            relative = path.relative_to(_ROOT)
            if (path.suffix not in _SUFFIXES or not path.is_file()
                    or "examples" in relative.parts or "__pycache__" in relative.parts):
                continue
            digest.update(str(relative.as_posix()).encode() + b"\0" + path.read_bytes() + b"\0")
    return digest.hexdigest()


@cache
def code_version() -> str:
    try:
        version = metadata.version("gpuprices")
    except metadata.PackageNotFoundError:
        version = "unknown"
    return f"gpuprices {version}, code sha256 {code_digest()[:16]}"


def parser_digest(source: Source) -> str | None:
    """sha256 of the module that holds the source's parse function (None if not a file)."""
    try:
        path = inspect.getsourcefile(source.parse_fn)
    except TypeError:
        return None
    if not path:
        return None
    return hashlib.sha256(Path(path).read_bytes()).hexdigest()


def parser_digests(sources: Mapping[str, Source] | None) -> dict[str, str | None]:
    return {name: parser_digest(src) for name, src in (sources or {}).items()}
