"""The questions gpuprices answers, as Python functions: the CLI, the MCP server and
`import gpuprices` call these and nothing else.

Each function opens the warehouse's read path (its newest read snapshot: it never waits for a
refresh and never writes), checks its inputs (gpuprices.inputs: the same ranges everywhere,
GPU names resolved by schemas.names), asks the report layer (which reads the semantic layer)
and returns a polars DataFrame. Bad input raises gpuprices.errors.InputError, a question with
no answer NoAnswer, an unreadable warehouse warehouse.errors.WarehouseError: one line each.

`warehouse`: the DuckDB file (default $GPUPRICES_WAREHOUSE, else data/gpu_prices.duckdb).
Money columns follow the one naming rule (docs/export.md): `<what>_usd_per_gpu_hour` or
`<what>_usd_per_hour`. `region` / `geo` (questions that rank or aggregate): only the offers
placed there (warehouse.place; a region as its provider names it, a geography of
schemas/regions.csv). `currency` (questions that return money, e.g. 'EUR'): the amounts at
the ECB reference rate of the day they show, their columns named for it (`..._eur_per_gpu_hour`)
with `fx_rate` (USD per unit), `fx_date` and `fx_note` (why a row has no amount).
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Iterator
from contextlib import closing, contextmanager
from dataclasses import dataclass
from datetime import UTC, date, datetime, time, timedelta
from pathlib import Path
from typing import TYPE_CHECKING, Any

from gpuprices import inputs
from gpuprices.errors import InputError, NoAnswer

if TYPE_CHECKING:
    import duckdb
    import polars as pl

    from warehouse.export import ExportResult
    from warehouse.frames import Rows
    from warehouse.place import Place
    from warehouse.semantic import Prices
    from warehouse.unit import Unit

__all__ = [
    "Availability", "Moves", "RentVsBuy", "availability", "changes", "cheapest", "cluster",
    "explain", "export", "fit", "history", "in_currency", "market", "market_moves", "query",
    "rent_vs_buy", "scenario", "sources", "summary", "unit_on", "value",
]

WarehousePath = str | Path | None
Names = str | Iterable[str] | None


def _path(warehouse: WarehousePath) -> Path:
    from contract.settings import load_settings

    return load_settings(warehouse=warehouse).warehouse


@contextmanager
def connection(warehouse: WarehousePath = None) -> Iterator[duckdb.DuckDBPyConnection]:
    """The warehouse's read path opened read-only for one question (no other file can be
    read through it); WarehouseError, one line, when it cannot be opened or read."""
    from warehouse.connection import reading

    with reading(_path(warehouse)) as con:
        yield con


@contextmanager
def prices_at(warehouse: WarehousePath = None, pricing: Names = None,
              as_of: datetime | None = None, place: Place | None = None,
              gpu_models: list[str] | None = None) -> Iterator[Prices]:
    """The prices as they stand now (or at `as_of`) in the pricing set and place asked for
    (`gpu_models`: of those models alone, for a question about them)."""
    from warehouse.place import EVERYWHERE
    from warehouse.semantic import Prices

    chosen = inputs.pricing_kinds(pricing)
    with connection(warehouse) as con:
        yield Prices(con, as_of or datetime.now(UTC), chosen, place=place or EVERYWHERE,
                     gpu_models=tuple(gpu_models) if gpu_models else None)


def _ask(warehouse: WarehousePath, pricing: Names, question: Callable[[Prices], pl.DataFrame],
         place: Place | None = None, currency: str | None = None,
         gpu_models: list[str] | None = None) -> pl.DataFrame:
    """`question`'s answer over the prices now, in `place` (of `gpu_models` alone, when the
    question is about them); amounts in `currency` at today's rate."""
    code = inputs.currency(currency)
    with prices_at(warehouse, pricing, place=place, gpu_models=gpu_models) as now:
        return in_currency(now.con, question(now), code, day=now.day)


def in_currency(con: duckdb.DuckDBPyConnection, frame: pl.DataFrame, currency: str | None, *,
                day: date | None = None, day_column: str | None = None) -> pl.DataFrame:
    """`frame`'s USD amounts in `currency` at the ECB rate of the day each row shows (`day`,
    or its `day_column`; warehouse.fx.in_currency), named for it (usd -> eur), with fx_rate,
    fx_date and fx_note; the frame as it is for None or USD. InputError: not a currency
    code, or no rates stored for it; NoAnswer: no row has a rate within reach."""
    code = inputs.currency(currency)
    if code is None or code == "USD":
        return frame
    from warehouse.fx import in_currency as convert
    from warehouse.fx import named_in

    _known(con, code)
    converted = convert(con, frame, code, day=day, day_column=day_column)
    if converted.height and converted["fx_rate"].null_count() == converted.height:
        raise NoAnswer(str(converted["fx_note"].drop_nulls()[0]))
    return converted.rename({c: named_in(c, code) for c in converted.columns})


