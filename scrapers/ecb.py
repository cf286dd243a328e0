"""The ECB's euro foreign exchange reference rates: fetch, and a pure parse into dated rates.

The European Central Bank publishes, each TARGET working day around 16:00 CET, how many units
of ~30 currencies one euro buys (no rate on weekends and TARGET holidays). Two files, no key:

- daily: `eurofxref-daily.xml`, a gesmes envelope holding one `<Cube time='YYYY-MM-DD'>` with
  one `<Cube currency='USD' rate='1.0705'/>` per currency (the same XML shape holds the
  90-day and full histories, `eurofxref-hist-90d.xml` / `eurofxref-hist.xml`: one time Cube
  per day).
- history: `eurofxref-hist.zip`, one CSV `eurofxref-hist.csv` inside: a header
  `Date,USD,JPY,...,ZAR,` (the trailing comma makes an empty last column), one row per day,
  newest first, ISO dates, `N/A` where a currency had no rate that day (currencies that joined
  the euro or were suspended). The one-day CSV `eurofxref.csv` has the same columns with
  spaces after the commas and a written date ("20 November 2026").

`parse_rates` reads any of these (XML, CSV, or the ZIP holding the CSV) into a frame of
(rate_date, currency, per_eur): per_eur is the ECB's own quotation, units of `currency` per
euro. Nothing is guessed: a payload in no known shape, a rate that is not a positive number,
or two different rates for one currency on one day is a ParseError.

This module is not a price source (it is not in the registry): warehouse.fx stores the rates
and converts prices with them; the refresh fetches the daily file before the price sources.
"""

from __future__ import annotations

import csv
import io
import re
import zipfile
from datetime import date, datetime
from pathlib import Path
from typing import TYPE_CHECKING
from xml.etree import ElementTree

import polars as pl

from contract import HttpSettings, ParseError, RawCapture, now_utc
from scrapers.base import EXAMPLES_DIR
from scrapers.http import request

if TYPE_CHECKING:
    import httpx

__all__ = [
    "DAILY_URL",
    "EXAMPLE",
    "HISTORY_URL",
    "NAME",
    "RATES_SCHEMA",
    "capture_from_file",
    "fetch_daily",
    "fetch_history",
    "parse_rates",
]

NAME = "ecb"
BASE = "https://www.ecb.europa.eu"
DAILY_PATH = "/stats/eurofxref/eurofxref-daily.xml"
HISTORY_PATH = "/stats/eurofxref/eurofxref-hist.zip"
DAILY_URL = BASE + DAILY_PATH
HISTORY_URL = BASE + HISTORY_PATH
# The daily file as published on Friday 2026-11-20: replayed by the offline refresh.
EXAMPLE = EXAMPLES_DIR / NAME / "eurofxref-daily_2026-11-20.xml"

RATES_SCHEMA: dict[str, pl.DataType] = {
    "rate_date": pl.Date(), "currency": pl.String(), "per_eur": pl.Float64(),
}
FIRST_DAY = date(1999, 1, 4)  # the first reference rates, the euro's first business day
MAX_UNZIPPED_BYTES = 64 * 1024 * 1024  # the full history CSV is ~2 MB; refuse a zip bomb
_CURRENCY = re.compile(r"^[A-Z]{3}$")
_MISSING = {"", "N/A", "NA", "-"}


def fetch_daily(client: httpx.Client, settings: HttpSettings) -> RawCapture:
    """Today's reference rates (the latest working day's), as the ECB serves them."""
    url = settings.base_url(NAME, BASE) + DAILY_PATH
    return request(client, settings, NAME, "GET", url, headers={"Accept": "application/xml"})


def fetch_history(client: httpx.Client, settings: HttpSettings,
                  url: str | None = None) -> RawCapture:
    """The whole history (ZIP by default; any URL serving one of the formats above)."""
    target = url or settings.base_url(NAME, BASE) + HISTORY_PATH
    return request(client, settings, NAME, "GET", target)


def capture_from_file(path: Path) -> RawCapture:
    """A rates file on disk as a capture (fetched_at = now: when it was read)."""
    body = path.read_bytes()
    return RawCapture(source=NAME, url=f"file:{path.name}", fetched_at=now_utc(), body=body,
                      content_type=_content_type(body))


def _content_type(body: bytes) -> str:
    if body.startswith(b"PK\x03\x04"):
        return "application/zip"
    return "application/xml" if body.lstrip()[:1] == b"<" else "text/csv"


