"""One settings object, read from the environment (and overridden by CLI flags), every value
checked here, once, against its range.

Paths:
GPUPRICES_WAREHOUSE     warehouse file (default data/gpu_prices.duckdb)
GPUPRICES_ARCHIVE       raw payload archive (default: raw/ beside the warehouse)
GPUPRICES_REPORTS       report output folder (default: reports/ beside the warehouse)
Numbers (name, default and allowed range in NUMBERS below; README's settings table lists them):
GPUPRICES_TIMEOUT_S, GPUPRICES_REQUEST_BUDGET_S, GPUPRICES_RETRIES, GPUPRICES_BACKOFF_S,
GPUPRICES_MAX_BYTES, GPUPRICES_MAX_PAGE_BYTES, GPUPRICES_SOURCE_TIMEOUT_S, GPUPRICES_WORKERS
GPUPRICES_BASE_URL_<SOURCE>  base URL override for one source (an http(s) URL)
GPUPRICES_BOARD_URL     where the published price board is served (http(s)://...), for links
Secrets (never logged or stored): the names each source declares in `SourceDef.secret_names`
(scrapers.registry.secret_names()); whoever fetches passes them to `load_settings`.

A value out of range is a SettingsError: one line naming the variable and what is allowed
(the CLI prints it as is). A bottom module (it imports only the contract), so flows and the
CLI both read settings here.
"""

from __future__ import annotations

import os
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field, replace
from pathlib import Path
from urllib.parse import urlsplit

from contract import HttpSettings
from contract.redact import MIN_SECRET_CHARS

__all__ = ["DEFAULT_WAREHOUSE", "NUMBERS", "Number", "Settings", "SettingsError",
           "load_settings"]

DEFAULT_WAREHOUSE = Path("data") / "gpu_prices.duckdb"
_BASE_URL_PREFIX = "GPUPRICES_BASE_URL_"
MiB = 1024 * 1024


class SettingsError(ValueError):
    """An environment setting is not a value we accept; the message is one line."""


@dataclass(frozen=True, slots=True)
class Number:
    """A numeric setting: its variable, type, default and inclusive range."""

    env: str
    kind: type[int] | type[float]
    default: int | float
    low: int | float
    high: int | float
    meaning: str

    def read(self, env: Mapping[str, str]) -> int | float:
        text = (env.get(self.env) or "").strip()
        if not text:
            return self.default
        try:
            value = self.kind(text)
        except ValueError:
            raise SettingsError(f"{self.env}={text[:40]!r} is not a "
                                f"{'whole number' if self.kind is int else 'number'}: "
                                f"{self.allowed}") from None
        if not self.low <= value <= self.high:  # NaN is in no range
            raise SettingsError(f"{self.env}={text[:40]} is out of range: {self.allowed}")
        return value

    @property
    def allowed(self) -> str:
        return f"allowed {_shown(self.low)} to {_shown(self.high)}"


def _shown(value: float) -> str:
    return f"{value:,.0f}" if float(value).is_integer() else f"{value:g}"


# One line per numeric setting; the README's settings table shows the same ranges.
NUMBERS: dict[str, Number] = {n.env: n for n in (
    Number("GPUPRICES_TIMEOUT_S", float, 30.0, 0.1, 600.0, "HTTP connect/read timeout, s"),
    Number("GPUPRICES_REQUEST_BUDGET_S", float, 300.0, 1.0, 3600.0,
           "wall-clock limit for one response, however it trickles, s"),
    Number("GPUPRICES_RETRIES", int, 3, 1, 10, "attempts for transient HTTP errors"),
    Number("GPUPRICES_BACKOFF_S", float, 1.0, 0.0, 60.0, "first retry's backoff, doubling, s"),
    Number("GPUPRICES_MAX_BYTES", int, 256 * MiB, 1024, 2048 * MiB,
           "largest API/catalog response, bytes"),
    Number("GPUPRICES_MAX_PAGE_BYTES", int, 8 * MiB, 1024, 256 * MiB,
           "largest HTML page (page sources), bytes"),
    Number("GPUPRICES_SOURCE_TIMEOUT_S", float, 600.0, 1.0, 7200.0,
           "one source's fetch, all attempts and backoff included, s"),
    Number("GPUPRICES_WORKERS", int, 8, 1, 64, "sources fetched at once"),
)}


