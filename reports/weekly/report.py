"""The weekly markdown report: every number from the warehouse, as of one fixed time.

`build_report(con, as_of=..., week=...)` is pure apart from reading the connection and
writing the chart PNGs into `chart_dir`; the caller passes the clock in (`as_of`), so a fixed
warehouse always gives the same report.

`currency` (e.g. 'EUR'): every amount in that currency at the ECB reference rate of its own
day (warehouse.fx): the report's day for what stands now (and the market's moves, as
`market-moves --currency`), the week-ago day for offerings that vanished, each chart point
its own day (a day without a rate is held out of the chart, and said). The report's own day
without a rate: NoRateError, no report. Its files are named for it (`2026-W47.EUR.md`, beside
the USD `2026-W47.md`, never over it).
"""

from __future__ import annotations

from dataclasses import dataclass, field
from datetime import UTC, date, datetime, timedelta
from pathlib import Path

import duckdb
import polars as pl

from contract.files import ensure_folder, write_text_atomic
from reports.charts import chart_series, plot_daily, series_models
from reports.markdown import STALE_MARK, STALE_NOTE, md_code, md_text, table
from reports.market.comparison import comparison_section
from reports.market.fit import fit_section
from reports.market.moves import week_moves
from reports.market.plans import plans_section
from reports.market.rankings import rankings_section
from reports.market.rent_vs_buy import rent_vs_buy_section
from reports.market.scenarios import Scenario, scenarios_section
from reports.market.stock import hard_to_get_section
from reports.market.tco import (
    load_assumptions,
    load_servers,
    rental_yardsticks,
    tco_rows,
    tco_section,
)
from reports.market.value import value_section
from reports.market.values import market_of, market_section
from reports.queries import reference_table, refresh_runs
from reports.weekly.changes import changes_section
from schemas.fx import MAX_RATE_AGE_DAYS, no_rate_reason
from schemas.tiers import Tier
from warehouse.fx import Unit, in_currency, unit_of
from warehouse.semantic import Prices, at_moment
from warehouse.semantic_history import cheapest_history

__all__ = ["HISTORY_DAYS", "NoRateError", "WeeklyReport", "artifact_key", "build_report",
           "file_stem", "report_as_of", "unit_of_report", "week_label", "write_report"]

HISTORY_DAYS = 90


class NoRateError(ValueError):
    """The report's day has no rate for the currency asked for (within 7 days)."""


@dataclass(frozen=True, slots=True)
class WeeklyReport:
    week: str
    as_of: datetime
    markdown: str
    charts: list[Path] = field(default_factory=list)
    currency: str = "USD"


def file_stem(week: str, currency: str | None = None) -> str:
    """The report's file name without its extension: 2026-W47 (USD), 2026-W47.EUR."""
    return week if currency in (None, "USD") else f"{week}.{currency}"


def unit_of_report(con: duckdb.DuckDBPyConnection, currency: str | None, day: date, *,
                   what: str = "report") -> Unit:
    """The money of the report's (or board's: `what`) `day`; NoRateError (one line) when it
    has no rate."""
    unit = unit_of(con, currency, day)
    if unit.usd_per_unit is None:
        raise NoRateError(f"no {what} in {currency}: {unit.note} (`gpuprices backfill ecb` "
                          "stores the ECB rates)")
    return unit


def _chart_points(con: duckdb.DuckDBPyConnection, series: pl.DataFrame, unit: Unit
                  ) -> tuple[pl.DataFrame, list[date]]:
    """The chart's points in `unit`, each at its own day's rate, and the days held out for
    want of a rate."""
    if not unit.converting or series.height == 0:
        return series, []
    converted = in_currency(con, series, unit.currency, day_column="day")
    held = converted.filter(pl.col("fx_rate").is_null())["day"].unique().sort().to_list()
    return converted.filter(pl.col("fx_rate").is_not_null()).select(series.columns), held


def week_label(moment: datetime) -> str:
    year, week, _ = moment.isocalendar()
    return f"{year}-W{week:02d}"


