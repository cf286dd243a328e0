"""What every source is: one small interface, one raw payload type, one parsed-row shape.

A source has two halves. `fetch(client, settings)` talks HTTP and returns the payload as it
came (a `RawCapture`); `parse(raw)` is pure and turns that payload into a polars frame with
the columns of `PARSED_SCHEMA`. Nothing here touches the warehouse or the clock.
"""

from __future__ import annotations

import hashlib
from collections.abc import Mapping
from dataclasses import dataclass, field
from datetime import UTC, datetime
from pathlib import Path
from typing import TYPE_CHECKING, Any, Literal

import polars as pl

if TYPE_CHECKING:  # only an annotation here: `gpuprices query` should not pay for importing it
    import httpx

SourceKind = Literal["api", "page", "catalog", "static"]

# The columns a parser returns, in order. Provenance (observed_at, run_id, capture_id, source,
# source_url) and the canonical gpu_model are added downstream, by schemas.observation.
PARSED_SCHEMA: dict[str, pl.DataType] = {
    "provider": pl.String(),
    "offering": pl.String(),  # the provider's own instance / flavor / SKU name
    "gpu_name": pl.String(),  # the GPU as the provider wrote it
    "gpu_count": pl.Float64(),  # fractional for GPU slices
    "gpu_memory_gb": pl.Float64(),  # per GPU
    "vcpus": pl.Float64(),
    "ram_gb": pl.Float64(),
    "region": pl.String(),
    "pricing": pl.String(),
    "price_usd_per_hour": pl.Float64(),  # the whole offering
    "billing_increment_s": pl.Int64(),
    "available": pl.Boolean(),
    "gpu_only": pl.Boolean(),  # price covers the GPUs but not the host VM (GCP GPU SKUs)
    "monthly_fee_usd": pl.Float64(),  # a fixed fee billed on top of the hourly price, if any
}

GLOBAL_REGION = "global"  # for prices that are the same everywhere or name no region


class ParseError(ValueError):
    """The payload is not in the shape this parser knows (layout changed, wrong content)."""


class SourceSkipped(RuntimeError):
    """The source cannot run in this configuration (e.g. its API key is not set); not a failure."""


class FetchError(RuntimeError):
    """A fetch failed. `transient` errors (timeouts, 5xx, 429) are worth a retry."""

    def __init__(self, source: str, url: str, reason: str, *, transient: bool = False,
                 retry_after_s: float | None = None) -> None:
        super().__init__(f"{source}: {url}: {reason}")
        self.source = source
        self.url = url
        self.reason = reason
        self.transient = transient
        self.retry_after_s = retry_after_s


@dataclass(frozen=True, slots=True)
class RawCapture:
    """One payload exactly as a provider served it, plus where and when it came from."""

    source: str
    url: str  # never holds a secret: keys travel in headers only
    fetched_at: datetime  # UTC
    body: bytes
    content_type: str = "application/octet-stream"

    @property
    def capture_id(self) -> str:
        return hashlib.sha256(self.body).hexdigest()

    def text(self) -> str:
        return self.body.decode("utf-8", errors="replace")


@dataclass(frozen=True, slots=True)
class HttpSettings:
    """How sources talk HTTP. One object, built from the environment by gpuprices.settings."""

    timeout_s: float = 30.0
    max_bytes: int = 256 * 1024 * 1024  # a response larger than this is refused, not buffered
    # Wall-clock limit for one response: the read timeout alone lets a server that drips a
    # byte a second hold a source forever. With retries, a source is bounded by
    # attempts x request_budget_s + backoff.
    request_budget_s: float = 300.0
    user_agent: str = "gpuprices/0.1 (+https://github.com/gpuprices/gpuprices)"
    # Per-source base URL overrides (a proxy, a mirror, or a local test server).
    base_urls: Mapping[str, str] = field(default_factory=dict)
    # Secrets by environment variable name (LAMBDA_API_KEY ...); never logged or stored.
    secrets: Mapping[str, str] = field(default_factory=dict, repr=False)

    def base_url(self, source: str, default: str) -> str:
        return self.base_urls.get(source, default).rstrip("/")

    def secret(self, name: str) -> str | None:
        value = self.secrets.get(name)
        return value or None


