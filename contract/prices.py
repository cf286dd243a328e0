"""Price text, read in one place: `parse_price("$2.99 / GPU / hr")`.

Every page source reads a price cell through `parse_price`.
It knows the amount, the currency (signs "$ € £ ¥ ₹ ₩", prefixed dollars "C$ A$ NZ$ HK$ ...",
ISO codes before or after the number), the period (second .. year) and whether the text says
per GPU or per instance. It refuses, with a `PriceTextError` (a ParseError: the source fails
with one line), what it cannot read for sure instead of guessing:

- a decimal comma the caller did not declare ("$2,99" is not 2.00, nor 299): only
  `decimal_comma=True` (the caller knows the page's locale) reads it as 2.99;
- a sign ("-$50.44", "$-50.44": a refund or a discount, not a price);
- an exponent ("$1e9");
- a dollar with an unknown prefix ("X$5");
and it never reads a size or a count as money: "22 TiB SSD" is no price even where the caller
assumes dollars for bare numbers (a swapped cell).

A price in another currency is returned with that currency (never as USD); callers decide.
Because a parser may still drop the currency on the floor, every price read inside
`price_reading()` is noted, and `tag_foreign_prices` gives a parsed frame's rows back the
currency of the text they came from (scrapers.base runs every parse that way): a page whose
"$" became "€" then yields EUR rows, which the screens hold out until a rate converts them.
Pure functions; polars is imported only by `tag_foreign_prices`.
"""

from __future__ import annotations

import re
from collections.abc import Iterator
from contextlib import contextmanager
from contextvars import ContextVar
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Literal

from contract import ParseError

if TYPE_CHECKING:
    import polars as pl

__all__ = [
    "HOURS_PER",
    "PagePrice",
    "Period",
    "PriceLog",
    "PriceTextError",
    "clean_text",
    "parse_price",
    "price_reading",
    "price_unit",
    "tag_foreign_prices",
]

Period = Literal["second", "minute", "hour", "day", "month", "year"]
HOURS_PER: dict[str, float] = {
    "second": 1 / 3600, "minute": 1 / 60, "hour": 1.0, "day": 24.0,
    "month": 730.0, "year": 8760.0,
}


class PriceTextError(ParseError):
    """Price text that cannot be read for sure (ambiguous separator, sign, exponent ...)."""


# Characters that pages and file indexes slip into text: no-break and zero-width spaces,
# joiners, the byte-order mark, soft hyphens.
_INVISIBLE = re.compile("[\u200b\u200c\u200d\u2060\ufeff\u00ad]")
_SPACES = re.compile(r"[\s\u00a0\u202f\u2007]+")


def clean_text(text: str | None) -> str:
    """Text with invisible characters removed and runs of any white space folded to one."""
    if not text:
        return ""
    return _SPACES.sub(" ", _INVISIBLE.sub("", text)).strip()


# --- currencies -----------------------------------------------------------------------------

_SIGNS = {"$": "USD", "US$": "USD", "USD$": "USD", "€": "EUR", "£": "GBP", "¥": "JPY",
          "₹": "INR", "₩": "KRW", "₽": "RUB", "₺": "TRY", "₪": "ILS", "C$": "CAD",
          "CA$": "CAD", "CAN$": "CAD", "A$": "AUD", "AU$": "AUD", "NZ$": "NZD", "S$": "SGD",
          "SG$": "SGD", "HK$": "HKD", "R$": "BRL", "MX$": "MXN", "NT$": "TWD"}
_CODES = ("USD", "EUR", "GBP", "JPY", "CNY", "RMB", "INR", "CAD", "AUD", "NZD", "SGD", "HKD",
          "CHF", "SEK", "NOK", "DKK", "PLN", "CZK", "BRL", "MXN", "KRW", "TWD", "ZAR", "AED",
          "ILS", "TRY", "RUB")
_CODE_ALIASES = {"RMB": "CNY"}
# A currency written before the amount: a sign, a prefixed dollar, or an ISO code.
_PREFIX = (r"(?P<pre>[A-Z]{1,3}\$|[$€£¥₹₩₽₺₪]|\b(?:" + "|".join(_CODES) + r")\b"
           r"|\bkr\.?|\bzł|\bFr\.)")