def report_as_of(week: str | None, now: datetime) -> tuple[str, datetime]:
    """(label, as-of time): the end of ISO week `week` (or `now` when the week is not over)."""
    if week is None:
        return week_label(now), now
    try:
        monday = datetime.strptime(f"{week}-1", "%G-W%V-%u").replace(tzinfo=UTC)
    except ValueError:
        raise ValueError(f"week must look like 2026-W47, not {week!r}") from None
    end = monday + timedelta(days=7) - timedelta(microseconds=1)
    return week_label(monday), min(end, now)


def _when(value: datetime | None) -> str:
    return value.astimezone(UTC).strftime("%Y-%m-%d %H:%M UTC") if value else "never"


def freshness_section(freshness: pl.DataFrame, prices: pl.DataFrame) -> str:
    """`freshness`: freshness_at the report's as-of time; `prices`: the offers standing then."""
    parts = ["## 1. Data freshness", ""]
    if freshness.height == 0:
        return "\n".join([*parts, "No sources are registered: the warehouse has never been "
                          "refreshed. Run `gpuprices refresh` first.", ""])
    parts.append(table(
        ["source", "provider", "kind", "last success", "prices as of", "rows", "last run",
         "stale"],
        [[r["source"], r["provider"], r["kind"], _when(r["last_success_at"]),
          _when(r["prices_as_of"]), r["rows"], r["last_status"],
          f"yes {STALE_MARK}" if r["stale"] else "no"] for r in freshness.to_dicts()],
        [False, False, False, False, False, True, False, False],
    ))
    parts.append("")
    missing = freshness.filter(pl.col("last_success_at").is_null())["source"].to_list()
    if missing:
        parts += [f"**Missing:** no successful refresh yet for {', '.join(missing)}.", ""]
    providers = prices["provider"].unique().sort().to_list()
    if prices.height == 0:
        parts += ["**Missing:** the warehouse holds no prices at this time, so the sections "
                  "below are empty. Run `gpuprices refresh` (or `make demo`).", ""]
    elif len(providers) == 1:
        parts += [f"**Limited:** only one provider has prices ({md_text(providers[0])}), so the "
                  "comparisons below cannot compare providers.", ""]
    return "\n".join(parts)


def replay_note(con: duckdb.DuckDBPyConnection, run_ids: list[str]) -> str:
    """A plain warning when the prices shown come from offline replays, not live scraping."""
    runs = refresh_runs(con, run_ids) if run_ids else None
    if runs is None or not runs.filter(pl.col("offline")).height:
        return ""
    history = runs.filter(pl.col("flow") == "backfill").height
    text = ("**Demo data:** the prices in this report are a replay of snapshots bundled with "
            "gpuprices (`scrapers/examples/`), not live prices: `refresh --offline` stamps each "
            "source's bundled example with the time it ran")
    if history:
        text += (", and `backfill examples` replayed older dated snapshots one week apart "
                 "before it (their real as-of dates and where their values come from are in "
                 "`scrapers/examples/HISTORY.toml` and in each run's note)")
    return text + "."


def footer(con: duckdb.DuckDBPyConnection, prices: Prices, as_of: datetime) -> str:
    run_ids = prices.run_ids()
    lines = ["---", "",
             f"Prices as they stood at {_when(as_of)} ({prices.offers().height} offerings). "
             "Every figure above is computed from the warehouse at that time."]
    if run_ids:
        runs = refresh_runs(con, run_ids)
        described = [f"{md_code(r['run_id'])} ({r['flow']}, {_when(r['finished_at'])}"
                     f"{', offline' if r['offline'] else ''})" for r in runs.to_dicts()]
        known = set(runs["run_id"].to_list())
        described += [md_code(run_id) for run_id in run_ids if run_id not in known]
        lines.append(f"Runs that stored these prices: {', '.join(described)}.")
    else:
        lines.append("No run has stored prices yet.")
    return "\n".join(lines) + "\n"


