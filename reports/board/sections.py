"""What each section of a board page shows, as the values its template (templates/week.html.j2)
renders: text, numbers and table models, never HTML (the SVG charts of reports.board.svg
aside). They reuse the report's frames (comparison cells, tier rankings, scenarios, VRAM fit,
rent vs buy, freshness), so the board shows the report's numbers as sortable tables.

Amounts stay USD in the frames and are printed in the page's unit (`WeekData.unit`: USD, or
another currency at the ECB rate of the page's day; the history lines come converted at each
point's own day): the cell text, its sort value, the headings ($/GPU-h -> EUR/GPU-h).
"""

from __future__ import annotations

from collections.abc import Sequence
from datetime import UTC, date, datetime
from typing import Any

import duckdb
import polars as pl
from markupsafe import Markup

from contract import STALE_AFTER_H
from reports.board.data import DOT_PRICING, WeekData, dot_points
from reports.board.html import Col, Table, sortable_table
from reports.board.svg import Dot, LinePoint, Series, dot_plot, step_chart
from reports.markdown import STALE_MARK, money, number, pct
from reports.market.comparison import INTERRUPTIBLE_PRICING, catalog_order, cheapest_cells
from reports.market.fit import fit_matrix
from reports.market.rankings import stock_word, top_per_tier
from reports.market.rent_vs_buy import USD_PER_KWH, break_even
from reports.market.scenarios import Scenario, evaluate, load_scenarios, plan_note
from reports.queries import reference_table
from schemas.fx import MAX_RATE_AGE_DAYS, no_rate_reason
from warehouse.fx import USD, Unit

__all__ = ["held_note", "page_context", "when"]

SEGMENT_ORDER = ("hyperscaler", "neocloud", "marketplace", "serverless", "unclassified")


def when(value: datetime | None) -> str:
    return value.astimezone(UTC).strftime("%Y-%m-%d %H:%M UTC") if value else "never"


def _count(n: int, noun: str) -> str:
    return f"{n} {noun}{'' if n == 1 else 's'}"


def _usd(header: str, key: str, digits: int = 2, unit: Unit = USD) -> Col:
    """An amount column: the row's USD `key` shown and sorted in `unit`, named in it."""
    return Col(unit.label(header), lambda r: money(r[key], False, digits, unit),
               lambda r: unit.amount(r[key]), numeric=True)


def _text(header: str, key: str) -> Col:
    return Col(header, lambda r: r[key])


def _num(header: str, key: str, places: int = 1) -> Col:
    return Col(header, lambda r: number(r[key], places), lambda r: r[key], numeric=True)


# ---- sections ----------------------------------------------------------------------------

def banner(freshness: pl.DataFrame) -> dict[str, Any]:
    failed = freshness.filter(pl.col("last_status").is_in(["failed", "rejected"]))
    return {"empty": freshness.height == 0, "total": freshness.height,
            "stale": freshness.filter(pl.col("stale"))["source"].to_list(),
            "failed": [f"{r['source']} ({r['last_status']}: {(r['last_error'] or '')[:80]})"
                       for r in failed.to_dicts()]}


def _move(r: dict[str, Any], unit: Unit) -> tuple[str, str]:
    """(css class, text) of a tile's move: the market's matched move, or why there is none
    (the old price at the page's rate, as `market-moves --currency` gives it)."""
    if r["matched"] is None:
        return "flat", "new: no market price 7 days ago"
    if r["pct_change"] is None:
        return "flat", f"move withheld: {_count(r['matched'], 'matched provider')}"
    if not r["pct_change"]:
        return "flat", "± 0% vs 7 days ago"
    arrow, css = ("▼", "down") if r["pct_change"] < 0 else ("▲", "up")
    old = money(r["old_usd"], unit=unit)
    return css, f"{arrow} {abs(r['pct_change']):.1f}% vs 7 days ago ({old})"


def tiles(data: WeekData) -> tuple[list[dict[str, Any]], Table]:
    rows = data.tiles.to_dicts()
    unit = data.unit
    cards = []
    for r in rows:
        css, text = _move(r, unit)
        amount = unit.amount(r["usd_per_gpu_hour"]) if unit.converting else None
        cards.append({"gpu": r["gpu_model"], "usd": repr(r["usd_per_gpu_hour"]),
                      "amount": None if amount is None else repr(amount),
                      "price": money(r["usd_per_gpu_hour"], unit=unit), "move": text,
                      "move_css": css, "provider": r["provider"],
                      "providers": _count(r["providers"] or 0, "provider")})
    table = sortable_table([
        _text("GPU", "gpu_model"), _usd("$/GPU-h", "usd_per_gpu_hour", unit=unit),
        _usd("7 days ago", "old_usd", unit=unit), Col("change", lambda r: pct(r["pct_change"]),
                                           lambda r: r["pct_change"], numeric=True),
        _num("matched providers", "matched"), _text("cheapest at", "provider"),
        _num("providers", "providers"), _text("basis", "basis"),
        _text("move withheld", "move_withheld")], rows, table_id="tiles-table")
    return cards, table