# A currency written after it: an ISO code or a sign ("2,99 €").
_SUFFIX = r"(?P<post>(?:" + "|".join(_CODES) + r")\b|[€£¥₹₩₽]|kr\b|zł)"
# The amount: digits with "," "." "'" or a thin space as separators, or ".50"; an exponent is
# captured so that it can be refused, not read as the bare mantissa.
_NUMBER = (r"(?P<num>\d(?:[\d,.'\u2019]*\d)?(?:\s\.\s?\d+|\s?\.\s\d+)?|\.\d+)"
           r"(?P<exp>[eE][+-]?\d+)?")
_AMOUNT = re.compile(
    r"(?P<minus>(?<![\w.])[-\u2212\u2013](?=[A-Z]{0,3}\$|[€£¥₹]|\d|\.\d))?"
    + _PREFIX + r"?\s?(?P<minus2>[-\u2212])?\s?" + _NUMBER + r"\s?" + _SUFFIX + "?"
)

# --- units ----------------------------------------------------------------------------------

_PERIODS: tuple[tuple[Period, re.Pattern[str]], ...] = (
    ("second", re.compile(r"(?:/|\bper\b|\ba\b)\s*(?:gpu\s*[-/]?\s*)?(?:s|sec|secs|second)\b",
                          re.I)),
    ("minute", re.compile(r"(?:/|\bper\b|\ba\b)\s*(?:gpu\s*[-/]?\s*)?(?:min|mins|minute)\b", re.I)),
    ("hour", re.compile(r"(?:/|\bper\b|\ban\b|\ba\b)\s*(?:gpu\s*[-/]?\s*)?(?:h|hr|hrs|hour)\b"
                        r"|\bhourly\b|/\s*gpu\s*/\s*h", re.I)),
    ("day", re.compile(r"(?:/|\bper\b|\ba\b)\s*(?:day)\b|\bdaily\b", re.I)),
    ("month", re.compile(r"(?:/|\bper\b|\ba\b)\s*(?:mo|month)\b|\bmonthly\b", re.I)),
    ("year", re.compile(r"(?:/|\bper\b|\ba\b)\s*(?:yr|year)\b|\byearly\b|\bannual", re.I)),
)
_PER_GPU = re.compile(r"\bper\s*gpu\b|/\s*gpu\b|\bgpu\s*[-/]\s*h(?:ou)?r|\bgpu\s*hour|"
                      r"\bper\s+gpu\s+per\b|\bgpu\s*/\s*h", re.I)
# "$1.89 / H100 / hr", "per A100 per hour": priced per named GPU, i.e. per GPU.
_PER_MODEL = re.compile(r"(?:/|\bper\b)\s*(?:nvidia\s+)?[a-z]{1,3}\d{2,4}[a-z]*\s*"
                        r"(?:/|\bper\b|-)\s*h", re.I)
_PER_INSTANCE = re.compile(r"(?:/|\bper\b)\s*(?:instance|node|server|machine|vm|pod)\b", re.I)
_NOT_A_PRICE = re.compile(r"contact|talk to|get a quote|request|sold out|coming soon|"
                          r"\bn/?a\b|^\s*[-–—]\s*$|unavailable|waitlist|call us", re.I)
_FROM = re.compile(r"\b(?:from|starting\s+(?:at|from)|as\s+low\s+as)\b", re.I)
# A bare number followed by one of these counts or measures something else: "22 TiB SSD" in a
# price cell (a shifted or swapped cell) is not $22, whatever currency the caller assumes.
_NOT_MONEY_UNIT = re.compile(r"\s?(?:[KMGTP]i?B\b|bytes?\b|v?CPUs?\b|cores?\b|GPUs?\b|"
                             r"threads?\b|[GM]Hz\b|W\b|%|[x×](?![a-z]))", re.I)


@dataclass(frozen=True, slots=True)
class PagePrice:
    """A price as a page states it. `per_gpu` is None when the text does not say."""

    amount: float
    currency: str
    period: Period | None
    per_gpu: bool | None
    starting_from: bool = False
    text: str = ""

    def hourly(self) -> float:
        """The amount per hour; ParseError when the text named no period."""
        if self.period is None:
            raise ParseError(f"price {self.text!r} names no period (/hr, /mo ...)")
        return self.amount / HOURS_PER[self.period]


