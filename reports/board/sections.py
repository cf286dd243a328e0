"""The sections of a board page, as HTML strings.

They reuse the weekly report's frames (comparison cells, tier rankings, scenarios, VRAM fit,
rent vs buy, freshness), so the board shows the report's numbers as sortable tables.
"""

from __future__ import annotations

from collections.abc import Sequence
from datetime import UTC, date, datetime
from html import escape
from typing import Any

import duckdb
import polars as pl

from reports.board.data import DOT_PRICING, WeekData, dot_points
from reports.board.html import Col, details, sortable_table
from reports.board.svg import Dot, LinePoint, Series, dot_plot, slug, step_chart
from reports.comparison import catalog_order, cheapest_cells
from reports.fit import fit_matrix
from reports.markdown import STALE_MARK, money, number, pct
from reports.queries import INTERRUPTIBLE_PRICING, STEADY_PRICING, reference_table
from reports.rankings import top_per_tier
from reports.rent_vs_buy import USD_PER_KWH, break_even
from reports.scenarios import Scenario, evaluate, load_scenarios

__all__ = ["dots_section", "freshness_banner", "freshness_section", "history_section",
           "tables_section", "tiles_section", "when"]

SEGMENT_ORDER = ("hyperscaler", "neocloud", "marketplace", "serverless", "other")


def when(value: datetime | None) -> str:
    return value.astimezone(UTC).strftime("%Y-%m-%d %H:%M UTC") if value else "never"


def _count(n: int, noun: str) -> str:
    return f"{n} {noun}{'' if n == 1 else 's'}"


def _usd(header: str, key: str, stale_key: str | None = None, digits: int = 2) -> Col:
    return Col(header, lambda r: money(r[key], bool(stale_key and r.get(stale_key)), digits),
               lambda r: r[key], numeric=True)


def _text(header: str, key: str) -> Col:
    return Col(header, lambda r: r[key])


def _num(header: str, key: str, places: int = 1) -> Col:
    return Col(header, lambda r: number(r[key], places), lambda r: r[key], numeric=True)


# ---- sections ----------------------------------------------------------------------------

def freshness_banner(freshness: pl.DataFrame) -> str:
    if freshness.height == 0:
        return ('<p class="banner bad">No sources registered: run <code>gpuprices refresh</code>.'
                "</p>")
    failed = freshness.filter(pl.col("last_status").is_in(["failed", "rejected"]))
    stale = freshness.filter(pl.col("stale"))
    parts = []
    if stale.height:
        parts.append(f'<p class="banner warn" id="stale-sources"><strong>{stale.height} stale '
                     f'source{"s" if stale.height > 1 else ""}</strong> (no successful refresh in '
                     f'48 h; their prices are marked {STALE_MARK}): '
                     f'{escape(", ".join(stale["source"].to_list()))}</p>')
    if failed.height:
        parts.append(f'<p class="banner bad" id="failed-sources"><strong>{failed.height} '
                     f'source{"s" if failed.height > 1 else ""} failed</strong> on the last run: '
                     + escape("; ".join(f"{r['source']} ({r['last_status']}: "
                                        f"{(r['last_error'] or '')[:80]})"
                                        for r in failed.to_dicts())) + "</p>")
    if not parts:
        parts.append(f'<p class="banner ok">All {freshness.height} sources fresh: each had a '
                     "successful refresh within 48 h.</p>")
    return "".join(parts)