def _known(con: duckdb.DuckDBPyConnection, code: str) -> None:
    """InputError unless the warehouse holds ECB rates for `code`."""
    from warehouse.fx import currencies

    known = currencies(con)
    if code not in known:
        raise InputError(f"no ECB rates for {code} in the warehouse"
                         + (f"; it has {', '.join(known)}" if known else
                            ": run `gpuprices backfill ecb` first"))


def unit_on(con: duckdb.DuckDBPyConnection, currency: str | None, day: date) -> Unit:
    """The money amounts of `day` are printed in, one by one (text such as `explain`): USD
    for None, else `currency` at its ECB rate of `day` (warehouse.fx.unit_of). InputError:
    not a code or no rates stored for it; NoAnswer: the day has no rate within reach."""
    from warehouse.unit import USD

    code = inputs.currency(currency)
    if code is None or code == "USD":
        return USD
    from warehouse.fx import unit_of  # the stored rates (and polars): another currency only

    _known(con, code)
    unit = unit_of(con, code, day)
    if unit.usd_per_unit is None:
        raise NoAnswer(str(unit.note))
    return unit


def _where(region: Names, geo: Names) -> Place:
    return inputs.place(region, geo)


def _limit(limit: int | None) -> int | None:
    """`limit` within its range; None: every row (the CLI counts them all in its titles)."""
    return None if limit is None else int(inputs.LIMIT.check("limit", limit))


def _first(frame: pl.DataFrame, count: int | None) -> pl.DataFrame:
    return frame if count is None else frame.head(count)


def cheapest(gpu: Names = None, *, min_vram: float | None = None, tier: str | None = None,
             pricing: Names = None, provider: Names = None, limit: int | None = 20,
             include_unavailable: bool = False, in_stock: bool = False, region: Names = None,
             geo: Names = None, currency: str | None = None, warehouse: WarehousePath = None
             ) -> pl.DataFrame:
    """The cheapest comparable offers, $/GPU-hour: available, fresh, whole GPUs, no outliers;
    the first of each GPU model is the cheapest every view names. `stock` is each offer's
    stock state; `in_stock`: only offers a source says can be rented now. `limit` None: every
    offer that matches.

    >>> gpuprices.cheapest(gpu="H100", limit=3)  # doctest: +SKIP
    """
    from reports.market.cheapest import cheapest_offers

    asked = _cheapest_filters(gpu, min_vram, tier, provider, include_unavailable, in_stock)
    count = _limit(limit)
    return _ask(warehouse, pricing, lambda now: _first(cheapest_offers(now, **asked), count),
                _where(region, geo), currency, gpu_models=asked["gpu_models"])


@contextmanager
def offer_table(gpu: Names = None, *, min_vram: float | None = None, tier: str | None = None,
                pricing: Names = None, provider: Names = None,
                include_unavailable: bool = False, in_stock: bool = False,
                warehouse: WarehousePath = None) -> Iterator[duckdb.DuckDBPyRelation]:
    """The offers `cheapest` answers everywhere, in USD: every one that matches, cheapest
    first, as one DuckDB relation (read it inside the block). The CLI's table prints its rows
    without polars (start-up: issue 23); `cheapest` asks the same question
    (reports.market.cheapest)."""
    from reports.market.cheapest import cheapest_offers_query

    asked = _cheapest_filters(gpu, min_vram, tier, provider, include_unavailable, in_stock)
    chosen = inputs.pricing_kinds(pricing)
    with connection(warehouse) as con:
        sql, params = cheapest_offers_query(con, datetime.now(UTC), pricing=chosen,
                                            of_models=asked["gpu_models"], **asked)
        yield con.sql(sql, params=params)


def _cheapest_filters(gpu: Names, min_vram: float | None, tier: str | None, provider: Names,
                      include_unavailable: bool, in_stock: bool) -> dict[str, Any]:
    """`cheapest`'s filters, checked, as reports.market.cheapest takes them."""
    from schemas.tiers import tiers_by_name

    models = inputs.gpu_models(gpu)
    if min_vram is not None:
        inputs.MIN_VRAM_GB.check("min_vram", min_vram)
    chosen_tier = None
    if tier is not None:
        tiers = tiers_by_name()
        chosen_tier = tiers[inputs.one_of("tier", tier, tiers)]
    return {"gpu_models": models, "min_vram_gb": min_vram,
            "tier": chosen_tier, "providers": _names(provider),
            "include_unavailable": include_unavailable, "in_stock": in_stock}


def _names(values: Names) -> list[str] | None:
    listed = [values] if isinstance(values, str) else list(values or ())
    return listed or None


def _segment(segment: str | None) -> str | None:
    from warehouse.semantic import segments

    return None if segment is None else inputs.one_of("segment", segment, segments())