def price_unit(text: str | None) -> tuple[Period | None, bool | None]:
    """(period, per GPU?) from unit words alone: a price's tail ("/ GPU / hr") or a column
    header ("PRICE/GPU/HR*", "On-Demand Price (/hr)"). per GPU is None when not said."""
    cleaned = clean_text(text)
    if re.fullmatch(r"[A-Z0-9 /*().$-]+", cleaned):
        cleaned = cleaned.replace("/", " / ")  # headers in capitals glue words: PRICE/GPU/HR
    period = next((p for p, pattern in _PERIODS if pattern.search(cleaned)), None)
    per_gpu: bool | None = None
    if _PER_GPU.search(cleaned) or _PER_MODEL.search(cleaned):
        per_gpu = True
    elif _PER_INSTANCE.search(cleaned):
        per_gpu = False
    return period, per_gpu


def _currency(match: re.Match[str]) -> str | None:
    """The currency the match names, None when none; PriceTextError for an unknown one."""
    pre, post = match.group("pre"), match.group("post")
    for mark in (pre, post):
        if not mark:
            continue
        if mark in _SIGNS:
            return _SIGNS[mark]
        if mark.upper() in _CODES:
            return _CODE_ALIASES.get(mark.upper(), mark.upper())
        if mark.endswith("$"):
            raise PriceTextError(f"price {match.group(0).strip()!r}: unknown dollar {mark!r} "
                                 "(not US dollars)")
        if mark.startswith(("kr", "Fr")):
            raise PriceTextError(f"price {match.group(0).strip()!r}: {mark!r} names no one "
                                 "currency (SEK, NOK, DKK / CHF)")
        if mark == "zł":
            return "PLN"
    return None


def _number(text: str, *, decimal_comma: bool, whole: str) -> float:
    """The value of an amount's digits; PriceTextError when the separators are ambiguous."""
    digits = re.sub(r"\s", "", text).replace("'", "").replace("\u2019", "")
    if digits.count(".") + digits.count(",") == 0:
        return float(digits)
    def grouped(sep: str) -> str:
        return r"\d{1,3}(?:" + re.escape(sep) + r"\d{3})+"

    if decimal_comma:
        digits = digits.replace(".", "\0").replace(",", ".").replace("\0", ",")
    last_dot, last_comma = digits.rfind("."), digits.rfind(",")
    if last_comma > last_dot:  # the last separator is a comma: "2,99" "1,234" "1.234,50"
        tail = digits[last_comma + 1:]
        head = digits[:last_comma]
        if "." in head:  # "1.234,50": dots group, the comma is decimal (European writing)
            if not re.fullmatch(grouped("."), head):
                raise PriceTextError(f"price {whole!r}: cannot read {text!r}")
            return float(head.replace(".", "") + "." + tail)
        if re.fullmatch(grouped(","), digits):  # "1,234" "12,345,678"
            return float(digits.replace(",", ""))
        raise PriceTextError(f"price {whole!r}: {text!r} has a decimal comma (or a misplaced "
                             "thousands separator) and the page's locale is not known")
    head, tail = digits[:last_dot], digits[last_dot + 1:]
    if not tail.isdigit() or "." in head:
        raise PriceTextError(f"price {whole!r}: cannot read {text!r}")
    if head and "," in head and not re.fullmatch(grouped(","), head):
        raise PriceTextError(f"price {whole!r}: misplaced thousands separator in {text!r}")
    return float((head.replace(",", "") or "0") + "." + tail)


