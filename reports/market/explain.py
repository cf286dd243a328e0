"""`explain`: how a printed number was made, down to the captures it came from.

Each function returns plain text lines: the offers that counted (source, capture id,
observed time), the ones left out and why, and the arithmetic. `unit`: every amount in that
money (warehouse.fx.Unit: one currency at the ECB rate of the day explained), so the arithmetic
still adds up; USD by default.
"""

from __future__ import annotations

from datetime import UTC, date, datetime

import duckdb
import polars as pl

from contract import DEFAULT_PRICING, STALE_AFTER_H
from reports.market.scenarios import Scenario, evaluate, plan_note
from schemas.names import resolve_gpus
from warehouse.frames import temp_table
from warehouse.fx import USD, Unit
from warehouse.index.read import votes_of
from warehouse.place import EVERYWHERE, Place
from warehouse.semantic import ALL, MarketConfig, Prices, day_end, load_market_config
from warehouse.semantic_market import computed_market

__all__ = ["explain_cheapest", "explain_market", "explain_scenario"]

MAX_LISTED = 40  # offers listed per group; the rest are counted


def _when(moment: datetime | None) -> str:
    return moment.astimezone(UTC).strftime("%Y-%m-%d %H:%M UTC") if moment else "never"


def _usd(value: float, unit: Unit = USD, digits: int = 4) -> str:
    shown = unit.amount(value)
    if shown is None:
        return "–"
    return f"{unit.currency} {shown:.{digits}f}" if unit.converting else f"${shown:.{digits}f}"


def _num(value: float, unit: Unit) -> str:
    """An amount in the arithmetic, without its sign."""
    shown = unit.amount(value)
    return "–" if shown is None else f"{shown:.4f}"


def _offer(r: dict[str, object]) -> str:
    return f"{r['provider']} {r['offering']} ({r['region']}, {r['pricing']})"


def _provenance(r: dict[str, object]) -> str:
    capture = str(r["capture_id"] or "?")[:12]
    return f"source {r['source']}, capture {capture}, observed {_when(r['observed_at'])}"  # type: ignore[arg-type]


def _per_gpu(r: dict[str, object], unit: Unit) -> str:
    return (f"{_usd(r['price_usd_per_hour'], unit)}/h / {r['gpu_count']:g} GPU = "  # type: ignore[arg-type]
            f"{_usd(r['price_usd_per_gpu_hour'], unit)}/GPU-h")  # type: ignore[arg-type]


def _why(r: dict[str, object], config: MarketConfig, unit: Unit) -> str:
    """Why an offer is not comparable, in words (warehouse.semantic EXCLUSIONS)."""
    reason = r["excluded"]
    if reason == "outlier":
        low = r["preliminary_usd"] / config.outlier_low_ratio  # type: ignore[operator]
        if r["price_usd_per_gpu_hour"] < low:  # type: ignore[operator]
            return (f"outlier: below {_usd(low, unit)} = preliminary "
                    f"{_usd(r['preliminary_usd'], unit)}"  # type: ignore[arg-type]
                    f" / {config.outlier_low_ratio:g}")
        high = r["preliminary_usd"] * config.outlier_high_ratio  # type: ignore[operator]
        return (f"outlier: above {_usd(high, unit)} = preliminary "
                f"{_usd(r['preliminary_usd'], unit)}"  # type: ignore[arg-type]
                f" x {config.outlier_high_ratio:g}")
    if reason == "stale":
        return (f"stale: its source was last seen {_when(r['last_success_at'])}, more than "  # type: ignore[arg-type]
                f"{STALE_AFTER_H} h before")
    return {"unknown_gpu": "GPU not in the catalog",
            "gpu_only": "gpu_only: the GPU's price without its machine",
            "fractional": f"fractional: {r['gpu_count']:g} of a GPU",  # type: ignore[str-format]
            "other_pricing": f"other pricing ({r['pricing']})",
            "unconfirmed_jump": "unconfirmed jump: a move of 25 % or more not yet confirmed",
            "unavailable": "unavailable: marked so by its source"}.get(str(reason), str(reason))


def _listed(rows: list[dict[str, object]], render: object) -> list[str]:
    lines = [f"  {render(r)}" for r in rows[:MAX_LISTED]]  # type: ignore[operator]
    if len(rows) > MAX_LISTED:
        lines.append(f"  ... and {len(rows) - MAX_LISTED} more")
    return lines


def _median_of(values: list[float], unit: Unit) -> str:
    shown = ", ".join(_num(v, unit) for v in values[:12]) + (", ..." if len(values) > 12 else "")
    return f"median({shown})"