def market(gpu: Names = None, *, day: date | str | None = None, segment: str | None = None,
           region: Names = None, geo: Names = None, per_geo: bool = False,
           currency: str | None = None, warehouse: WarehousePath = None) -> pl.DataFrame:
    """The market price per GPU model on a day (default today): the median of per-provider
    medians over comparable offers, with min, p25, p75, max, the providers and offers
    counted, and `withheld_reason` when it is not published. Segment None: every segment.
    `region` / `geo`: the market of the offers placed there; `per_geo`: one per geography
    (a `geo` column first)."""
    frame, _ = market_stored(gpu, day=day, segment=segment, region=region, geo=geo,
                             per_geo=per_geo, currency=currency, warehouse=warehouse)
    return frame


def market_stored(gpu: Names = None, *, day: date | str | None = None,
                  segment: str | None = None, region: Names = None, geo: Names = None,
                  per_geo: bool = False, currency: str | None = None,
                  warehouse: WarehousePath = None) -> tuple[pl.DataFrame, bool]:
    """(market values, stored?): False when the day's values were computed now from the
    prices as they stood at its end (a day the derived tables do not hold, a place, or
    per geography)."""
    from reports.market.values import market_by_geo, market_of

    models, chosen_day, chosen = inputs.gpu_models(gpu), inputs.as_day(day), _segment(segment)
    where, code = _where(region, geo), inputs.currency(currency)
    with connection(warehouse) as con:
        if per_geo:
            frame, stored = market_by_geo(con, chosen_day, gpu_models=models, segment=chosen,
                                          now=datetime.now(UTC), place=where), False
        else:
            frame, stored = market_of(con, chosen_day, gpu_models=models, segment=chosen,
                                      now=datetime.now(UTC), place=where)
        return in_currency(con, frame, code, day=chosen_day), stored


def market_table(gpu: Names = None, *, day: date | str | None = None,
                 segment: str | None = None, warehouse: WarehousePath = None
                 ) -> Rows | pl.DataFrame | None:
    """What `market` shows on a terminal for a fixed day whose offer statistics are stored,
    everywhere, in USD: DuckDB's rows (no polars: start-up, issue 23) of the same view as
    `market` (warehouse.index.view); None for a day the view is computed for."""
    from warehouse.frames import sql_table
    from warehouse.index.view import market_table_sql, stored_view_query

    models, chosen_day, chosen = inputs.gpu_models(gpu), inputs.as_day(day), _segment(segment)
    with connection(warehouse) as con:
        stored = stored_view_query(con, chosen_day, models, chosen)
        if stored is None:
            return None
        view, params = stored
        return sql_table(con, market_table_sql(view), params)


@dataclass(frozen=True, slots=True)
class Moves:
    """The market's moves between two days over matched providers, and coverage changes."""

    old_day: date
    new_day: date
    moves: pl.DataFrame
    coverage: pl.DataFrame


def market_moves(gpu: Names = None, *, day: date | str | None = None, period: str = "week",
                 region: Names = None, geo: Names = None, currency: str | None = None,
                 warehouse: WarehousePath = None) -> Moves:
    """Market moves per GPU model over providers present on both days (a week or a month
    back from `day`); providers joining or leaving are coverage changes, apart. Amounts in
    `currency` at the rate of the later day."""
    from reports.market.moves import PERIOD_DAYS, week_moves

    inputs.one_of("period", period, PERIOD_DAYS)
    models, chosen_day = inputs.gpu_models(gpu), inputs.as_day(day)
    where, code = _where(region, geo), inputs.currency(currency)
    with connection(warehouse) as con:
        found = week_moves(con, chosen_day, period=period, gpu_models=models, place=where,
                           now=datetime.now(UTC))
        return Moves(found.old_day, found.new_day,
                     in_currency(con, found.moves, code, day=found.new_day),
                     in_currency(con, found.coverage, code, day=found.new_day))


def explain(what: str, name: str, *, day: date | str | None = None, pricing: Names = None,
            region: Names = None, geo: Names = None, currency: str | None = None,
            warehouse: WarehousePath = None) -> str:
    """How a number was made, as text: the offers that counted (source, capture, time), the
    ones left out and why, and the arithmetic (in USD, or every amount in `currency` at the
    ECB rate of the day explained, named in a first line). `what`: market, cheapest or
    scenario; `name`: a GPU model or family, or a scenario name
    (reports/market/scenarios.toml)."""
    from reports.market.explain_market import explain_market
    from reports.queries import reference_table

    inputs.one_of("what", what, inputs.EXPLAIN_WHAT)
    now = datetime.now(UTC)
    chosen_day = inputs.as_day(day)
    as_of = min(datetime.combine(chosen_day, time.max, UTC), now) if day is not None else now
    scenarios = {}
    if what == "scenario":
        from reports.market.scenarios import load_scenarios

        scenarios = {s.name: s for s in load_scenarios()}
        inputs.one_of("scenario", name, scenarios)
    models = inputs.gpu_models([name]) if what != "scenario" else None
    where = _where(region, geo)
    with prices_at(warehouse, pricing, as_of, where, gpu_models=models) as then:
        unit = unit_on(then.con, currency, then.day)
        if what == "market":
            lines = explain_market(then.con, models or [], chosen_day, now=now, place=where,
                                   unit=unit)
        elif what == "cheapest":
            from reports.market.explain import explain_cheapest

            lines = explain_cheapest(then, models or [], unit=unit)
        else:
            from reports.market.explain import explain_scenario

            lines = explain_scenario(then, scenarios[name], reference_table(then.con, "plan"),
                                     unit=unit)
    return "\n".join([unit.describe(), *lines] if unit.converting else lines)


