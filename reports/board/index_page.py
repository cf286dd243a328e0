"""The board's index page (gpu-index.html): the values its template renders, read from the
published fixings only (warehouse.index.store.read_fixings), so the page shows the numbers
`gpuprices index` prints: per GPU the on-demand series of the last SERIES_DAYS days with its
band, panel size and method version, every withheld day with its reason, and the latest day's
term curve, segments and geographies.

In another currency (`currency`, e.g. EUR) each day's value and band are at the ECB rate of
that day (as `index --currency --date DAY` prints them); a published day without a rate is
left out of the page and counted (`held`). The index itself is fixed and stored in USD."""

from __future__ import annotations

from dataclasses import dataclass
from datetime import date, datetime, timedelta
from typing import Any

import duckdb
import polars as pl
from markupsafe import Markup

from reports.board.html import Col, Table, sortable_table
from reports.board.sections import held_note
from reports.board.svg import BandPoint, band_chart
from reports.index.files import IndexFiles
from reports.index.tables import INDEX_AMOUNTS, kind_label
from reports.markdown import money
from warehouse.fx import USD, Unit, in_currency, unit_of
from warehouse.index.store import read_fixings

__all__ = ["SERIES_DAYS", "WITHHELD_DAYS", "PageFixings", "in_unit", "index_page_context",
           "page_fixings"]

WITHHELD_DAYS = 90  # the withheld-days table covers this many days back
# The series (charts and their tables) cover this many days to the last fixing, so the page
# stays the same size as the index's history grows; the month files hold every day.
SERIES_DAYS = 365
CHART_GPUS = 12


def _usd(header: str, key: str, unit: Unit) -> Col:
    """An amount already in `unit`'s currency (converted per day), named in it."""
    return Col(header, lambda r: money(r[key], False, 4, unit), lambda r: r[key], numeric=True)


def _text(header: str, key: str) -> Col:
    return Col(header, lambda r: r[key])


def _int(header: str, key: str) -> Col:
    return Col(header, lambda r: r[key], lambda r: r[key], numeric=True)


def _band(unit: Unit) -> Col:
    def text(r: dict[str, Any]) -> str | None:
        if r["value"] is None:
            return None
        return f"{money(r['band_low'], False, 4, unit)}-{money(r['band_high'], False, 4, unit)}"
    return Col("band", text)


def _series_table(rows: list[dict[str, Any]], unit: Unit,
                  table_id: str | None = None) -> Table:
    return sortable_table([
        _text("day", "day"), _usd("index", "value", unit), _band(unit),
        _int("panel", "panel"), _int("carried", "carried"), _int("kept out", "flagged"),
        _text("method", "method_version"), _text("no index because", "withheld_reason")],
        rows, table_id=table_id)


def in_unit(con: duckdb.DuckDBPyConnection, fixings: pl.DataFrame, currency: str | None
            ) -> tuple[pl.DataFrame, list[date]]:
    """`fixings` with their values and bands in `currency`, each day at its own ECB rate, and
    the days left out: a published value whose day has no rate (withheld days stay, with
    their reason)."""
    if currency in (None, "USD"):
        return fixings, []
    marked = fixings.with_columns(pl.col("value").is_not_null().alias("_published"))
    converted = in_currency(con, marked, currency, day_column="day", columns=INDEX_AMOUNTS)
    no_rate = pl.col("fx_rate").is_null() & pl.col("_published")
    held = converted.filter(no_rate)["day"].unique().sort().to_list()
    return converted.filter(~no_rate).select(fixings.columns), held


_MAIN = (pl.col("kind") == "on_demand") & (pl.col("segment") == "all") & (pl.col("geo") == "all")


@dataclass(frozen=True, slots=True)
class PageFixings:
    main: pl.DataFrame  # the main series (on-demand, all segments and geographies) shown
    today: pl.DataFrame  # every fixing of the last day
    held: list[date]  # days left out for want of a rate (another currency)
    first_day: date | None  # the first fixing's day: the month files hold every day from it


def page_fixings(con: duckdb.DuckDBPyConnection, until: date, currency: str | None
                 ) -> PageFixings:
    """What the page shows of the fixings up to `until`: the main series over the last
    SERIES_DAYS days to the last fixing, every fixing of the last day, and the days held for
    want of a rate. In USD only those are read: every fixing of every day is ~1,470 rows a day
    at 14,000 offerings (half a million after a year of nightly fixings). In another currency
    every fixing is read, for the days held are those of any published value."""
    if currency not in (None, "USD"):
        fixings, held = in_unit(con, read_fixings(con, until=until), currency)
        if fixings.height == 0:
            return PageFixings(fixings, fixings, held, None)
        last: date = fixings["day"].max()  # type: ignore[assignment]
        shown = fixings.filter(_MAIN & (pl.col("day") >= _series_start(last)))
        return PageFixings(shown, fixings.filter(pl.col("day") == last), held,
                           fixings["day"].min())  # type: ignore[arg-type]
    row = con.execute("SELECT min(day), max(day) FROM index_fixing WHERE day <= $until",
                      {"until": until}).fetchone()
    first_day, last_day = row if row else (None, None)
    if last_day is None:
        none = read_fixings(con, days=[])
        return PageFixings(none, none, [], None)
    return PageFixings(read_fixings(con, since=_series_start(last_day), until=until,
                                    kind="on_demand", segment="all", geo="all"),
                       read_fixings(con, days=[last_day]), [], first_day)


