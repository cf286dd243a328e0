"""What every source is: one small interface (SourceDef) over two plain functions.

A source has two halves. `fetch(client, settings)` talks HTTP and returns the payload as it
came (a `RawCapture`); `parse(raw)` is pure and turns that payload into a polars frame with
the columns of `PARSED_SCHEMA`, or into a `Parsed` (that frame plus the rows it skipped,
counted by reason, and the page strategy that read it). Nothing here touches the warehouse or
the clock.

The contract types themselves (RawCapture, Parsed, ParseError ...) live in the bottom package
`contract`, which every layer imports directly.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from datetime import datetime
from pathlib import Path
from typing import TYPE_CHECKING, Any

from contract import (
    FetchError,
    HttpSettings,
    Parsed,
    ParseError,
    RawCapture,
    SourceKind,
    SourceSkipped,
    conform,
    now_utc,
)
from contract.prices import price_reading, tag_foreign_prices
from contract.redact import contains_secret, redact, redact_bytes

if TYPE_CHECKING:  # only an annotation here: `gpuprices query` should not pay for importing it
    import httpx
    import polars as pl

__all__ = ["EXAMPLES_DIR", "Source", "SourceDef"]


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
        """Fetch with this kind's size cap (a page reads at most `max_page_bytes`); no
        secret's value leaves in the capture or in an error (contract.redact)."""
        settings = settings.for_kind(self.kind)
        try:
            raw: RawCapture = self.fetch_fn(client, settings)
        except Exception as exc:
            raise redacted_error(exc, settings.secrets, self.name, self.url) from None
        return redacted_capture(raw, settings.secrets)

    def parse(self, raw: RawCapture) -> pl.DataFrame:
        """Parse a payload; any failure is a ParseError naming the source (never a bare crash)."""
        return self.parse_report(raw).frame

    def parse_report(self, raw: RawCapture) -> Parsed:
        """Rows, the rows skipped by reason, and the strategy that read them ("api" for
        non-page parsers): a parser's frame or Parsed, conformed to PARSED_SCHEMA."""
        try:
            # Every price text the parser reads is noted, so a row it left in USD although
            # the text was in euros (or any other currency) gets that currency back.
            with price_reading() as log:
                result = self.parse_fn(raw)
            parsed = result if isinstance(result, Parsed) else Parsed(result)
            frame = tag_foreign_prices(self._with_provider(conform(parsed.frame)), log)
            return Parsed(frame, parsed.skips,
                          parsed.strategy or ("page" if self.kind == "page" else "api"))
        except ParseError:
            raise
        except Exception as exc:  # a shape the parser never saw: wrong types, missing keys ...
            detail = str(exc).splitlines()[0][:200] if str(exc) else ""
            raise ParseError(f"{self.name}: unexpected payload shape "
                             f"({type(exc).__name__}: {detail})") from exc

    def _with_provider(self, frame: pl.DataFrame) -> pl.DataFrame:
        """A direct source speaks for one provider: its parser need not write it on every row."""
        import polars as pl

        if self.aggregator or frame.height == 0 or frame["provider"].null_count() == 0:
            return frame
        return frame.with_columns(pl.col("provider").fill_null(self.provider))

    def example_capture(self, fetched_at: datetime | None = None) -> RawCapture:
        """The bundled snapshot as if just fetched from `url` (offline mode)."""
        return RawCapture(source=self.name, url=self.url,
                          fetched_at=fetched_at or now_utc(),
                          body=self.example.read_bytes(),
                          content_type=_content_type(self.example))


def redacted_capture(raw: RawCapture, secrets: Mapping[str, str]) -> RawCapture:
    """The capture with every secret's value replaced (body and address); itself when clean."""
    body, url = redact_bytes(raw.body, secrets), redact(raw.url, secrets)
    if body is raw.body and url == raw.url:
        return raw
    return RawCapture(source=raw.source, url=url, fetched_at=raw.fetched_at, body=body,
                      content_type=raw.content_type)


def redacted_error(exc: Exception, secrets: Mapping[str, str], source: str = "?",
                   url: str = "?") -> Exception:
    """`exc`, or the same kind of error without any secret's value in its message."""
    if not contains_secret(str(exc), secrets):
        return exc
    if isinstance(exc, FetchError):
        clean = FetchError(exc.source, redact(exc.url, secrets), redact(exc.reason, secrets),
                           transient=exc.transient, retry_after_s=exc.retry_after_s)
        clean.__dict__.update({k: v for k, v in vars(exc).items() if k not in vars(clean)})
        return clean
    if isinstance(exc, ParseError | SourceSkipped):
        return type(exc)(redact(str(exc), secrets))
    return FetchError(source, url, f"{type(exc).__name__}: {redact(str(exc), secrets)}")


def _content_type(path: Path) -> str:
    return {
        ".json": "application/json", ".csv": "text/csv", ".html": "text/html",
        ".md": "text/markdown", ".mdx": "text/markdown", ".js": "application/javascript",
        ".toml": "application/toml",
    }.get(path.suffix, "application/octet-stream")


EXAMPLES_DIR = Path(__file__).with_name("examples")


# Every source is a SourceDef; the name reads better at call sites.
Source = SourceDef