def value(metric: str = "pflop", gpu: Names = None, *, limit: int | None = 20,
          pricing: Names = None,
          region: Names = None, geo: Names = None, currency: str | None = None,
          warehouse: WarehousePath = None) -> pl.DataFrame:
    """Price-performance of comparable offers: $ per PFLOP-hour (dense BF16), per GB of VRAM
    an hour, or per TB/s of memory bandwidth an hour, best first (`limit` None: all)."""
    from reports.market.value import METRICS, price_performance

    inputs.one_of("metric", metric, METRICS)
    models, count = inputs.gpu_models(gpu), _limit(limit)
    return _first(_ask(warehouse, pricing, lambda now: price_performance(now, metric, models),
                       _where(region, geo), currency, gpu_models=models), count)


@contextmanager
def value_table(metric: str = "pflop", gpu: Names = None, *, pricing: Names = None,
                warehouse: WarehousePath = None) -> Iterator[duckdb.DuckDBPyRelation]:
    """The offers `value` ranks everywhere, in USD: every one, best first, as one DuckDB
    relation (read it inside the block). The CLI's table prints its rows without polars
    (start-up: issue 23); `value` asks the same question (reports.market.value)."""
    from reports.market.value import METRICS, price_performance_query

    inputs.one_of("metric", metric, METRICS)
    models = inputs.gpu_models(gpu)
    with connection(warehouse) as con:
        sql, params = price_performance_query(con, datetime.now(UTC), metric,
                                              pricing=inputs.pricing_kinds(pricing),
                                              of_models=models, gpu_models=models)
        yield con.sql(sql, params=params)


def cluster(gpu: Names, *, gpus: int = 512, days: int = 90, pricing: Names = None,
            region: Names = None, geo: Names = None, currency: str | None = None,
            warehouse: WarehousePath = None) -> pl.DataFrame:
    """What `gpus` GPUs for `days` days cost at each provider, in its largest nodes, against
    the market price (of the same place; list prices: capacity at that size is not checked)."""
    from reports.market.cluster import cluster_quotes
    from reports.market.values import market_of

    models = inputs.gpu_models(gpu)
    if not models:
        raise InputError("give the GPU, e.g. gpu='H100'")
    inputs.CLUSTER_GPUS.check("gpus", gpus)
    inputs.CLUSTER_DAYS.check("days", days)
    where, code = _where(region, geo), inputs.currency(currency)
    with prices_at(warehouse, pricing, place=where, gpu_models=models) as now:
        market_rows, _ = market_of(now.con, now.day, now=now.as_of, place=where)
        quotes = cluster_quotes(now, market_rows, models, gpus=int(gpus), days=int(days))
        if quotes.height == 0:
            raise NoAnswer(f"no comparable {', '.join(_names(gpu) or [])} offers stand now"
                           + (f" ({where.describe()})" if not where.everywhere else ""))
        return in_currency(now.con, quotes, code, day=now.day)


@dataclass(frozen=True, slots=True)
class RentVsBuy:
    """Owning a server vs renting: per server, and the card alone."""

    servers: pl.DataFrame       # full cost of ownership per useful GPU-hour vs the rentals
    cards: pl.DataFrame | None  # purchase / (cheapest rental - power), per GPU model
    sheets: list[tuple[dict[str, object], list[list[str]]]]  # (server, arithmetic lines), USD


