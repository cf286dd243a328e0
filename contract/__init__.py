"""The contract between the layers: the few types and constants every layer may import.

This package imports nothing of the project, so the layers above it point one way:
contract <- schemas <- scrapers <- warehouse <- reports <- flows <- gpuprices (the CLI).
A parser returns a frame of PARSED_SCHEMA from a RawCapture (or a `Parsed`: the frame plus the
rows it saw but did not store, counted by reason in `Skips`); fetch errors and parse errors
are the two ways a source fails; HttpSettings is how sources talk HTTP.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Mapping
from dataclasses import dataclass, field, replace
from datetime import UTC, datetime
from enum import StrEnum
from typing import TYPE_CHECKING, Any, Literal

if TYPE_CHECKING:  # polars is imported on first use: settings and the CLI do not need it
    import polars as pl

__all__ = [
    "CONFIRMING",
    "DEFAULT_PRICING",
    "GLOBAL_REGION",
    "IN_STOCK",
    "LOW_STOCK_GPUS",
    "PARSED_SCHEMA",
    "PRICING",
    "STALE_AFTER_H",
    "STOCK_LEVELS",
    "STOCK_STATES",
    "FetchError",
    "HttpSettings",
    "ParseError",
    "Parsed",
    "RawCapture",
    "RunStatus",
    "Skips",
    "SourceKind",
    "SourceSkipped",
    "conform",
    "empty_parsed",
    "now_utc",
    "pricing_set",
    "rows_frame",
]

SourceKind = Literal["api", "page", "catalog", "static"]

# A source's prices are stale when its last successful refresh is older than this. The SQL
# gets it as the macro stale_after() (warehouse.connection.refresh_views); reports print it.
STALE_AFTER_H = 48

# The columns a parser returns, in order. Provenance (observed_at, run_id, capture_id, source,
# source_url) and the canonical gpu_model are added downstream, by schemas.observation.
# `provider` may be left null by a source that speaks for one provider: it is filled from the
# source's definition (scrapers.base.SourceDef.provider).
_PARSED_COLUMNS: tuple[tuple[str, str], ...] = (  # (column, polars type), in order
    ("provider", "String"),
    ("offering", "String"),  # the provider's own instance / flavor / SKU name
    ("gpu_name", "String"),  # the GPU as the provider wrote it
    ("gpu_count", "Float64"),  # fractional for GPU slices
    ("gpu_memory_gb", "Float64"),  # per GPU
    ("vcpus", "Float64"),
    ("ram_gb", "Float64"),
    ("region", "String"),
    ("pricing", "String"),
    ("price_usd_per_hour", "Float64"),  # the whole offering
    ("billing_increment_s", "Int64"),
    ("available", "Boolean"),
    ("gpu_only", "Boolean"),  # price covers the GPUs but not the host VM (GCP GPU SKUs)
    ("monthly_fee_usd", "Float64"),  # a fixed fee billed on top of the hourly price, if any
    # Added in schema version 6 (all optional: a parser that does not know them leaves nulls).
    ("term_months", "Float64"),  # commitment length of a `reserved` price (1, 6, 12, 36 ...)
    ("effective_from", "Date"),  # an announced price: the day it takes effect (null: in force)
    ("currency", "String"),  # ISO 4217 code of the price as quoted; null means USD
    # The whole-offering price in `currency` when that is not USD (price_usd_per_hour is then
    # left null by the parser and filled downstream from a dated exchange rate).
    ("price_native_per_hour", "Float64"),
    ("gpus_available", "Float64"),  # GPUs free to rent now, where the source says
    # Added in schema version 12: how much stock the source says there is (STOCK_LEVELS).
    ("stock_level", "String"),
)

# A source's own word for how much of an offer is in stock, in one vocabulary (RunPod's
# stockStatus High / Medium / Low; Scaleway's "scarce" is low). Out of stock is not a level:
# it is `available = false`. Null: the source does not say.
STOCK_LEVELS: tuple[str, ...] = ("high", "medium", "low")
# THE STOCK STATE of an offer, or of a provider x GPU x region (the rule is the SQL macro
# stock_state, warehouse/views.sql): unknown (no source says), out_of_stock, low (in stock,
# but the source says low, or at most LOW_STOCK_GPUS GPUs are free), available.
STOCK_STATES: tuple[str, ...] = ("available", "low", "out_of_stock", "unknown")
IN_STOCK: tuple[str, ...] = ("available", "low")  # what `cheapest --in-stock` keeps
LOW_STOCK_GPUS = 8  # one 8-GPU node or fewer free: low stock

# The closed set of pricing kinds, and what each means. Every source uses these words; the
# README's pricing table is this dict. `gpu_only` is not a kind but a flag on any row: the
# price covers the GPUs alone, host CPU and RAM billed apart (GCP GPU SKUs, GPU-component
# price lists).
PRICING: dict[str, str] = {
    "on_demand": "pay as you go, no commitment, not interruptible, at a fixed list price",
    "spot": "spare capacity at a market price (spot, preemptible); can be reclaimed at short "
            "notice",
    "interruptible": "marketplace bid price (Vast.ai min_bid); preempted when outbid",
    "community": "on-demand on community/peer hosts (RunPod community cloud), weaker guarantees",
    "community_spot": "interruptible capacity on community hosts (RunPod community spot)",
    "reserved": "a commitment (term_months: 1 month .. 3 years) quoted as its hourly equivalent",
    "serverless": "billed per second/minute of use for a function, container or job; no idle "
                  "cost",
    "inference": "a GPU priced for an inference product (dedicated inference endpoints, an "
                 "inference-only column): not a general-purpose instance",
    "flex": "queued capacity that starts when available (GCP DWS Flex-start): not on demand",
    "dynamic": "a price the provider changes daily with demand (DataCrunch dynamic pricing)",
}


# What an X-hour costs, by default, in every command, the report, the board, alerts and the
# market price: pay as you go, not interruptible. One flag (`--pricing`, repeatable) changes it.
DEFAULT_PRICING: tuple[str, ...] = ("on_demand", "community", "serverless")


def pricing_set(pricing: tuple[str, ...] | list[str] | None) -> tuple[str, ...]:
    """The pricing kinds asked for (default DEFAULT_PRICING); ValueError for a kind not in
    PRICING."""
    chosen = tuple(dict.fromkeys(pricing or DEFAULT_PRICING))
    unknown = [p for p in chosen if p not in PRICING]
    if unknown:
        raise ValueError(f"unknown pricing {', '.join(unknown)}; one of {', '.join(PRICING)}")
    return chosen


class RunStatus(StrEnum):
    """What one run did for one source (scrape_run.status)."""

    SUCCESS = "success"      # stored a new capture's rows
    UNCHANGED = "unchanged"  # fetched a capture stored before: re-confirms its prices
    FAILED = "failed"        # fetch or parse failed; earlier prices stay current
    REJECTED = "rejected"    # parsed, but the batch failed a guard (empty, shrunk, layout)
    SKIPPED = "skipped"      # could not run in this configuration (e.g. no API key)
    REPARSED = "reparsed"    # a stored capture's rows were re-parsed in place
    REPARSE_FAILED = "reparse_failed"      # a re-parse failed: the old rows are kept
    REPARSE_REJECTED = "reparse_rejected"  # a re-parse failed a guard: the old rows are kept


# Statuses of runs whose capture holds a source's prices (in SQL: the macro confirms(status)).
CONFIRMING: frozenset[str] = frozenset({RunStatus.SUCCESS, RunStatus.UNCHANGED})


def _parsed_schema() -> dict[str, pl.DataType]:
    schema = globals().get("PARSED_SCHEMA")
    if schema is None:
        import polars as pl

        schema = {column: getattr(pl, kind)() for column, kind in _PARSED_COLUMNS}
        globals()["PARSED_SCHEMA"] = schema
    return schema


def __getattr__(name: str) -> Any:
    # PARSED_SCHEMA is built on first use, so that importing the contract (every command
    # does, for its settings) does not import polars (~0.17 s of start-up).
    if name == "PARSED_SCHEMA":
        return _parsed_schema()
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")


GLOBAL_REGION = "global"  # for prices that are the same everywhere or name no region


class ParseError(ValueError):
    """The payload is not in the shape this parser knows (layout changed, wrong content)."""


class Skips(Counter[str]):
    """Rows a parser saw but did not store, counted by reason ("contact sales" -> 12).

    A wrong price is worse than none, so a parser skips what it cannot read for sure (no
    number, another currency, a placeholder ...); the count says what was left out and why.
    """

    def skip(self, reason: str, count: int = 1) -> None:
        if count:
            self[reason] += count

    def describe(self) -> str:
        """'12 contact sales, 3 hidden row' (most first, then by reason); '' for none."""
        return ", ".join(f"{n} {reason}" for reason, n in
                         sorted(self.items(), key=lambda item: (-item[1], item[0])) if n)


@dataclass(frozen=True, slots=True)
class Parsed:
    """A parser's whole answer: its rows, what it skipped, and the strategy that read them.

    A parse function returns a frame or a Parsed; `SourceDef.parse_report` turns either into
    a Parsed with the strategy filled in ("api"/"page" when the parser names none).
    """

    frame: pl.DataFrame
    skips: Skips = field(default_factory=Skips)
    strategy: str = ""


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
    """One payload exactly as a provider served it, plus where and when it came from.

    `capture_id` (sha256 of the body) is computed once, when the capture is made.
    """

    source: str
    url: str  # never holds a secret: keys travel in headers only
    fetched_at: datetime  # UTC
    body: bytes
    content_type: str = "application/octet-stream"
    capture_id: str = field(init=False, repr=False, compare=False)

    def __post_init__(self) -> None:
        import hashlib  # here: a read command makes no capture (OpenSSL's start, 3-17 ms)

        object.__setattr__(self, "capture_id", hashlib.sha256(self.body).hexdigest())

    def text(self) -> str:
        return self.body.decode("utf-8", errors="replace")


@dataclass(frozen=True, slots=True)
class HttpSettings:
    """How sources talk HTTP. One object, built from the environment by the settings module."""

    timeout_s: float = 30.0
    max_bytes: int = 256 * 1024 * 1024  # a response larger than this is refused, not buffered
    # HTML pages are far smaller (well under 5 MB) and cost the parser ~30x their size in
    # memory: page sources read at most this much (SourceDef.fetch applies it).
    max_page_bytes: int = 8 * 1024 * 1024
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

    def for_kind(self, kind: str) -> HttpSettings:
        """These settings as a source of `kind` uses them: a page reads at most
        `max_page_bytes` (and never more than `max_bytes`)."""
        if kind != "page" or self.max_bytes <= self.max_page_bytes:
            return self
        return replace(self, max_bytes=self.max_page_bytes)


def rows_frame(rows: list[dict[str, Any]]) -> pl.DataFrame:
    """Build a parsed frame from row dicts; missing keys become nulls, extra keys are an error."""
    import polars as pl

    return pl.DataFrame(rows, schema=_parsed_schema(), orient="row") if rows else empty_parsed()


def empty_parsed() -> pl.DataFrame:
    import polars as pl

    return pl.DataFrame(schema=_parsed_schema())


def conform(frame: pl.DataFrame) -> pl.DataFrame:
    """Cast a parser's frame to PARSED_SCHEMA: missing columns become nulls, order is fixed.

    A frame already in that shape is returned as it is (conform runs once per frame).
    """
    import polars as pl

    if list(frame.schema.items()) == list(_parsed_schema().items()):
        return frame
    missing = [c for c in _parsed_schema() if c not in frame.columns]
    frame = frame.with_columns(pl.lit(None).alias(c) for c in missing)
    return frame.select(pl.col(c).cast(t, strict=False) for c, t in _parsed_schema().items())


def now_utc() -> datetime:
    return datetime.now(UTC)
