"""`explain`: how a printed number was made, down to the captures it came from.

Each function returns plain text lines: the offers that counted (source, capture id,
observed time), the ones left out and why, and the arithmetic. `unit`: every amount in that
money (warehouse.unit.Unit: one currency at the ECB rate of the day explained), so the
arithmetic still adds up; USD by default. The market's lines are
reports.market.explain_market's (re-exported here), read without polars.
"""

from __future__ import annotations

import polars as pl

from reports.market.explain_market import (
    amount_text,
    explain_market,
    listed,
    offer_text,
    per_gpu,
    provenance,
    when_text,
    why_excluded,
)
from reports.market.scenarios import Scenario, evaluate, plan_note
from schemas.names import resolve_gpus
from warehouse.semantic import Prices, load_market_config
from warehouse.unit import USD, Unit

__all__ = ["explain_cheapest", "explain_market", "explain_scenario"]


def explain_cheapest(prices: Prices, gpu_models: list[str],
                     pricing: tuple[str, ...] | None = None, unit: Unit = USD) -> list[str]:
    """The answer of `gpuprices cheapest --gpu ...` and every cheaper offer it passed over,
    with the rule that left each one out; amounts in `unit`."""
    chosen = pricing or prices.pricing
    offers = prices.offers(chosen).filter(pl.col("gpu_model").is_in(gpu_models)).sort(
        Prices.ORDER)
    head = (f"cheapest {' / '.join(gpu_models)} offer at {when_text(prices.as_of)} (comparable "
            f"offers, pricing {', '.join(chosen)})")
    counted = offers.filter(pl.col("excluded").is_null())
    if counted.height == 0:
        return [head, "no offer matches"]
    answer = counted.row(0, named=True)
    carried = (f" (carried forward {answer['carried_days']} day(s))"
               if answer["carried_days"] else "")
    lines = [head, f"answer: {offer_text(answer)} [{answer['gpu_model']}]: "
             f"{per_gpu(answer, unit)}"
             + carried, f"  {provenance(answer)}"]
    cheaper = offers.filter(pl.col("excluded").is_not_null() & (
        pl.col("price_usd_per_gpu_hour") < answer["price_usd_per_gpu_hour"])).to_dicts()
    lines.append(f"cheaper offers passed over ({len(cheaper)}):")
    config = prices.config or load_market_config()
    lines += listed(cheaper, lambda r: f"{offer_text(r)} [{r['gpu_model']}]: "
                     f"{amount_text(r['price_usd_per_gpu_hour'], unit)}/GPU-h; "
                     f"{why_excluded(r, config, unit)}; {provenance(r)}")
    return lines


def explain_scenario(prices: Prices, scenario: Scenario,
                     plans: pl.DataFrame | None, unit: Unit = USD) -> list[str]:
    """Each platform's cost in a scenario: the offer it rests on and hours x $/GPU-hour
    (amounts in `unit`)."""
    rows = evaluate(prices, scenario, plans)
    chosen = scenario.pricing or prices.pricing
    lines = [f"scenario {scenario.name}: {scenario.title} ({scenario.hours:g} hours"
             + (f" on {scenario.reference_gpu}, scaled by bf16 TFLOPS" if scenario.reference_gpu
                else "") + f"), prices at {when_text(prices.as_of)}",
             unit.label("cost = hours x $/GPU-hour of each platform's cheapest comparable "
                        "offer")]
    offers = prices.offers(chosen)
    by_offer = offers.rename({"provider": "platform"})
    for r in rows.to_dicts():
        if r["pricing"] == "plan":
            lines.append(f"  {r['platform']} {r['offering']}: plan, "
                         f"{amount_text(r['cost_usd'], unit, 2)} "
                         f"({plan_note(r, unit)}); static data (schemas/plans.csv)")
            continue
        match = by_offer.filter((pl.col("platform") == r["platform"])
                                & (pl.col("offering") == r["offering"])
                                & (pl.col("gpu_model") == r["gpu_model"])
                                & (pl.col("pricing") == r["pricing"])).to_dicts()
        source = f"; {provenance(match[0])}" if match else ""
        lines.append(f"  {r['platform']} {r['offering']} [{r['gpu_model']}, {r['pricing']}]: "
                     f"{r['hours']:g} h x {amount_text(r['usd_per_gpu_hour'], unit)} = "
                     f"{amount_text(r['cost_usd'], unit, 2)}"
                     f" ({r['price_status']}){source}")
    left_out = offers.filter(pl.col("excluded").is_not_null())
    if scenario.gpus:
        left_out = left_out.filter(pl.col("gpu_model").is_in(resolve_gpus(scenario.gpus)))
    counts = left_out.group_by("excluded").len().sort("len", "excluded",
                                                      descending=[True, False])
    why = ", ".join(f"{n} {reason}" for reason, n in counts.iter_rows()) or "none"
    lines.append(f"left out (not comparable, pricing {', '.join(chosen)}): {why}")
    return lines
