"""Rent vs buy: hours of use after which owning a card beats renting the same GPU.

power $/hour = power_watts / 1000 x $/kWh
break-even hours = purchase price / (cheapest rental $/GPU-hour - power $/hour)
Renting always wins when the rental costs less per hour than the power (no break-even).
"""

from __future__ import annotations

import polars as pl

from reports.markdown import money, number, table
from warehouse.fx import USD, Unit
from warehouse.semantic import Prices

__all__ = ["HOURS_PER_DAY_OF_USE", "USD_PER_KWH", "break_even", "cheapest_rental",
           "rent_vs_buy_section"]

USD_PER_KWH = 0.15  # a typical US residential tariff; pass another to `break_even`
HOURS_PER_DAY_OF_USE = 8.0


def cheapest_rental(prices: Prices) -> pl.DataFrame:
    """THE cheapest rental per GPU model (the cheapest comparable offer): what both the
    card-only break-even and the cost of ownership (reports.market.tco) compare with."""
    return prices.cheapest().select(
        "gpu_model", pl.col("price_usd_per_gpu_hour").alias("rent_usd_per_hour"),
        pl.col("provider").alias("rent_provider"))


def break_even(ownership: pl.DataFrame, prices: Prices,
               usd_per_kwh: float = USD_PER_KWH) -> pl.DataFrame:
    power = (pl.col("power_watts") / 1000 * usd_per_kwh).round(4)
    margin = pl.col("rent_usd_per_hour") - pl.col("power_usd_per_hour")
    hours = pl.when(margin > 0).then((pl.col("purchase_usd") / margin).round(0))
    return (
        ownership.join(cheapest_rental(prices), on="gpu_model", how="left")
        .with_columns(power.alias("power_usd_per_hour"))
        .with_columns(hours.alias("break_even_hours"))
        .with_columns((pl.col("break_even_hours") / HOURS_PER_DAY_OF_USE / 30.4).round(1)
                      .alias("break_even_months_at_8h_day"))
        .select("gpu_model", "purchase_usd", "power_watts", "power_usd_per_hour",
                "rent_usd_per_hour", "rent_provider", "break_even_hours",
                "break_even_months_at_8h_day")
        .sort("gpu_model")
    )


def rent_vs_buy_section(ownership: pl.DataFrame | None, prices: Prices,
                        tco: str | None = None, unit: Unit = USD) -> str:
    """`tco`: the full cost of ownership subsection (reports.market.tco.tco_section), first."""
    parts = ["## 7. Rent vs buy", ""]
    if tco:
        parts += [tco, "### The card alone", ""]
    if ownership is None or ownership.height == 0:
        return "\n".join([*parts, "No ownership data: this warehouse has no `gpu_ownership` "
                          "rows yet.", ""])
    parts += [unit.label("Break-even hours = purchase price / (cheapest rental $/GPU-hour − "
                         "power $/hour)") + f"; power at {money(USD_PER_KWH, unit=unit)}/kWh. "
              "Months assume "
              f"{HOURS_PER_DAY_OF_USE:g} h of use a day.", ""]
    rows = break_even(ownership, prices)
    parts.append(table(
        ["GPU", "purchase", "power W", unit.label("power $/h"), "cheapest rental",
         "break-even hours", "months at 8 h/day"],
        [[r["gpu_model"], money(r["purchase_usd"], digits=0, unit=unit), number(r["power_watts"]),
          money(r["power_usd_per_hour"], digits=3, unit=unit),
          (f"{money(r['rent_usd_per_hour'], unit=unit)} ({r['rent_provider']})"
           if r["rent_usd_per_hour"] is not None else "not rented anywhere"),
          ("–" if r["rent_usd_per_hour"] is None else
           "never" if r["break_even_hours"] is None else number(r["break_even_hours"])),
          number(r["break_even_months_at_8h_day"])]
         for r in rows.to_dicts()],
        [False, True, True, True, True, True, True],
    ))
    parts.append("")
    return "\n".join(parts)