def build_report(
    con: duckdb.DuckDBPyConnection, *, as_of: datetime, week: str | None = None,
    chart_dir: Path | None = None, tiers: list[Tier] | None = None,
    scenarios: list[Scenario] | None = None, currency: str | None = None,
    prices: Prices | None = None,
) -> WeeklyReport:
    """`prices`: the prices at `as_of` when the caller has them (the board shares them: each
    set of offers is read once for both)."""
    week = week or week_label(as_of)
    prices = at_moment(prices, con, as_of)
    week_ago = as_of - timedelta(days=7)
    old_prices = Prices(con, week_ago)
    unit = unit_of_report(con, currency, prices.day)
    old_unit = unit_of(con, currency, old_prices.day)
    freshness = prices.freshness()
    plans = reference_table(con, "plan")
    ownership = reference_table(con, "gpu_ownership")
    market_now, _ = market_of(con, prices.day, segment=None, now=as_of)
    yardsticks = rental_yardsticks(prices, market_now)
    assumptions = load_assumptions()

    charts: list[Path] = []
    held_days: list[date] = []
    until: date = prices.day
    since = until - timedelta(days=HISTORY_DAYS)
    if chart_dir is not None:
        models = [m for group in series_models().values() for m in group]
        history = cheapest_history(con, models, since=since, until=until, per_model=True,
                                   now=as_of)
        points, held_days = _chart_points(con, chart_series(history), unit)
        path = plot_daily(points, chart_dir / f"{file_stem(week, currency)}-cheapest.png",
                          title=unit.label(f"Cheapest $/GPU-hour per day (up to {HISTORY_DAYS} "
                                           f"days to {until})")
                          + (", each day at its ECB rate" if unit.converting else ""),
                          since=since, until=until, ylabel=unit.label("$ / GPU-hour"))
        charts = [path] if path else []

    replayed = replay_note(con, sorted({*prices.run_ids(), *old_prices.run_ids()}))
    money_note = (f"Prices in {unit.currency} per GPU-hour unless stated: {unit.currency} at "
                  f"the ECB rate of each day. {unit.describe()} {_old_note(old_unit)} "
                  f"{_held_note(held_days, unit.currency)}" if unit.converting
                  else "Prices in USD per GPU-hour unless stated.")
    sections = [
        f"# GPU prices: week {week}" + (f" (in {unit.currency})" if unit.converting else ""),
        "",
        f"As of {_when(as_of)}. {money_note.strip()} {STALE_NOTE}",
        "",
        *([replayed, ""] if replayed else []),
        freshness_section(freshness, prices.offers()),
        comparison_section(prices, unit),
        rankings_section(prices, tiers, unit),
        changes_section(old_prices, prices, week_moves(con, prices.day),
                        week_ago_label=_when(week_ago), chart_files=[p.name for p in charts],
                        units=(old_unit, unit)),
        scenarios_section(prices, plans, scenarios, unit),
        fit_section(prices, unit),
        rent_vs_buy_section(ownership, prices, tco=tco_section(
            tco_rows(load_servers(), assumptions, *yardsticks), assumptions, unit), unit=unit),
        plans_section(plans, unit),
        market_section(market_now, unit),
        value_section(prices, unit=unit),
        hard_to_get_section(con, as_of),
        footer(con, prices, as_of),
    ]
    return WeeklyReport(week=week, as_of=as_of, markdown="\n".join(sections), charts=charts,
                        currency=unit.currency)


def _old_note(unit: Unit) -> str:
    """The rate of the week-ago day (the vanished offerings' prices)."""
    if unit.usd_per_unit is None:
        return f"Vanished offerings: no amount ({unit.note})."
    return (f"Vanished offerings at the rate of {unit.day}: 1 {unit.currency} = "
            f"{unit.usd_per_unit:.6g} USD (of {unit.rate_date}).")


def _held_note(days: list[date], currency: str) -> str:
    """The chart's days without a rate (held out, never guessed)."""
    if not days:
        return ""
    span = f"{days[0]}" if len(days) == 1 else f"{days[0]} to {days[-1]}"
    return (f"Held out of the chart: {len(days)} day(s), {span}, with no {currency} rate "
            f"within {MAX_RATE_AGE_DAYS} days of each ({no_rate_reason(currency, days[0])}).")


def write_report(report: WeeklyReport, out_dir: Path) -> Path:
    """Write `<week>.md` (or `<week>.<CUR>.md`) into out_dir (charts were written there by
    build_report)."""
    ensure_folder(out_dir)
    return write_text_atomic(out_dir / f"{file_stem(report.week, report.currency)}.md",
                             report.markdown)


def artifact_key(week: str) -> str:
    """Prefect artifact keys allow lowercase letters, digits and dashes only."""
    return "weekly-report-" + "".join(c if c.isalnum() else "-" for c in week.lower())