def rent_vs_buy_detail(gpu: Names = None, *, utilization: float | None = None,
                       years: float | None = None, cost_of_capital: float | None = None,
                       usd_per_kwh: float | None = None, pue: float | None = None,
                       colo: float | None = None, ops_share: float | None = None,
                       idle_power: float | None = None, assumptions: str | Path | None = None,
                       servers: str | Path | None = None, pricing: Names = None,
                       region: Names = None, geo: Names = None, currency: str | None = None,
                       warehouse: WarehousePath = None) -> RentVsBuy:
    """rent_vs_buy with the card-only figure and each server's arithmetic (the sheets in
    USD whatever `currency`)."""
    import polars as pl

    from reports.market.rent_vs_buy import break_even
    from reports.market.tco import (
        TCO_TOML,
        load_assumptions,
        load_servers,
        rental_yardsticks,
        tco_rows,
        tco_sheet,
    )
    from reports.market.values import market_of
    from reports.queries import reference_table

    models = inputs.gpu_models(gpu)
    try:
        chosen = load_assumptions(Path(assumptions) if assumptions else TCO_TOML).with_overrides(
            utilization=utilization, depreciation_years=years, cost_of_capital=cost_of_capital,
            usd_per_kwh=usd_per_kwh, pue=pue, colocation_usd_per_kw_month=colo,
            operations_share=ops_share, idle_power_share=idle_power)
        server_rows = load_servers(Path(servers)) if servers else load_servers()
    except (ValueError, OSError) as exc:
        raise InputError(str(exc).splitlines()[0]) from None
    if models:
        server_rows = server_rows.filter(pl.col("gpu_model").is_in(models))
    where, code = _where(region, geo), inputs.currency(currency)
    with prices_at(warehouse, pricing, place=where) as now:
        market_rows, _ = market_of(now.con, now.day, now=now.as_of, place=where)
        market_usd, cheapest_usd = rental_yardsticks(now, market_rows)
        ownership = reference_table(now.con, "gpu_ownership")
        cards = break_even(ownership, now) if ownership is not None and ownership.height \
            else None
        if cards is not None and models:
            cards = cards.filter(pl.col("gpu_model").is_in(models))
        rows = in_currency(now.con, tco_rows(server_rows, chosen, market_usd, cheapest_usd),
                           code, day=now.day)
        if cards is not None:
            cards = in_currency(now.con, cards, code, day=now.day)
    sheets = []
    for server in server_rows.to_dicts():
        rent = market_usd.get(server["gpu_model"]) or cheapest_usd.get(
            server["gpu_model"], (None, ""))[0]
        sheets.append((server, tco_sheet(server, chosen, rent)))
    return RentVsBuy(rows, cards, sheets)


def rent_vs_buy(gpu: Names = None, *, utilization: float | None = None,
                years: float | None = None, cost_of_capital: float | None = None,
                usd_per_kwh: float | None = None, pue: float | None = None,
                colo: float | None = None, ops_share: float | None = None,
                idle_power: float | None = None, pricing: Names = None, region: Names = None,
                geo: Names = None, currency: str | None = None,
                warehouse: WarehousePath = None) -> pl.DataFrame:
    """Build vs rent per server (schemas/server_prices.csv): full cost of ownership per useful
    GPU-hour, break-even utilization and payback month against the market price and the
    cheapest rental. Assumptions default to reports/market/tco.toml; each override is checked
    against its range."""
    return rent_vs_buy_detail(
        gpu, utilization=utilization, years=years, cost_of_capital=cost_of_capital,
        usd_per_kwh=usd_per_kwh, pue=pue, colo=colo, ops_share=ops_share,
        idle_power=idle_power, pricing=pricing, region=region, geo=geo, currency=currency,
        warehouse=warehouse).servers


def scenario(name: str | None = None, *, gpu_hours: float | None = None, gpu: Names = None,
             pricing: Names = None, region: Names = None, geo: Names = None,
             currency: str | None = None, warehouse: WarehousePath = None) -> pl.DataFrame:
    """What a job costs on each platform: a named scenario (reports/market/scenarios.toml),
    or `gpu_hours` of `gpu`."""
    from reports.market.scenarios import Scenario, evaluate, load_scenarios
    from reports.queries import reference_table

    scenarios = {s.name: s for s in load_scenarios()}
    gpus = _names(gpu)
    if name is not None:
        chosen = scenarios[inputs.one_of("scenario", name, scenarios)]
    elif gpu_hours is not None and gpus:
        inputs.GPU_HOURS.check("gpu_hours", gpu_hours)
        inputs.gpu_models(gpus)
        chosen = Scenario(name="custom", title=f"{gpu_hours:g} GPU-hours of {', '.join(gpus)}",
                          hours=gpu_hours, gpus=tuple(gpus))
    else:
        raise InputError("give a scenario name (" + ", ".join(scenarios) + ") or gpu_hours "
                         "and gpu")
    return _ask(warehouse, pricing,
                lambda now: evaluate(now, chosen, reference_table(now.con, "plan")),
                _where(region, geo), currency)