def _series_start(last_day: date) -> date:
    return last_day - timedelta(days=SERIES_DAYS - 1)


def index_page_context(con: duckdb.DuckDBPyConnection, *, as_of: datetime,
                       files: IndexFiles | None, currency: str | None = None
                       ) -> dict[str, Any]:
    until = as_of.date()
    unit = unit_of(con, currency, until).as_printed() if currency not in (None, "USD") else USD
    page = page_fixings(con, until, currency)
    main, today = page.main, page.today
    money_note = {"converting": unit.converting, "currency": unit.currency,
                  "per_gpu_hour": unit.label("$/GPU-hour"),
                  "held": held_note(page.held, unit.currency)}
    if today.height == 0:
        return {"empty": True, "files": [], "figures": [], "money": money_note}
    last_day: date = today["day"].max()  # type: ignore[assignment]
    latest = main.filter(pl.col("day") == last_day)
    published = main.filter(pl.col("value").is_not_null())["gpu_model"].unique()
    order = (latest.filter(pl.col("gpu_model").is_in(published.implode()))
             .sort("panel", "gpu_model", descending=[True, False])["gpu_model"].to_list())
    order += sorted(set(published) - set(order))
    start: date = main["day"].min()  # type: ignore[assignment]
    figures = []
    for gpu in order[:CHART_GPUS]:
        rows = main.filter(pl.col("gpu_model") == gpu).sort("day").to_dicts()
        points = [BandPoint(r["day"], r["value"], r["band_low"], r["band_high"],
                            r["withheld_reason"] or f"panel {r['panel']}, {r['carried']} "
                            f"carried, method {r['method_version']}") for r in rows]
        now = rows[-1]
        figures.append({
            "gpu": gpu, "svg": Markup(band_chart(points, start=start, end=last_day,
                                                 title=f"{gpu}: on-demand index with its band",
                                                 currency=unit.currency)),
            "value": money(now["value"], False, 4, unit) if now["day"] == last_day else "–",
            "panel": now["panel"], "method": now["method_version"],
            "published": sum(r["value"] is not None for r in rows), "days": len(rows),
            "table": _series_table(list(reversed(rows)), unit)})
    withheld = main.filter(pl.col("value").is_null()
                           & (pl.col("day") > last_day - timedelta(days=WITHHELD_DAYS))
                           & pl.col("gpu_model").is_in(order)).sort("day", "gpu_model",
                                                                    descending=[True, False])
    today = today.with_columns(kind_label().alias("label"))
    curve = today.filter((pl.col("segment") == "all") & (pl.col("geo") == "all")
                         & pl.col("value").is_not_null())
    scoped = today.filter(((pl.col("segment") != "all") | (pl.col("geo") != "all"))
                          & pl.col("value").is_not_null() & (pl.col("kind") == "on_demand"))
    method = today.row(0, named=True)
    return {
        "empty": False, "money": money_note, "last_day": last_day.isoformat(),
        "method": method["method_version"],
        "params": method["params_digest"][:16], "figures": figures,
        "withheld_days": WITHHELD_DAYS, "series_days": SERIES_DAYS,
        # the page's series start after the first fixing: say where the earlier days are
        "older_from": (page.first_day.isoformat() if page.first_day is not None
                       and page.first_day < _series_start(last_day) else None),
        "withheld": sortable_table([_text("day", "day"), _text("GPU", "gpu_model"),
                                    _int("panel", "panel"),
                                    _text("no index because", "withheld_reason")],
                                   withheld.to_dicts(), table_id="index-withheld"),
        "curve": sortable_table([_text("GPU", "gpu_model"), _text("kind", "label"),
                                 _usd("index", "value", unit), _band(unit),
                                 _int("panel", "panel")],
                                curve.sort("gpu_model", "kind", "term_months").to_dicts(),
                                table_id="index-curve"),
        "scoped": sortable_table([_text("GPU", "gpu_model"), _text("segment", "segment"),
                                  _text("geography", "geo"), _usd("index", "value", unit),
                                  _band(unit), _int("panel", "panel")],
                                 scoped.sort("gpu_model", "segment", "geo").to_dicts(),
                                 table_id="index-scoped"),
        "files": [{"name": name, "sha256": digest}
                  for name, digest in (files.digests.items() if files else [])],
    }