def held_note(days: Sequence[date], currency: str) -> str:
    """The chart days left out for want of a rate (never guessed), counted ('' for none)."""
    if not days:
        return ""
    span = f"{days[0]}" if len(days) == 1 else f"{days[0]} to {days[-1]}"
    return (f"Left out of the charts: {_count(len(days), 'day')} ({span}) with no {currency} "
            f"rate within {MAX_RATE_AGE_DAYS} days of each "
            f"({no_rate_reason(currency, days[0])}).")


def history(data: WeekData) -> dict[str, Any]:
    """The history lines, each point already in the page's currency at its own day's rate
    (reports.board.data.price_history_in)."""
    frame = data.history
    unit = data.unit
    # the points are converted already: shown as they are, named in the page's currency
    shown = unit.as_printed()
    held = held_note(data.held_days, unit.currency)
    if frame.height == 0:
        return {"figures": [], "segments": [], "held": held}
    start: date = frame["day"].min()  # type: ignore[assignment]
    end = data.as_of.date()
    present = set(frame["segment"].to_list())
    segments = [s for s in SEGMENT_ORDER if s in present]
    figures = []
    for model in data.gpus:
        rows = frame.filter(pl.col("gpu_model") == model)
        series = [Series(s, [LinePoint(r["day"], r["usd_per_gpu_hour"],
                                       f"{r['provider']} {r['offering']}", r["gap_before"])
                             for r in rows.filter(pl.col("segment") == s).to_dicts()])
                  for s in segments]
        table = sortable_table([
            Col("date", lambda r: r["day"].isoformat()), _text("segment", "segment"),
            _usd("$/GPU-h", "usd_per_gpu_hour", unit=shown), _text("provider", "provider"),
            _text("offering", "offering"), _text("source", "source")],
            rows.sort("day", "segment", descending=[True, False]).to_dicts())
        svg = step_chart(series, start=start, end=end, currency=unit.currency,
                         title=unit.label(f"{model}: cheapest $/GPU-hour per segment"))
        figures.append({"gpu": model, "svg": Markup(svg), "points": rows.height,
                        "first": rows["day"].min(), "last": rows["day"].max(), "table": table})
    return {"figures": figures, "segments": segments, "held": held}


def dots(data: WeekData) -> dict[str, Any]:
    unit = data.unit
    groups = list(dict.fromkeys(DOT_PRICING.values()))
    # Open on the GPU with the most providers: the widest spread to look at.
    ranked = data.tiles.sort("providers", descending=True, nulls_last=True)["gpu_model"]
    first = ranked[0] if len(ranked) else None
    plots = []
    every = dot_points(data.prices, data.gpus)
    for model in data.gpus:
        points = every[model]
        if points.height == 0:
            continue
        marks = [Dot(r["provider"], r["group"], unit.amount(r["usd_per_gpu_hour"]) or 0.0,
                     f"{r['offers']} offer(s), e.g. {r['example']}") for r in points.to_dicts()]
        table = sortable_table([
            _text("provider", "provider"), _text("segment", "segment"),
            _text("pricing", "group"), _usd("$/GPU-h", "usd_per_gpu_hour", unit=unit),
            _num("offers", "offers"), _text("example offering (region)", "example")],
            points.sort("usd_per_gpu_hour").to_dicts())
        svg = dot_plot(marks, groups=groups, title=f"{model} prices by provider",
                       currency=unit.currency)
        plots.append({"gpu": model, "on": model == first, "svg": Markup(svg),
                      "table": table})
    return {"plots": plots, "groups": groups}


def _matrix(cells: pl.DataFrame, with_pricing: bool, unit: Unit) -> Table:
    providers = sorted(cells["provider"].unique().to_list()) if cells.height else []
    by_cell = {(r["gpu_model"], r["provider"]): r for r in cells.to_dicts()}
    rows: list[dict[str, Any]] = [
        {"gpu_model": m, **{p: by_cell.get((m, p)) for p in providers}}
        for m in catalog_order(cells["gpu_model"].unique().to_list() if cells.height else [])]

    def show(provider: str) -> Col:
        def text(r: dict[str, Any]) -> str | None:
            cell = r[provider]
            if cell is None:
                return None
            shown = money(cell["usd_per_gpu_hour"], unit=unit)
            return f"{shown} {cell['pricing']}" if with_pricing else shown
        return Col(provider, text, lambda r: unit.amount(r[provider]["usd_per_gpu_hour"])
                   if r[provider] else None, numeric=True)

    return sortable_table([_text("GPU", "gpu_model"), *(show(p) for p in providers)], rows)