def fit(params: str | None = None, method: str | None = None, *, limit: int = 10,
        pricing: Names = None, region: Names = None, geo: Names = None,
        currency: str | None = None, warehouse: WarehousePath = None) -> pl.DataFrame:
    """Which GPU fits a model. With `params` (e.g. '70B', '124M') and `method` (full, lora,
    qlora, inference): the cheapest comparable offers with that much VRAM, cheapest $/hour
    first. Otherwise the matrix of sizes x methods with the cheapest offer that fits."""
    from reports.market.fit import (
        GB_PER_BILLION,
        MODEL_SIZES_B,
        fit_matrix,
        fitting_offers,
        parse_params,
        vram_needed_gb,
    )

    if method is not None:
        inputs.one_of("method", method, GB_PER_BILLION)
    try:
        size = parse_params(params) if params else None
    except ValueError as exc:
        raise InputError(str(exc)) from None
    if size is not None and not (inputs.PARAMS_B.low <= size <= inputs.PARAMS_B.high):
        raise InputError(f"params {params} is out of range: allowed "
                         f"{inputs.PARAMS_B.low * 1000:g}M to {inputs.PARAMS_B.high:g}B")
    count, where = _limit(limit), _where(region, geo)
    if size is not None and method is not None:
        needed = vram_needed_gb(size, method)
        return _ask(warehouse, pricing, lambda now: fitting_offers(now, needed).head(count),
                    where, currency)
    sizes = (size,) if size is not None else MODEL_SIZES_B
    methods = (method,) if method is not None else tuple(GB_PER_BILLION)
    return _ask(warehouse, pricing, lambda now: fit_matrix(now, sizes, methods), where,
                currency)


def needed_vram_gb(params: str, method: str) -> float:
    """GB of VRAM a model of `params` needs for `method` (weights, optimizer, overhead)."""
    from reports.market.fit import GB_PER_BILLION, parse_params, vram_needed_gb

    inputs.one_of("method", method, GB_PER_BILLION)
    try:
        return vram_needed_gb(parse_params(params), method)
    except ValueError as exc:
        raise InputError(str(exc)) from None


def history(gpu: str, *, days: int = 90, provider: Names = None, pricing: Names = None,
            region: Names = None, geo: Names = None, currency: str | None = None,
            warehouse: WarehousePath = None) -> pl.DataFrame:
    """The cheapest comparable offer of `gpu` per day over the last `days` days, with the
    provenance of every point (source, capture, observed time); today's point is what
    `cheapest` answers now. `currency`: each day at its own rate."""
    from reports.market.history import series_points

    models = inputs.gpu_models([gpu]) or []
    inputs.HISTORY_DAYS.check("days", days)
    where, code = _where(region, geo), inputs.currency(currency)
    now = datetime.now(UTC)
    until = now.date()
    with connection(warehouse) as con:
        points = series_points(con, models, since=until - timedelta(days=int(days)),
                               until=until, pricing=inputs.pricing_kinds(pricing),
                               providers=_names(provider), now=now, place=where)
        if points.height == 0:
            raise NoAnswer(_no_history(gpu, days, where))
        return in_currency(con, points, code, day_column="day")


def history_table(gpu: str, *, days: int = 90, provider: Names = None, pricing: Names = None,
                  region: Names = None, geo: Names = None, warehouse: WarehousePath = None
                  ) -> Rows | pl.DataFrame:
    """The points `history` answers, in USD, as DuckDB's rows (no polars: the CLI's table;
    start-up, issue 23), or a frame where a column's values could print otherwise
    (warehouse.frames.relation_table). The same question as `history`
    (reports.market.history.series_points, warehouse.semantic_history.points_query)."""
    from warehouse.frames import sql_table
    from warehouse.semantic_history import points_query

    models = inputs.gpu_models([gpu]) or []
    inputs.HISTORY_DAYS.check("days", days)
    where = _where(region, geo)
    now = datetime.now(UTC)
    with connection(warehouse) as con:
        sql, params = points_query(con, models, since=now.date() - timedelta(days=int(days)),
                                   until=now.date(), pricing=inputs.pricing_kinds(pricing),
                                   providers=_names(provider), now=now, place=where)
        points = sql_table(con, sql, params)
    if points.height == 0:
        raise NoAnswer(_no_history(gpu, days, where))
    return points


def _no_history(gpu: str, days: int, where: Place) -> str:
    return (f"no {gpu} prices in the last {days} days"
            + (f" ({where.describe()})" if not where.everywhere else ""))


@contextmanager
def move_table(since: date | str, *, gpu: Names = None, provider: Names = None,
               pricing: Names = None, warehouse: WarehousePath = None
               ) -> Iterator[duckdb.DuckDBPyRelation]:
    """The moves `changes` answers everywhere, in USD: every one, newest first, as one DuckDB
    relation (read it inside the block). The CLI's table prints its rows without polars
    (start-up: issue 23); `changes` asks the same question (moves_query)."""
    from reports.market.history import moves_query

    sql, params = moves_query(since=inputs.as_day(since, "since"),
                              gpu_models=inputs.gpu_models(gpu), providers=_names(provider),
                              pricing=inputs.pricing_kinds(pricing))
    with connection(warehouse) as con:
        yield con.sql(sql, params=params)