def tiles_section(data: WeekData) -> str:
    cards = []
    rows = data.tiles.to_dicts()
    for r in rows:
        change = r["pct_change"]
        if r["old_usd"] is None:
            move = '<span class="move flat">new: no price 7 days ago</span>'
        elif not change:
            move = '<span class="move flat">± 0% vs 7 days ago</span>'
        else:
            arrow, css = ("▼", "down") if change < 0 else ("▲", "up")
            move = (f'<span class="move {css}">{arrow} {abs(change):.1f}% vs 7 days ago '
                    f"({escape(money(r['old_usd']))})</span>")
        who = f"cheapest at {escape(r['provider'])} · " if r["provider"] else ""
        cards.append(
            f'<article class="tile" data-gpu="{escape(r["gpu_model"])}" '
            f'data-usd="{r["usd_per_gpu_hour"]!r}"><h3>{escape(r["gpu_model"])}</h3>'
            f'<div class="price">{escape(money(r["usd_per_gpu_hour"], r["stale"]))}'
            f"<small> /GPU-h</small></div>{move}"
            f'<div class="sub">{who}{_count(r["providers"] or 0, "provider")}</div></article>')
    table = sortable_table([
        _text("GPU", "gpu_model"), _usd("$/GPU-h", "usd_per_gpu_hour", "stale"),
        _usd("7 days ago", "old_usd"), Col("change", lambda r: pct(r["pct_change"]),
                             lambda r: r["pct_change"], numeric=True),
        _text("cheapest at", "provider"), _num("providers", "providers"),
        _text("basis", "basis")], rows, table_id="tiles-table")
    return (
        '<section id="tiles"><h2>Market price per GPU</h2>'
        f'<p class="note">The {len(rows)} GPUs offered by the most providers. Price = the '
        "market price (median of the providers' medians, reports/market.toml) where it is "
        "published, else the cheapest on-demand offer, named on the tile (the table view "
        "says why the market price was withheld); $/GPU-hour, whole offering, host included. "
        "The move compares the same measure 7 days before the as-of time.</p>"
        f'<div class="tiles">{"".join(cards) or "<p>No prices.</p>"}</div>'
        f"{details('Table view', table)}</section>")


def _segment_legend(segments: Sequence[str]) -> str:
    return ('<ul class="legend">' + "".join(
        f'<li><span class="sw s-{slug(s)}"></span>{escape(s)}</li>' for s in segments)
        + "</ul>")


def history_section(data: WeekData) -> str:
    history = data.history
    if history.height == 0:
        return ('<section id="history"><h2>Price history</h2><p class="note">No daily prices '
                "stored yet.</p></section>")
    start: date = history["day"].min()  # type: ignore[assignment]
    end = data.as_of.date()
    segments = [s for s in SEGMENT_ORDER if s in set(history["segment"].to_list())]
    figures = []
    for model in data.gpus:
        rows = history.filter(pl.col("gpu_model") == model)
        series = [Series(s, [LinePoint(r["day"], r["usd_per_gpu_hour"],
                                       f"{r['provider']} {r['offering']}", r["gap_before"])
                             for r in rows.filter(pl.col("segment") == s).to_dicts()])
                  for s in segments]
        title = f"{model}: cheapest $/GPU-hour per segment"
        table = sortable_table([
            Col("date", lambda r: r["day"].isoformat()), _text("segment", "segment"),
            _usd("$/GPU-h", "usd_per_gpu_hour"), _text("provider", "provider"),
            _text("offering", "offering"), _text("source", "source")],
            rows.sort("day", "segment", descending=[True, False]).to_dicts())
        figures.append(
            f'<figure data-gpu="{escape(model)}"><h3>{escape(model)}</h3>'
            f"{step_chart(series, start=start, end=end, title=title)}"
            f"<figcaption>{rows.height} price points (each a change of a segment's cheapest "
            f"price), stored from {rows['day'].min()} to {rows['day'].max()}</figcaption>"
            f"{details('Table view: points and their sources', table)}"
            "</figure>")
    return (
        '<section id="history"><h2>Price history</h2>'
        '<p class="note">Cheapest whole-offering price per provider segment '
        f"({', '.join(STEADY_PRICING)}), over the whole stored history: daily for the last "
        "year, one point per week (its last observed day) before that; a line steps at each "
        "change. Segments: schemas/provider_segments.csv. Hover a line end for its source; "
        "each chart's table view lists every point with the provider, offering and source "
        f"it comes from.</p>{_segment_legend(segments)}"
        f'<div class="grid2">{"".join(figures)}</div></section>')