def parse_rates(raw: RawCapture) -> pl.DataFrame:
    """(rate_date, currency, per_eur) rows of an ECB file, sorted; ParseError if not one."""
    body = raw.body
    if body.startswith(b"PK\x03\x04"):
        body = _unzip_csv(body)
    text = body.decode("utf-8-sig", errors="replace").lstrip()
    if not text:
        raise ParseError("ecb: empty rates file")
    rows = _xml_rows(text) if text.startswith("<") else _csv_rows(text)
    return _frame(rows)


def _unzip_csv(body: bytes) -> bytes:
    try:
        with zipfile.ZipFile(io.BytesIO(body)) as archive:
            members = [m for m in archive.infolist() if m.filename.lower().endswith(".csv")]
            if len(members) != 1:
                raise ParseError(f"ecb: expected one CSV in the ZIP, found {len(members)}")
            if members[0].file_size > MAX_UNZIPPED_BYTES:
                raise ParseError(f"ecb: {members[0].filename} unzips to "
                                 f"{members[0].file_size} bytes, over the "
                                 f"{MAX_UNZIPPED_BYTES}-byte cap")
            with archive.open(members[0]) as handle:
                data = handle.read(MAX_UNZIPPED_BYTES + 1)
    except zipfile.BadZipFile as exc:
        raise ParseError(f"ecb: not a readable ZIP ({exc})") from None
    if len(data) > MAX_UNZIPPED_BYTES:
        raise ParseError(f"ecb: the CSV unzips to more than {MAX_UNZIPPED_BYTES} bytes")
    return data


def _local(tag: str) -> str:
    return tag.rsplit("}", 1)[-1]


def _xml_rows(text: str) -> list[tuple[date, str, str]]:
    try:
        root = ElementTree.fromstring(text)
    except ElementTree.ParseError as exc:
        raise ParseError(f"ecb: not well-formed XML ({exc})") from None
    rows: list[tuple[date, str, str]] = []
    days = [e for e in root.iter() if _local(e.tag) == "Cube" and "time" in e.attrib]
    if not days:
        raise ParseError("ecb: no <Cube time='...'> in the XML (not the ECB reference rates?)")
    for day in days:
        when = _day(day.attrib["time"])
        for cube in day:
            if _local(cube.tag) == "Cube" and "currency" in cube.attrib:
                rows.append((when, cube.attrib["currency"], cube.attrib.get("rate", "")))
    return rows


def _csv_rows(text: str) -> list[tuple[date, str, str]]:
    table = [[cell.strip() for cell in line] for line in csv.reader(io.StringIO(text)) if line]
    if not table or not table[0] or table[0][0].lower() != "date":
        raise ParseError("ecb: expected a CSV whose first column is 'Date' "
                         f"(got {(table[0][:3] if table else [])!r})")
    header = table[0]
    currencies = [(index, code) for index, code in enumerate(header[1:], start=1) if code]
    bad = [code for _, code in currencies if not _CURRENCY.match(code)]
    if bad:
        raise ParseError(f"ecb: CSV header has names that are not currency codes: {bad[:5]}")
    rows: list[tuple[date, str, str]] = []
    for line in table[1:]:
        when = _day(line[0])
        for index, code in currencies:
            rows.append((when, code, line[index] if index < len(line) else ""))
    return rows


def _day(text: str) -> date:
    for layout in ("%Y-%m-%d", "%d %B %Y"):
        try:
            when = datetime.strptime(text.strip(), layout).date()
        except ValueError:
            continue
        if when < FIRST_DAY:
            raise ParseError(f"ecb: rate date {when} is before the first reference rates")
        return when
    raise ParseError(f"ecb: {text!r} is not a date")


def _frame(rows: list[tuple[date, str, str]]) -> pl.DataFrame:
    seen: dict[tuple[date, str], float] = {}
    for when, code, value in rows:
        if value.strip() in _MISSING:
            continue  # no rate for this currency that day (N/A in the history)
        if not _CURRENCY.match(code):
            raise ParseError(f"ecb: {code!r} is not a currency code")
        try:
            rate = float(value)
        except ValueError:
            raise ParseError(f"ecb: {code} rate {value!r} on {when} is not a number") from None
        if not rate > 0 or rate == float("inf"):
            raise ParseError(f"ecb: {code} rate {value!r} on {when} is not a positive number")
        if seen.setdefault((when, code), rate) != rate:
            raise ParseError(f"ecb: two different {code} rates on {when}")
    if not seen:
        raise ParseError("ecb: the file holds no rate")
    frame = pl.DataFrame(
        [(when, code, rate) for (when, code), rate in seen.items()],
        schema=RATES_SCHEMA, orient="row")
    return frame.sort("rate_date", "currency")