def changes(since: date | str, *, gpu: Names = None, provider: Names = None,
            pricing: Names = None, region: Names = None, geo: Names = None,
            currency: str | None = None, limit: int | None = 50,
            warehouse: WarehousePath = None) -> pl.DataFrame:
    """Moves of current prices on or after `since` (the source that speaks for each
    offering): old -> new per hour and per GPU-hour, %, newest first (`currency`: at the
    rate of each move's day; `limit` None: every move)."""
    from reports.market.history import price_moves

    day = inputs.as_day(since, "since")
    models, count = inputs.gpu_models(gpu), _limit(limit)
    where, code = _where(region, geo), inputs.currency(currency)
    with connection(warehouse) as con:
        moves = price_moves(con, since=day, gpu_models=models, providers=_names(provider),
                            pricing=inputs.pricing_kinds(pricing), place=where)
        return in_currency(con, _first(moves, count), code, day_column="changed_on")


# What `sources` shows of each source's status (the source_status view), after the registry's
# columns; a warehouse where no source has run shows the registry alone.
_SOURCE_STATUS = ("last_success_at", "prices_as_of", "latest_rows", "rows_last_run",
                  "last_status", "stale", "quarantined_last_parse", "screened_last_parse",
                  "unknown_gpus", "skipped_last_parse", "last_error")


@contextmanager
def source_table(warehouse: WarehousePath = None) -> Iterator[duckdb.DuckDBPyRelation]:
    """Every registered source, in the registry's order, with its status: one DuckDB relation
    (read it inside the block). A source never run has `last_status` 'never run'. `sources`
    reads it as a frame; the CLI's table prints its rows without polars (start-up: issue 23)."""
    import duckdb

    from scrapers.registry import all_sources
    from warehouse.connection import check_warehouse_file

    registry = [(s.name, "*" if s.aggregator else s.provider, s.kind, s.url)
                for s in all_sources().values()]
    values = ", ".join(["(?, ?, ?, ?, ?)"] * len(registry))
    params = [v for position, row in enumerate(registry) for v in (position, *row)]
    listed = f"(VALUES {values}) r(position, source, provider, kind, url)"
    path = _path(warehouse)
    check_warehouse_file(path)  # a missing file is fine: never run
    exists = path.exists()
    with connection(path) if exists else closing(duckdb.connect()) as con:
        ran = exists and con.sql("SELECT count(*) FROM source").fetchone() != (0,)
        status = ", ".join(
            "coalesce(s.last_status, 'never run') AS last_status" if name == "last_status"
            else f"s.{name}" for name in _SOURCE_STATUS) if ran else "'never run' AS last_status"
        joined = " LEFT JOIN source_status s USING (source)" if ran else ""
        yield con.sql(f"SELECT r.source, r.provider, r.kind, r.url, {status} FROM {listed}"
                      f"{joined} ORDER BY r.position", params=params)


def sources(warehouse: WarehousePath = None) -> pl.DataFrame:
    """Every source: provider, kind, URL, last success, rows, status and staleness, what its
    last run quarantined and its last parse skipped (a source never run says so)."""
    from warehouse.frames import relation_frame

    with source_table(warehouse) as table:
        return relation_frame(table)


def summary(pricing: Names = None, warehouse: WarehousePath = None, *, region: Names = None,
            geo: Names = None, currency: str | None = None) -> dict[str, pl.DataFrame]:
    """The refresh summary: rows per source in the last refresh, GPU names the catalog could
    not place, and the cheapest comparable offer per VRAM tier (in `region` / `geo`)."""
    from reports.market.rankings import top_per_tier
    from reports.queries import rows_per_source, unknown_gpus

    where, code = _where(region, geo), inputs.currency(currency)
    with prices_at(warehouse, pricing, place=where) as now:
        return {"rows_per_source": rows_per_source(now.con),
                "unknown_gpus": unknown_gpus(now.con),
                "cheapest_per_tier": in_currency(
                    now.con, top_per_tier(now, per_tier=1).drop("rank"), code, day=now.day)}


def summary_table(pricing: Names = None, warehouse: WarehousePath = None
                  ) -> dict[str, Rows | pl.DataFrame]:
    """`summary` everywhere, in USD, as DuckDB's rows (no polars: the CLI's tables; start-up,
    issue 23): the same three questions as `summary` (reports.queries, reports.market.tiers)."""
    from reports.market.tiers import per_tier_query
    from reports.queries import UNKNOWN_GPUS, rows_per_source_query
    from warehouse.frames import sql_table

    with connection(warehouse) as con:
        tiers, params = per_tier_query(con, datetime.now(UTC), per_tier=1,
                                       pricing=inputs.pricing_kinds(pricing))
        sources, run = rows_per_source_query(con)
        return {"rows_per_source": sql_table(con, sources, run),
                "unknown_gpus": sql_table(con, UNKNOWN_GPUS),
                "cheapest_per_tier": sql_table(con, tiers, params, columns="* EXCLUDE (rank)")}


@dataclass(frozen=True, slots=True)
class Availability:
    """Whether a GPU could be rented, per provider and region, and who quotes it without
    saying."""

    stock: pl.DataFrame  # reports.market.stock.stock_table rows
    silent: list[str]    # providers quoting the GPU now whose source gives no stock