def parse_price(text: str | None, *, default_period: Period | None = None,
                default_currency: str | None = None,
                decimal_comma: bool = False) -> PagePrice | None:
    """A PagePrice for price text, or None when the text holds no price ("Contact sales").

    The first amount with a currency wins ("8x H100 $20.72" is not 8 dollars); a bare number
    is a price only when the caller names its currency. `decimal_comma`: the page writes
    "2,99" for 2.99 (its locale is known). Raises PriceTextError for text it cannot read.

    >>> parse_price("$2.99 / GPU / hr")
    PagePrice(amount=2.99, currency='USD', period='hour', per_gpu=True, starting_from=False, text='$2.99 / GPU / hr')
    >>> parse_price("$20.72 / hr").per_gpu is None
    True
    """  # noqa: E501
    cleaned = clean_text(text)
    if not cleaned or _NOT_A_PRICE.search(cleaned):
        return None
    matches = list(_AMOUNT.finditer(cleaned))
    match = next((m for m in matches if m.group("pre") or m.group("post")),
                 matches[0] if matches else None)
    if match is None:
        return None
    marked = _currency(match)
    currency = marked or default_currency
    if currency is None:
        return None  # a bare number is not a price unless the caller knows the currency
    if marked is None and _NOT_MONEY_UNIT.match(cleaned, match.end("num")):
        return None  # "22 TiB SSD", "208 vCPUs": a size or a count, not an amount of money
    shown = match.group(0).strip()
    if match.group("minus") or match.group("minus2"):
        raise PriceTextError(f"price {shown!r} is negative (a credit or discount, not a price)")
    if match.group("exp"):
        raise PriceTextError(f"price {shown!r} is written with an exponent")
    amount = _number(match.group("num"), decimal_comma=decimal_comma, whole=shown)
    period, per_gpu = price_unit(cleaned[match.end():])
    price = PagePrice(amount=amount, currency=currency, period=period or default_period,
                      per_gpu=per_gpu,
                      starting_from=bool(_FROM.search(cleaned[:match.start()] or "")),
                      text=cleaned)
    log = _LOG.get()
    if log is not None:
        log.note(price)
    return price


# --- what a parse read ----------------------------------------------------------------------

@dataclass(slots=True)
class PriceLog:
    """Every amount parse_price returned during one parse, by currency (amount and hourly)."""

    amounts: dict[str, set[float]] = field(default_factory=dict)
    counts: dict[str, int] = field(default_factory=dict)

    def note(self, price: PagePrice) -> None:
        values = self.amounts.setdefault(price.currency, set())
        values.add(price.amount)
        if price.period is not None:
            values.add(price.amount / HOURS_PER[price.period])
        self.counts[price.currency] = self.counts.get(price.currency, 0) + 1

    @property
    def foreign(self) -> list[str]:
        """Currencies other than USD read, most read first."""
        return sorted((c for c in self.counts if c != "USD"), key=lambda c: -self.counts[c])


_LOG: ContextVar[PriceLog | None] = ContextVar("price_log", default=None)


@contextmanager
def price_reading() -> Iterator[PriceLog]:
    """Note every price parse_price reads inside the block (one parse)."""
    log = PriceLog()
    token = _LOG.set(log)
    try:
        yield log
    finally:
        _LOG.reset(token)


def _matches(values: set[float]) -> pl.Expr:
    import polars as pl

    whole = pl.col("price_usd_per_hour")
    per_gpu = whole / pl.col("gpu_count")
    hit = pl.lit(False)
    for value in values:
        tolerance = 1e-6 * max(abs(value), 1e-9)
        hit = hit | ((whole - value).abs() <= tolerance) | ((per_gpu - value).abs() <= tolerance)
    return hit.fill_null(False)


def tag_foreign_prices(frame: pl.DataFrame, log: PriceLog) -> pl.DataFrame:
    """Rows a parser left in USD but whose price came from text in another currency, given
    that currency: `currency` set, the number moved to `price_native_per_hour` and
    `price_usd_per_hour` left null (for a dated rate to fill, or the screens to hold out).

    A row is traced by its whole or per-GPU price equalling an amount read in that currency
    and none read in USD; when the parse read no USD price at all, every untagged row is.
    """
    import polars as pl

    foreign = log.foreign
    if not foreign or frame.height == 0:
        return frame
    untagged = pl.col("currency").is_null() | (pl.col("currency") == "USD")
    usd = _matches(log.amounts.get("USD", set()))
    currency: pl.Expr = pl.lit(None, pl.String)
    for code in reversed(foreign):
        currency = pl.when(_matches(log.amounts[code]) & ~usd).then(pl.lit(code)).otherwise(
            currency)
    if "USD" not in log.counts:
        currency = currency.fill_null(pl.lit(foreign[0]))
    tagged = pl.when(untagged).then(currency).otherwise(pl.lit(None, pl.String))
    frame = frame.with_columns(tagged.alias("_foreign"))
    return frame.with_columns(
        pl.coalesce("_foreign", "currency").alias("currency"),
        pl.when(pl.col("_foreign").is_not_null()).then(pl.col("price_usd_per_hour"))
        .otherwise(pl.col("price_native_per_hour")).alias("price_native_per_hour"),
        pl.when(pl.col("_foreign").is_not_null()).then(None)
        .otherwise(pl.col("price_usd_per_hour")).alias("price_usd_per_hour"),
    ).drop("_foreign")