def dots_section(data: WeekData) -> str:
    groups = list(dict.fromkeys(DOT_PRICING.values()))
    options, plots = [], []
    # Open on the GPU with the most providers: the widest spread to look at.
    ranked = data.tiles.sort("providers", descending=True, nulls_last=True)["gpu_model"]
    first = ranked[0] if len(ranked) else None
    for model in data.gpus:
        points = dot_points(data.prices, model)
        if points.height == 0:
            continue
        dots = [Dot(r["provider"], r["group"], r["usd_per_gpu_hour"],
                    f"{r['offers']} offer(s), e.g. {r['example']}") for r in points.to_dicts()]
        table = sortable_table([
            _text("provider", "provider"), _text("segment", "segment"),
            _text("pricing", "group"), _usd("$/GPU-h", "usd_per_gpu_hour", "stale"),
            _num("offers", "offers"), _text("example offering (region)", "example")],
            points.sort("usd_per_gpu_hour").to_dicts())
        options.append(f'<option value="{escape(model)}"{" selected" if model == first else ""}'
                       f">{escape(model)}</option>")
        plots.append(
            f'<figure class="dotplot{" on" if model == first else ""}" data-gpu="{escape(model)}">'
            f"<h3>{escape(model)}: every provider's current price</h3>"
            f"{dot_plot(dots, groups=groups, title=f'{model} prices by provider')}"
            f"{details('Table view', table)}</figure>")
    if not plots:
        return ""
    legend = ('<ul class="legend">' + "".join(
        f'<li><span class="sw g-{slug(g)}"></span>{escape(g)}</li>' for g in groups) + "</ul>")
    return (
        '<section id="spread"><h2>Spread: every provider\'s price for one GPU</h2>'
        '<p class="note">One marker per provider, pricing and price (offers at the same price '
        "share a marker; hover it for the offering). GPU: "
        f'<select class="picker" data-target=".dotplot" aria-label="GPU">{"".join(options)}'
        f"</select></p>{legend}{''.join(plots)}</section>")


def _matrix(cells: pl.DataFrame, with_pricing: bool) -> str:
    if cells.height == 0:
        return '<p class="empty">No prices.</p>'
    providers = sorted(cells["provider"].unique().to_list())
    by_cell = {(r["gpu_model"], r["provider"]): r for r in cells.to_dicts()}
    rows: list[dict[str, Any]] = [
        {"gpu_model": m, **{p: by_cell.get((m, p)) for p in providers}}
        for m in catalog_order(cells["gpu_model"].unique().to_list())]

    def show(provider: str) -> Col:
        def text(r: dict[str, Any]) -> str | None:
            cell = r[provider]
            if cell is None:
                return None
            shown = money(cell["usd_per_gpu_hour"], cell["stale"])
            return f"{shown} {cell['pricing']}" if with_pricing else shown
        return Col(provider, text, lambda r: r[provider]["usd_per_gpu_hour"] if r[provider]
                   else None, numeric=True)

    return sortable_table([_text("GPU", "gpu_model"), *(show(p) for p in providers)], rows)