def availability_detail(gpu: str, *, days: int = 7, region: Names = None, geo: Names = None,
                        pricing: Names = None, warehouse: WarehousePath = None
                        ) -> Availability:
    """availability, with the providers that quote `gpu` now but say nothing of stock."""
    import polars as pl

    from reports.market.stock import stock_table
    from warehouse.semantic_stock import availability as series_of

    models = inputs.gpu_models([gpu]) or []
    inputs.HISTORY_DAYS.check("days", days)
    where = _where(region, geo)
    now = datetime.now(UTC)
    with prices_at(warehouse, pricing, now, where, gpu_models=models) as current:
        series = series_of(current.con, as_of=now, since=now - timedelta(days=int(days)),
                           gpu_models=models, pricing=current.pricing, place=where)
        quoting = current.comparable().filter(pl.col("gpu_model").is_in(models))
    silent = sorted(set(quoting["provider"]) - set(series["provider"]))
    if series.height == 0:
        raise NoAnswer(_no_stock(gpu, days, where, silent))
    return Availability(stock_table(series), silent)


def availability_table(gpu: str, *, days: int = 7, region: Names = None, geo: Names = None,
                       pricing: Names = None, warehouse: WarehousePath = None
                       ) -> tuple[Rows | pl.DataFrame, list[str]]:
    """What `availability` prints on a terminal (reports.market.availability), as DuckDB's
    rows (no polars: start-up, issue 23), and the providers that quote `gpu` now but say
    nothing of stock: the same questions as availability_detail."""
    from reports.market.availability import AVAILABILITY_TABLE, geo_params
    from warehouse.frames import held_table, sql_table
    from warehouse.semantic import offers_query
    from warehouse.semantic_stock import availability_query

    models = inputs.gpu_models([gpu]) or []
    inputs.HISTORY_DAYS.check("days", days)
    where, chosen = _where(region, geo), inputs.pricing_kinds(pricing)
    now = datetime.now(UTC)
    with connection(warehouse) as con:
        sql, params = availability_query(con, as_of=now, since=now - timedelta(days=int(days)),
                                         gpu_models=models, pricing=chosen, place=where)
        offers, quoted = offers_query(con, now, chosen, place=where, gpu_models=models)
        quoting = {p for (p,) in con.execute(
            f"SELECT DISTINCT provider FROM ({offers}) WHERE excluded IS NULL", quoted
        ).fetchall()}
        # the series once, read twice: its providers and regions, then the table
        with held_table(con, "_availability", sql, params) as series:
            pairs = con.execute(f"SELECT DISTINCT provider, region FROM ({series})").fetchall()
            silent = sorted(quoting - {provider for provider, _ in pairs})
            if not pairs:
                raise NoAnswer(_no_stock(gpu, days, where, silent))
            return sql_table(con, AVAILABILITY_TABLE.format(series=f"({series})"),
                             geo_params(pairs)), silent


def _no_stock(gpu: str, days: int, where: Place, silent: list[str]) -> str:
    return (f"no source reported {gpu} stock in the last {days} days"
            + (f" ({where.describe()})" if not where.everywhere else "")
            + (f"; quoted without stock by {', '.join(silent)}" if silent else ""))


def availability(gpu: str, *, days: int = 7, region: Names = None, geo: Names = None,
                 pricing: Names = None, warehouse: WarehousePath = None) -> pl.DataFrame:
    """Could `gpu` be rented? Per provider and region whose source says so: the share of the
    last `days` days' observations in stock, the last time it was, and the stock state now
    (available, low, out of stock: warehouse.semantic_stock)."""
    return availability_detail(gpu, days=days, region=region, geo=geo, pricing=pricing,
                               warehouse=warehouse).stock


def query(sql: str, *, warehouse: WarehousePath = None) -> pl.DataFrame:
    """One read-only SELECT in the query sandbox (no files, extensions or settings; the
    default memory, thread and time limits)."""
    from warehouse.connection import close_warehouse, connect_read_only
    from warehouse.sandbox import check_statement, default_limits, run

    limits = default_limits()
    path = _path(warehouse)
    con = connect_read_only(path, sandboxed=True, limits=limits)
    try:
        return run(con, check_statement(con, sql), timeout_s=limits.timeout_s, nested=True)
    finally:
        close_warehouse(con, path)


def export(directory: str | Path, *, fmt: str = "parquet", warehouse: WarehousePath = None
           ) -> ExportResult:
    """Write the history as files with provenance (docs/export.md): observations by day and
    provider (only days not exported yet), the market, price-change and run tables, a
    manifest with digests."""
    from warehouse.export import export as export_files

    inputs.one_of("fmt", fmt, ("parquet", "csv"))
    with connection(warehouse) as con:
        return export_files(con, Path(directory), fmt)  # type: ignore[arg-type]