def rows_frame(rows: list[dict[str, Any]]) -> pl.DataFrame:
    """Build a parsed frame from row dicts; missing keys become nulls, extra keys are an error."""
    frame = pl.DataFrame(rows, schema=PARSED_SCHEMA, orient="row") if rows else empty_parsed()
    return frame


def empty_parsed() -> pl.DataFrame:
    return pl.DataFrame(schema=PARSED_SCHEMA)


def conform(frame: pl.DataFrame) -> pl.DataFrame:
    """Cast a parser's frame to PARSED_SCHEMA: missing columns become nulls, order is fixed."""
    missing = [c for c in PARSED_SCHEMA if c not in frame.columns]
    frame = frame.with_columns(pl.lit(None).alias(c) for c in missing)
    return frame.select(pl.col(c).cast(t, strict=False) for c, t in PARSED_SCHEMA.items())


def now_utc() -> datetime:
    return datetime.now(UTC)


@dataclass(frozen=True, slots=True)
class SourceDef:
    """A Source made of two plain functions; what each scrapers/<name>.py module exports."""

    name: str
    provider: str
    kind: SourceKind
    url: str
    example: Path
    example_as_of: str
    fetch_fn: Any = field(repr=False)
    parse_fn: Any = field(repr=False)
    aggregator: bool = False
    # Other names accepted on the command line (e.g. `skypilot` for `skypilot-catalog`).
    aliases: tuple[str, ...] = ()
    # Environment variables holding this source's secrets (sent in headers, never stored).
    secret_names: tuple[str, ...] = ()
    # Every address the page has had (oldest first), for archive backfills; empty = (url,).
    history_urls: tuple[str, ...] = ()

    @property
    def archive_urls(self) -> tuple[str, ...]:
        """The addresses to look up in a web archive: `history_urls`, or just `url`."""
        return self.history_urls or (self.url,)

    def fetch(self, client: httpx.Client, settings: HttpSettings) -> RawCapture:
        raw: RawCapture = self.fetch_fn(client, settings)
        return raw

    def parse(self, raw: RawCapture) -> pl.DataFrame:
        """Parse a payload; any failure is a ParseError naming the source (never a bare crash)."""
        return self.parse_with_strategy(raw)[0]

    def parse_with_strategy(self, raw: RawCapture) -> tuple[pl.DataFrame, str]:
        """Rows and the name of the strategy that read them ("api" for non-page parsers)."""
        try:
            with_strategy = getattr(self.parse_fn, "parse_with_strategy", None)
            if with_strategy is not None:
                frame, strategy = with_strategy(raw)
                return conform(frame), strategy
            return conform(self.parse_fn(raw)), "api" if self.kind != "page" else "page"
        except ParseError:
            raise
        except Exception as exc:  # a shape the parser never saw: wrong types, missing keys ...
            detail = str(exc).splitlines()[0][:200] if str(exc) else ""
            raise ParseError(f"{self.name}: unexpected payload shape "
                             f"({type(exc).__name__}: {detail})") from exc

    def example_capture(self, fetched_at: datetime | None = None) -> RawCapture:
        """The bundled snapshot as if just fetched from `url` (offline mode)."""
        return RawCapture(source=self.name, url=self.url,
                          fetched_at=fetched_at or now_utc(),
                          body=self.example.read_bytes(),
                          content_type=_content_type(self.example))


def _content_type(path: Path) -> str:
    return {
        ".json": "application/json", ".csv": "text/csv", ".html": "text/html",
        ".md": "text/markdown", ".mdx": "text/markdown", ".js": "application/javascript",
        ".toml": "application/toml",
    }.get(path.suffix, "application/octet-stream")


EXAMPLES_DIR = Path(__file__).with_name("examples")


# Every source is a SourceDef; the name reads better at call sites.
Source = SourceDef
