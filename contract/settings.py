"""One settings object, read from the environment (and overridden by CLI flags).

GPUPRICES_WAREHOUSE     warehouse file (default data/gpu_prices.duckdb)
GPUPRICES_ARCHIVE       raw payload archive (default: raw/ beside the warehouse)
GPUPRICES_REPORTS       report output folder (default: reports/ beside the warehouse)
GPUPRICES_TIMEOUT_S     per-request HTTP timeout (default 30)
GPUPRICES_REQUEST_BUDGET_S  wall-clock budget for one HTTP response, however it trickles (300)
GPUPRICES_RETRIES       attempts for transient HTTP errors (default 3)
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

from contract import HttpSettings

__all__ = ["DEFAULT_WAREHOUSE", "Settings", "load_settings"]

DEFAULT_WAREHOUSE = Path("data") / "gpu_prices.duckdb"
_BASE_URL_PREFIX = "GPUPRICES_BASE_URL_"


@dataclass(frozen=True, slots=True)
class Settings:
    warehouse: Path = DEFAULT_WAREHOUSE
    archive_dir: Path | None = None
    reports_dir: Path | None = None
    retries: int = 3
    backoff_base_s: float = 1.0
    http: HttpSettings = field(default_factory=HttpSettings)

    @property
    def archive_root(self) -> Path:
        from contract.files import link_target  # beside the real file when it is a symlink

        return self.archive_dir or link_target(self.warehouse).parent / "raw"

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
        http=http,
    )
    return settings.with_warehouse(warehouse)