def tables(con: duckdb.DuckDBPyConnection, data: WeekData,
           scenarios: list[Scenario] | None) -> dict[str, Any]:
    prices, unit = data.prices, data.unit
    plans = reference_table(con, "plan")
    ownership = reference_table(con, "gpu_ownership")
    tier_rows = top_per_tier(prices)
    scenario_cols = [
        _text("platform", "platform"), _text("GPU", "gpu_model"), _text("offering", "offering"),
        _text("pricing", "pricing"), _num("hours", "hours", 2),
        _usd("$/GPU-h", "usd_per_gpu_hour", unit=unit), _usd("cost $", "cost_usd", unit=unit),
        Col("savings vs dearest", lambda r: None if r["savings_pct"] is None
            else f"{r['savings_pct']:.0f}%", lambda r: r["savings_pct"], numeric=True),
        _text("price", "price_status"),
        Col("note", lambda r: plan_note(r, unit) if r["note"] else None)]
    fit = fit_matrix(prices)
    rent = None
    if ownership is not None and ownership.height:
        rent = sortable_table([
            _text("GPU", "gpu_model"), _usd("purchase", "purchase_usd", 0, unit),
            _num("power W", "power_watts"), _usd("power $/h", "power_usd_per_hour", 3, unit),
            _usd("cheapest rental $/GPU-h", "rent_usd_per_hour", unit=unit),
            _text("rental at", "rent_provider"),
            _num("break-even hours", "break_even_hours", 0),
            _num("months at 8 h/day", "break_even_months_at_8h_day")],
            break_even(ownership, prices).to_dicts(), table_id="rent-table")
    return {
        "matrix": _matrix(cheapest_cells(prices), True, unit),
        "matrix_cheap": _matrix(cheapest_cells(prices, INTERRUPTIBLE_PRICING), True, unit),
        "tiers": sortable_table([
            _text("tier", "tier"), _num("#", "rank"), _text("GPU", "gpu_model"),
            _text("provider", "provider"), _text("offering", "offering"),
            _text("region", "region"), _text("pricing", "pricing"),
            _usd("$/GPU-h", "usd_per_gpu_hour", unit=unit),
            _usd("$/GB-VRAM-h", "usd_per_gb_vram_hour", 4, unit),
            Col("stock", lambda r: stock_word(r["stock"]))],
            tier_rows.to_dicts(), table_id="tiers-table"),
        "scenarios": [sortable_table(scenario_cols, evaluate(prices, s, plans).to_dicts(),
                                     caption=s.title) for s in scenarios or load_scenarios()],
        "fit": sortable_table([
            Col("model", lambda r: f"{number(r['params_b'])}B", lambda r: r["params_b"],
                numeric=True), _text("method", "method"),
            _num("VRAM needed GB", "vram_needed_gb"), _text("provider", "provider"),
            _text("offering", "offering"),
            Col("GPUs", lambda r: f"{number(r['gpu_count'])}× {r['gpu_model']}"
                if r["gpu_model"] else None, lambda r: r["gpu_count"], numeric=True),
            _num("total VRAM GB", "total_vram_gb"),
            _usd("$/hour", "price_usd_per_hour", unit=unit)],
            fit.to_dicts(), table_id="fit-table"),
        "rent": rent, "per_kwh": money(USD_PER_KWH, unit=unit),
    }


def freshness(frame: pl.DataFrame) -> Table:
    return sortable_table([
        _text("source", "source"), _text("provider", "provider"), _text("kind", "kind"),
        Col("last success", lambda r: when(r["last_success_at"])),
        Col("prices as of", lambda r: when(r["prices_as_of"])), _num("rows", "rows"),
        _text("last run", "last_status"),
        Col("stale", lambda r: f"yes {STALE_MARK}" if r["stale"] else "no"),
        Col("last error", lambda r: (r["last_error"] or "")[:120] or None)],
        frame.to_dicts(), table_id="freshness-table")


def page_context(con: duckdb.DuckDBPyConnection, data: WeekData, *, weeks: Sequence[str],
                 scenarios: list[Scenario] | None) -> dict[str, Any]:
    """Everything templates/week.html.j2 renders for one week."""
    cards, tiles_table = tiles(data)
    day = data.prices.day
    unit = data.unit
    return {
        "money": _money_context(unit),
        "banner": banner(data.freshness), "stale_hours": STALE_AFTER_H,
        "tiles": cards, "tiles_table": tiles_table,
        "day": day, "week_ago": date.fromordinal(day.toordinal() - 7),
        "pricing": ", ".join(data.prices.pricing),
        "history": history(data), "dots": dots(data), "tables": tables(con, data, scenarios),
        "freshness": freshness(data.freshness),
        "weeks": sorted(set(weeks) | {data.week}, reverse=True),
    }


def _money_context(unit: Unit) -> dict[str, Any]:
    """What the page says about its money: the unit, its labels, and the rate it used."""
    return {"converting": unit.converting, "currency": unit.currency,
            "per_gpu_hour": unit.label("$/GPU-hour"), "gpu_h": unit.label("$/GPU-h"),
            "rate": unit.describe()}