@dataclass(frozen=True, slots=True)
class Settings:
    warehouse: Path = DEFAULT_WAREHOUSE
    archive_dir: Path | None = None
    reports_dir: Path | None = None
    retries: int = 3
    backoff_base_s: float = 1.0
    source_timeout_s: float = 600.0
    max_workers: int = 8
    board_url: str | None = None
    http: HttpSettings = field(default_factory=HttpSettings)

    @property
    def archive_root(self) -> Path:
        from contract.files import link_target  # beside the real file when it is a symlink

        if self.archive_dir:
            return self.archive_dir
        if str(self.warehouse).startswith(("ducklake:", "md:")):
            raise SettingsError("a lake warehouse needs GPUPRICES_ARCHIVE: the raw captures' "
                                "folder every worker shares, or s3://bucket/prefix")
        return link_target(self.warehouse).parent / "raw"

    @property
    def reports_root(self) -> Path:
        return self.reports_dir or self.warehouse.parent / "reports"

    def with_warehouse(self, warehouse: str | Path | None) -> Settings:
        return replace(self, warehouse=Path(warehouse)) if warehouse else self


def _base_urls(env: Mapping[str, str]) -> dict[str, str]:
    urls = {}
    for key, value in env.items():
        if not key.startswith(_BASE_URL_PREFIX) or not value:
            continue
        parts = urlsplit(value)
        if parts.scheme not in ("http", "https") or not parts.netloc:
            raise SettingsError(f"{key}={value[:60]!r} is not an http(s) URL")
        # GPUPRICES_BASE_URL_LAMBDA_PAGE -> source "lambda-page" (env names cannot hold "-")
        urls[key[len(_BASE_URL_PREFIX):].lower().replace("_", "-")] = value
    return urls


def _secrets(env: Mapping[str, str], names: Iterable[str]) -> dict[str, str]:
    found = {name: env[name] for name in names if env.get(name)}
    for name, value in found.items():
        # A shorter value cannot be told apart from ordinary text, so it could not be
        # redacted from errors and archived payloads without mangling them.
        if len(value) < MIN_SECRET_CHARS:
            raise SettingsError(f"{name} is {len(value)} characters long: too short for a key "
                                f"(at least {MIN_SECRET_CHARS})")
    return found


def _http_url(env: Mapping[str, str], name: str) -> str | None:
    raw = env.get(name, "").strip()
    if not raw:
        return None
    parts = urlsplit(raw)
    if parts.scheme not in ("http", "https") or not parts.netloc:
        raise SettingsError(f"{name}={raw[:60]!r} must be an http:// or https:// URL")
    return raw


def _path(env: Mapping[str, str], name: str) -> Path | None:
    value = env.get(name)
    return Path(value) if value else None


def load_settings(env: Mapping[str, str] | None = None,
                  warehouse: str | Path | None = None, *,
                  secret_names: Iterable[str] = ()) -> Settings:
    """Settings from `env` (the process environment by default); `secret_names`: the
    environment variables holding secrets to read (only those, and only when fetching).
    Raises SettingsError (one line) for a value out of its range."""
    env = os.environ if env is None else env
    number = {name: spec.read(env) for name, spec in NUMBERS.items()}
    http = HttpSettings(
        timeout_s=float(number["GPUPRICES_TIMEOUT_S"]),
        max_bytes=int(number["GPUPRICES_MAX_BYTES"]),
        max_page_bytes=int(number["GPUPRICES_MAX_PAGE_BYTES"]),
        request_budget_s=float(number["GPUPRICES_REQUEST_BUDGET_S"]),
        base_urls=_base_urls(env),
        secrets=_secrets(env, secret_names),
    )
    settings = Settings(
        warehouse=_path(env, "GPUPRICES_WAREHOUSE") or DEFAULT_WAREHOUSE,
        archive_dir=_path(env, "GPUPRICES_ARCHIVE"),
        reports_dir=_path(env, "GPUPRICES_REPORTS"),
        retries=int(number["GPUPRICES_RETRIES"]),
        backoff_base_s=float(number["GPUPRICES_BACKOFF_S"]),
        source_timeout_s=float(number["GPUPRICES_SOURCE_TIMEOUT_S"]),
        max_workers=int(number["GPUPRICES_WORKERS"]),
        board_url=_http_url(env, "GPUPRICES_BOARD_URL"),
        http=http,
    )
    return settings.with_warehouse(warehouse)