def _stage_two(market: pl.DataFrame, providers: pl.DataFrame, segment: str,
               unit: Unit) -> list[str]:
    row = market.filter(pl.col("segment") == segment).to_dicts()
    if not row:
        return []
    m = row[0]
    chosen = providers if segment == "all" else providers.filter(pl.col("segment") == segment)
    values = sorted(chosen["median_usd_per_gpu_hour"].to_list())
    label = "across providers" if segment == "all" else f"segment {segment}"
    median, low, high = (_num(m["median_usd_per_gpu_hour"], unit),
                         _num(m["min_usd_per_gpu_hour"], unit),
                         _num(m["max_usd_per_gpu_hour"], unit))
    p25, p75 = _num(m["p25_usd_per_gpu_hour"], unit), _num(m["p75_usd_per_gpu_hour"], unit)
    lines = [f"{label}: {_median_of(values, unit)} = {median}",
             f"  min {low}, p25 {p25}, p75 {p75}, max {high}; dispersion "
             f"({p75} - {p25}) / {median} = {m['dispersion']:.2f}"]
    if m["withheld_reason"]:
        lines.append(f"  two-stage median withheld: {m['withheld_reason']}")
    else:
        lines.append(f"  two-stage median: {_usd(m['market_usd_per_gpu_hour'], unit)}"
                     "/GPU-hour "
                     f"({m['providers']} providers, {m['offers']} offers; the offer "
                     "statistics beside the index, not the market price)")
    return lines


def _index_lines(con: duckdb.DuckDBPyConnection, model: str, day: date,
                 now: datetime | None, unit: Unit) -> list[str]:
    """The market price itself: the day's on-demand index fixing per scope, and the votes of
    the all-provider one (warehouse/index, docs/index-methodology.md)."""
    fixings, votes, published = votes_of(con, day, [model], now=now, segment=None)
    status = "published" if published else "indicative: the day is not fixed yet"
    lines = [f"market price = the on-demand index ({status}; docs/index-methodology.md):"]
    for f in fixings.sort(pl.col("segment") != ALL, "segment").to_dicts():
        if f["value"] is None:
            lines.append(f"  [{f['segment']}] no index: {f['withheld_reason']}")
            continue
        lines.append(f"  [{f['segment']}] {_usd(f['value'], unit)}/GPU-hour, band "
                     f"{_usd(f['band_low'], unit)}-{_usd(f['band_high'], unit)}; panel "
                     f"{f['panel']} "
                     f"({f['carried']} carried), {f['flagged']} kept out; method "
                     f"{f['method_version']}")
    main = fixings.filter(pl.col("segment") == ALL)["fixing_id"].to_list()
    if main:
        lines.append("votes of [all] (each at p - sd, p, p + sd with its weight; the value is "
                     "the weighted mean of the central third of the vote mass):")
        for v in votes.filter(pl.col("fixing_id") == main[0]).sort("value").to_dicts():
            flags = f" [{', '.join(v['flags'])}]" if v["flags"] else ""
            note = f": {v['note']}" if v["note"] else ""
            lines.append(f"  {v['provider']} [{v['provider_segment']}]: "
                         f"{_num(v['value'], unit)} sd {_num(v['sd'], unit)} weight "
                         f"{v['weight']:.4f}{flags}{note}")
    return lines


def explain_market(con: duckdb.DuckDBPyConnection, gpu_models: list[str], day: date, *,
                   now: datetime | None = None, config: MarketConfig | None = None,
                   segments: dict[str, str] | None = None,
                   place: Place = EVERYWHERE, unit: Unit = USD) -> list[str]:
    """How the market price of each model on `day` was made (as prices stood at its end), over
    the offers in `place`; amounts in `unit`."""
    config = config or load_market_config()
    as_of = day_end(day, now or datetime.now(UTC))
    # the models' offers alone (each rule and the market are per model: the same rows and
    # values as from every offer); the market below is made from these very rows
    offers = Prices(con, as_of, config=config, segments=segments, place=place,
                    gpu_models=tuple(gpu_models)).offers()
    temp_table(con, "_explained_offers", offers)
    try:
        providers, market = computed_market(con, as_of, config, segments, place=place,
                                            day=day, offers="SELECT * FROM _explained_offers")
    finally:
        con.execute("DROP TABLE IF EXISTS temp.main._explained_offers")  # it holds the rows
    where = f" in {place.describe()}" if not place.everywhere else ""
    lines: list[str] = []
    for model in [m for m in gpu_models if m in set(offers["gpu_model"])]:
        mine = offers.filter(pl.col("gpu_model") == model)
        counted = mine.filter(pl.col("excluded").is_null()).to_dicts()
        excluded = mine.filter(pl.col("excluded").is_not_null()).to_dicts()
        lines += [f"market price of {model}{where} on {day}, as prices stood at "
                  f"{_when(as_of)}",
                  f"rule (warehouse/market.toml): comparable offers, pricing "
                  f"{', '.join(DEFAULT_PRICING)}; available; whole GPUs; seen within "
                  f"{STALE_AFTER_H} h; outliers below 1/{config.outlier_low_ratio:g} or above "
                  f"{config.outlier_high_ratio:g}x the preliminary median",
                  f"counted ({len(counted)} offers):"]
        lines += _listed(counted, lambda r: f"{_offer(r)}: {_per_gpu(r, unit)}; "
                         f"{_provenance(r)}")
        lines.append(f"excluded ({len(excluded)} offers):")
        lines += _listed(excluded, lambda r: f"{_offer(r)}: "
                         f"{_usd(r['price_usd_per_gpu_hour'], unit)}/GPU-h; "
                         f"{_why(r, config, unit)}; {_provenance(r)}")
        mine_providers = providers.filter(pl.col("gpu_model") == model)
        lines.append("per-provider medians:")
        for p in mine_providers.to_dicts():
            values = sorted(o["price_usd_per_gpu_hour"] for o in counted
                            if o["provider"] == p["provider"])
            carried = (f" (carried forward {p['carried_days']} day(s))"
                       if p["carried_days"] else "")
            lines.append(f"  {p['provider']} [{p['segment']}]: {_median_of(values, unit)} = "
                         f"{_num(p['median_usd_per_gpu_hour'], unit)}{carried}")
        model_market = market.filter(pl.col("gpu_model") == model)
        for segment in model_market["segment"].to_list():
            lines += _stage_two(model_market, mine_providers, segment, unit)
        lines += _index_lines(con, model, day, now, unit)
        lines.append("")
    return lines or [f"no offers of {', '.join(gpu_models)} stood at {_when(as_of)}"]


