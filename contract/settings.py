"""One settings object, read from the environment (and overridden by CLI flags).

GPUPRICES_WAREHOUSE     warehouse file (default data/gpu_prices.duckdb)
GPUPRICES_ARCHIVE       raw payload archive (default: raw/ beside the warehouse)
GPUPRICES_REPORTS       report output folder (default: reports/ beside the warehouse)
GPUPRICES_TIMEOUT_S     per-request HTTP timeout (default 30)
GPUPRICES_REQUEST_BUDGET_S  wall-clock budget for one HTTP response, however it trickles (300)
GPUPRICES_RETRIES       attempts for transient HTTP errors (default 3)
GPUPRICES_SOURCE_TIMEOUT_S  one source's fetch, all attempts and backoff included (600; 1-7200)
GPUPRICES_WORKERS       sources fetched at once (8; 1-64)
GPUPRICES_BOARD_URL     where the published price board is served (http(s)://...), for links
GPUPRICES_MAX_BYTES     largest response accepted (default 256 MiB)
GPUPRICES_BASE_URL_<SOURCE>  base URL override for one source (proxy, mirror, test server)
Secrets (never logged or stored): the names each source declares in `SourceDef.secret_names`
(scrapers.registry.secret_names()); whoever fetches passes them to `load_settings`.

A bottom module (it imports only the contract), so flows and the CLI both read settings here.
"""

from __future__ import annotations

import os
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import TypeVar

from contract import HttpSettings

__all__ = ["DEFAULT_WAREHOUSE", "Settings", "SettingsError", "load_settings"]

DEFAULT_WAREHOUSE = Path("data") / "gpu_prices.duckdb"
_BASE_URL_PREFIX = "GPUPRICES_BASE_URL_"
N = TypeVar("N", int, float)
SOURCE_TIMEOUT_RANGE_S = (1.0, 7200.0)
WORKERS_RANGE = (1, 64)


class SettingsError(ValueError):
    """A setting from the environment is malformed or out of its range (one line)."""


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
        return self.archive_dir or self.warehouse.parent / "raw"

    @property
    def reports_root(self) -> Path:
        return self.reports_dir or self.warehouse.parent / "reports"

    def with_warehouse(self, warehouse: str | Path | None) -> Settings:
        return replace(self, warehouse=Path(warehouse)) if warehouse else self


def load_settings(env: Mapping[str, str] | None = None,
                  warehouse: str | Path | None = None, *,
                  secret_names: Iterable[str] = ()) -> Settings:
    """Settings from `env` (the process environment by default); `secret_names`: the
    environment variables holding secrets to read (only those, and only when fetching)."""
    env = os.environ if env is None else env
    base_urls = {
        # GPUPRICES_BASE_URL_LAMBDA_PAGE -> source "lambda-page" (env names cannot hold "-")
        key[len(_BASE_URL_PREFIX):].lower().replace("_", "-"): value
        for key, value in env.items()
        if key.startswith(_BASE_URL_PREFIX) and value
    }
    http = HttpSettings(
        timeout_s=float(env.get("GPUPRICES_TIMEOUT_S", 30)),
        max_bytes=int(env.get("GPUPRICES_MAX_BYTES", 256 * 1024 * 1024)),
        request_budget_s=float(env.get("GPUPRICES_REQUEST_BUDGET_S", 300)),
        base_urls=base_urls,
        secrets={name: env[name] for name in secret_names if env.get(name)},
    )
    settings = Settings(
        warehouse=Path(env.get("GPUPRICES_WAREHOUSE") or DEFAULT_WAREHOUSE),
        archive_dir=Path(env["GPUPRICES_ARCHIVE"]) if env.get("GPUPRICES_ARCHIVE") else None,
        reports_dir=Path(env["GPUPRICES_REPORTS"]) if env.get("GPUPRICES_REPORTS") else None,
        retries=int(env.get("GPUPRICES_RETRIES", 3)),
        backoff_base_s=float(env.get("GPUPRICES_BACKOFF_S", 1.0)),
        source_timeout_s=_bounded(env, "GPUPRICES_SOURCE_TIMEOUT_S", 600.0,
                                  SOURCE_TIMEOUT_RANGE_S, float),
        max_workers=_bounded(env, "GPUPRICES_WORKERS", 8, WORKERS_RANGE, int),
        board_url=_http_url(env, "GPUPRICES_BOARD_URL"),
        http=http,
    )
    return settings.with_warehouse(warehouse)


def _bounded(env: Mapping[str, str], name: str, default: N, allowed: tuple[N, N],
             kind: type[N]) -> N:
    raw = env.get(name)
    if not raw:
        return default
    try:
        value = kind(raw)
    except ValueError:
        what = "a whole number" if kind is int else "a number"
        raise SettingsError(f"{name}={raw!r} is not {what}") from None
    low, high = allowed
    if not low <= value <= high:  # NaN fails this too
        raise SettingsError(f"{name}={raw} is out of range: allowed {low:g} to {high:g}")
    return value


def _http_url(env: Mapping[str, str], name: str) -> str | None:
    raw = env.get(name, "").strip()
    if not raw:
        return None
    if not raw.startswith(("http://", "https://")):
        raise SettingsError(f"{name}={raw!r} must be an http:// or https:// URL")
    return raw