def tables_section(con: duckdb.DuckDBPyConnection, data: WeekData,
                   scenarios: list[Scenario] | None) -> str:
    prices = data.prices
    plans = reference_table(con, "plan")
    ownership = reference_table(con, "gpu_ownership")
    parts = ['<div class="tables"><h2>Tables</h2><p class="note">Click a column header to sort. '
             f"{STALE_MARK} = price from a stale source.</p>"]
    parts.append('<section id="matrix"><h3>Comparison matrix: cheapest on-demand $/GPU-hour'
                 "</h3>" + _matrix(cheapest_cells(prices, ("on_demand",)), False) + "</section>")
    parts.append('<section id="matrix-cheap"><h3>Spot, interruptible and community</h3>'
                 + _matrix(cheapest_cells(prices, (*INTERRUPTIBLE_PRICING, "community")), True)
                 + "</section>")
    tiers = top_per_tier(prices)
    parts.append(
        '<section id="tiers"><h3>Cheapest GPU per VRAM tier (top 5)</h3>' + sortable_table([
            _text("tier", "tier"), _num("#", "rank"), _text("GPU", "gpu_model"),
            _text("provider", "provider"), _text("offering", "offering"),
            _text("region", "region"), _text("pricing", "pricing"),
            Col("$/GPU-h", lambda r: money(r["usd_per_gpu_hour"], r["stale"]),
                lambda r: r["usd_per_gpu_hour"], numeric=True),
            Col("$/GB-VRAM-h", lambda r: money(r["usd_per_gb_vram_hour"], r["stale"], 4),
                lambda r: r["usd_per_gb_vram_hour"], numeric=True),
            Col("available", lambda r: {True: "yes", False: "no"}.get(r["available"], "?"))],
            tiers.to_dicts(), table_id="tiers-table") + "</section>")
    scenario_cols = [
        _text("platform", "platform"), _text("GPU", "gpu_model"), _text("offering", "offering"),
        _text("pricing", "pricing"), _num("hours", "hours", 2),
        Col("$/GPU-h", lambda r: money(r["usd_per_gpu_hour"], r["price_status"] == "stale"),
            lambda r: r["usd_per_gpu_hour"], numeric=True),
        Col("cost $", lambda r: money(r["cost_usd"], r["price_status"] == "stale"),
            lambda r: r["cost_usd"], numeric=True),
        Col("savings vs dearest", lambda r: None if r["savings_pct"] is None
            else f"{r['savings_pct']:.0f}%", lambda r: r["savings_pct"], numeric=True),
        _text("price", "price_status"), _text("note", "note")]
    parts.append('<section id="scenarios"><h3>Cost scenarios</h3><p class="note">cost = '
                 "GPU-hours × $/GPU-hour of each platform's cheapest matching offer "
                 "(reports/scenarios.toml).</p>")
    for scenario in scenarios or load_scenarios():
        rows = evaluate(prices, scenario, plans)
        parts.append(sortable_table(scenario_cols, rows.to_dicts(), caption=scenario.title))
    parts.append("</section>")
    fit = fit_matrix(prices)
    parts.append(
        '<section id="fit"><h3>VRAM fit: cheapest live offer that holds the model</h3>'
        + sortable_table([
            Col("model", lambda r: f"{number(r['params_b'])}B", lambda r: r["params_b"],
                numeric=True), _text("method", "method"), _num("VRAM needed GB",
                                                               "vram_needed_gb"),
            _text("provider", "provider"), _text("offering", "offering"),
            Col("GPUs", lambda r: f"{number(r['gpu_count'])}× {r['gpu_model']}"
                if r["gpu_model"] else None, lambda r: r["gpu_count"], numeric=True),
            _num("total VRAM GB", "total_vram_gb"), _usd("$/hour", "usd_per_hour")],
            fit.to_dicts(), table_id="fit-table") + "</section>")
    if ownership is not None and ownership.height:
        parts.append(
            '<section id="rent-vs-buy"><h3>Rent vs buy</h3><p class="note">Break-even hours = '
            "purchase price / (cheapest rental $/GPU-hour − power $/hour); power at "
            f"${USD_PER_KWH:.2f}/kWh; months at 8 h of use a day.</p>" + sortable_table([
                _text("GPU", "gpu_model"), _usd("purchase", "purchase_usd", digits=0),
                _num("power W", "power_watts"),
                _usd("power $/h", "power_usd_per_hour", digits=3),
                _usd("cheapest rental $/GPU-h", "rent_usd_per_hour", "rent_stale"),
                _text("rental at", "rent_provider"),
                _num("break-even hours", "break_even_hours", 0),
                _num("months at 8 h/day", "break_even_months_at_8h_day")],
                break_even(ownership, prices).to_dicts(), table_id="rent-table")
            + "</section>")
    parts.append("</div>")
    return "".join(parts)


def freshness_section(freshness: pl.DataFrame) -> str:
    table = sortable_table([
        _text("source", "source"), _text("provider", "provider"), _text("kind", "kind"),
        Col("last success", lambda r: when(r["last_success_at"])),
        Col("prices as of", lambda r: when(r["prices_as_of"])), _num("rows", "rows"),
        _text("last run", "last_status"),
        Col("stale", lambda r: f"yes {STALE_MARK}" if r["stale"] else "no"),
        Col("last error", lambda r: (r["last_error"] or "")[:120] or None)],
        freshness.to_dicts(), table_id="freshness-table")
    return f'<section id="freshness"><h2>Data freshness</h2>{table}</section>'