def explain_cheapest(prices: Prices, gpu_models: list[str],
                     pricing: tuple[str, ...] | None = None, unit: Unit = USD) -> list[str]:
    """The answer of `gpuprices cheapest --gpu ...` and every cheaper offer it passed over,
    with the rule that left each one out; amounts in `unit`."""
    chosen = pricing or prices.pricing
    offers = prices.offers(chosen).filter(pl.col("gpu_model").is_in(gpu_models)).sort(
        Prices.ORDER)
    head = (f"cheapest {' / '.join(gpu_models)} offer at {_when(prices.as_of)} (comparable "
            f"offers, pricing {', '.join(chosen)})")
    counted = offers.filter(pl.col("excluded").is_null())
    if counted.height == 0:
        return [head, "no offer matches"]
    answer = counted.row(0, named=True)
    carried = (f" (carried forward {answer['carried_days']} day(s))"
               if answer["carried_days"] else "")
    lines = [head, f"answer: {_offer(answer)} [{answer['gpu_model']}]: "
             f"{_per_gpu(answer, unit)}"
             + carried, f"  {_provenance(answer)}"]
    cheaper = offers.filter(pl.col("excluded").is_not_null() & (
        pl.col("price_usd_per_gpu_hour") < answer["price_usd_per_gpu_hour"])).to_dicts()
    lines.append(f"cheaper offers passed over ({len(cheaper)}):")
    config = prices.config or load_market_config()
    lines += _listed(cheaper, lambda r: f"{_offer(r)} [{r['gpu_model']}]: "
                     f"{_usd(r['price_usd_per_gpu_hour'], unit)}/GPU-h; "
                     f"{_why(r, config, unit)}; {_provenance(r)}")
    return lines


def explain_scenario(prices: Prices, scenario: Scenario,
                     plans: pl.DataFrame | None, unit: Unit = USD) -> list[str]:
    """Each platform's cost in a scenario: the offer it rests on and hours x $/GPU-hour
    (amounts in `unit`)."""
    rows = evaluate(prices, scenario, plans)
    chosen = scenario.pricing or prices.pricing
    lines = [f"scenario {scenario.name}: {scenario.title} ({scenario.hours:g} hours"
             + (f" on {scenario.reference_gpu}, scaled by bf16 TFLOPS" if scenario.reference_gpu
                else "") + f"), prices at {_when(prices.as_of)}",
             unit.label("cost = hours x $/GPU-hour of each platform's cheapest comparable "
                        "offer")]
    offers = prices.offers(chosen)
    by_offer = offers.rename({"provider": "platform"})
    for r in rows.to_dicts():
        if r["pricing"] == "plan":
            lines.append(f"  {r['platform']} {r['offering']}: plan, "
                         f"{_usd(r['cost_usd'], unit, 2)} "
                         f"({plan_note(r, unit)}); static data (schemas/plans.csv)")
            continue
        match = by_offer.filter((pl.col("platform") == r["platform"])
                                & (pl.col("offering") == r["offering"])
                                & (pl.col("gpu_model") == r["gpu_model"])
                                & (pl.col("pricing") == r["pricing"])).to_dicts()
        source = f"; {_provenance(match[0])}" if match else ""
        lines.append(f"  {r['platform']} {r['offering']} [{r['gpu_model']}, {r['pricing']}]: "
                     f"{r['hours']:g} h x {_usd(r['usd_per_gpu_hour'], unit)} = "
                     f"{_usd(r['cost_usd'], unit, 2)}"
                     f" ({r['price_status']}){source}")
    left_out = offers.filter(pl.col("excluded").is_not_null())
    if scenario.gpus:
        left_out = left_out.filter(pl.col("gpu_model").is_in(resolve_gpus(scenario.gpus)))
    counts = left_out.group_by("excluded").len().sort("len", "excluded",
                                                      descending=[True, False])
    why = ", ".join(f"{n} {reason}" for reason, n in counts.iter_rows()) or "none"
    lines.append(f"left out (not comparable, pricing {', '.join(chosen)}): {why}")
    return lines
