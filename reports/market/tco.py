"""Build vs rent with the full cost of ownership of a server (not only the card).

Per server of g GPUs bought for P dollars, drawing k kW at full load, per hour (8,760 h/year):
  capital    = P x CRF / 8760, CRF = r (1+r)^n / ((1+r)^n - 1)   (r: cost of capital, n: years)
  operations = P x operations_share / 8760
  colocation = k x colocation $/kW-month x 12 / 8760
  power      = k x (idle + (1 - idle) x u) x PUE x $/kWh           (u: utilization)
  cost per useful GPU-hour = (capital + operations + colocation + power) / (g x u)
Break-even utilization against a rental price R ($/GPU-hour): owning costs the same when
  F + A x u = R x g x u, F = capital + operations + colocation + idle power, A = the power a
  unit of utilization adds, so u* = F / (R x g - A) ("never" when above 100 %).
Payback month (simple, no discounting): P / monthly saving, the saving being the rent of the
  useful hours (R x g x u x 730) less the cash costs of owning (operations, colocation, power).
Assumptions: reports/market/tco.toml (dated, sourced); servers: schemas/server_prices.csv.
The rental prices compared with: the market price, and THE cheapest rental
(reports.market.rent_vs_buy.cheapest_rental, the same one the card-only figure uses).
"""

from __future__ import annotations

import math
import tomllib
from dataclasses import dataclass, fields, replace
from pathlib import Path

import polars as pl

from reports.markdown import money, table
from reports.market.rent_vs_buy import cheapest_rental
from warehouse.fx import USD, Unit
from warehouse.semantic import ALL, Prices

__all__ = ["SERVERS_CSV", "TCO_TOML", "Assumptions", "break_even_utilization", "load_assumptions",
           "load_servers", "payback_month", "rental_yardsticks", "tco_rows", "tco_section",
           "tco_sheet"]

TCO_TOML = Path(__file__).with_name("tco.toml")
SERVERS_CSV = Path(__file__).parents[2] / "schemas" / "server_prices.csv"
HOURS_PER_YEAR = 8760.0
HOURS_PER_MONTH = HOURS_PER_YEAR / 12

# name -> (low, high): the range each assumption may take (flags and TOML are checked).
RANGES = {"depreciation_years": (1, 15), "cost_of_capital": (0, 0.5), "usd_per_kwh": (0, 2),
          "pue": (1, 3), "colocation_usd_per_kw_month": (0, 2000),
          "operations_share": (0, 1), "utilization": (0.01, 1), "idle_power_share": (0, 1)}


@dataclass(frozen=True, slots=True)
class Assumptions:
    depreciation_years: float = 5
    cost_of_capital: float = 0.08
    usd_per_kwh: float = 0.10
    pue: float = 1.58
    colocation_usd_per_kw_month: float = 184.06
    operations_share: float = 0.10
    utilization: float = 0.70
    idle_power_share: float = 0.30

    def __post_init__(self) -> None:
        for name, (low, high) in RANGES.items():
            value = getattr(self, name)
            if not low <= value <= high:
                raise ValueError(f"{name} must be between {low:g} and {high:g}, not {value:g}")

    def with_overrides(self, **values: float | None) -> Assumptions:
        return replace(self, **{k: float(v) for k, v in values.items() if v is not None})


def load_assumptions(path: Path = TCO_TOML) -> Assumptions:
    data = tomllib.loads(path.read_text(encoding="utf-8"))
    unknown = sorted(set(data) - {f.name for f in fields(Assumptions)})
    if unknown:
        raise ValueError(f"{path.name}: unknown keys {', '.join(unknown)}")
    return Assumptions(**{k: float(v) for k, v in data.items()})


def load_servers(path: Path = SERVERS_CSV) -> pl.DataFrame:
    return pl.read_csv(path, schema_overrides={"as_of": pl.String})


def _crf(a: Assumptions) -> float:
    r, n = a.cost_of_capital, a.depreciation_years
    return 1 / n if r == 0 else r * (1 + r) ** n / ((1 + r) ** n - 1)


def _hourly(server_usd: float, server_kw: float, a: Assumptions) -> dict[str, float]:
    """The hourly cost items of one server at utilization a.utilization."""
    energy = server_kw * a.pue * a.usd_per_kwh
    return {
        "capital": server_usd * _crf(a) / HOURS_PER_YEAR,
        "operations": server_usd * a.operations_share / HOURS_PER_YEAR,
        "colocation": server_kw * a.colocation_usd_per_kw_month * 12 / HOURS_PER_YEAR,
        "power": energy * (a.idle_power_share + (1 - a.idle_power_share) * a.utilization),
        "idle_power": energy * a.idle_power_share,
        "power_per_utilization": energy * (1 - a.idle_power_share),
    }


def break_even_utilization(server_usd: float, server_kw: float, gpus: int, rent: float | None,
                           a: Assumptions) -> float | None:
    """The utilization above which owning costs less per useful GPU-hour than `rent`."""
    if rent is None:
        return None
    h = _hourly(server_usd, server_kw, a)
    fixed = h["capital"] + h["operations"] + h["colocation"] + h["idle_power"]
    margin = rent * gpus - h["power_per_utilization"]
    if margin <= 0:
        return None
    u = fixed / margin
    return u if u <= 1 else None


def payback_month(server_usd: float, server_kw: float, gpus: int, rent: float | None,
                  a: Assumptions) -> int | None:
    """The month the purchase is paid back by not renting the useful hours (None: never)."""
    if rent is None:
        return None
    h = _hourly(server_usd, server_kw, a)
    saving = (rent * gpus * a.utilization - h["operations"] - h["colocation"] - h["power"]) \
        * HOURS_PER_MONTH
    return math.ceil(server_usd / saving) if saving > 0 else None


def tco_rows(servers: pl.DataFrame, a: Assumptions, market: dict[str, float],
             cheapest: dict[str, tuple[float, str]]) -> pl.DataFrame:
    """One row per server: hourly items, cost per useful GPU-hour, break-even, payback.

    `market`: published market $/GPU-hour per model; `cheapest`: (price, provider) of the
    cheapest comparable rental per model.
    """
    rows = []
    for s in servers.to_dicts():
        h = _hourly(s["server_usd"], s["server_kw"], a)
        total = h["capital"] + h["operations"] + h["colocation"] + h["power"]
        rent_market = market.get(s["gpu_model"])
        rent_cheap, provider = cheapest.get(s["gpu_model"], (None, None))
        args = (s["server_usd"], s["server_kw"], s["gpus"])
        rows.append({
            "gpu_model": s["gpu_model"], "gpus": s["gpus"], "server_usd": s["server_usd"],
            "kind": s["kind"], "as_of": s["as_of"],
            "capital_usd_h": h["capital"], "operations_usd_h": h["operations"],
            "colocation_usd_h": h["colocation"], "power_usd_h": h["power"],
            "total_usd_h": total,
            "usd_per_useful_gpu_hour": total / (s["gpus"] * a.utilization),
            "market_usd_per_gpu_hour": rent_market,
            "break_even_util_vs_market": break_even_utilization(*args, rent_market, a),
            "payback_month_vs_market": payback_month(*args, rent_market, a),
            "cheapest_rental_usd": rent_cheap, "cheapest_provider": provider,
            "break_even_util_vs_cheapest": break_even_utilization(*args, rent_cheap, a),
            "payback_month_vs_cheapest": payback_month(*args, rent_cheap, a),
        })
    return pl.DataFrame(rows, infer_schema_length=None)


def tco_sheet(server: dict[str, object], a: Assumptions, rent: float | None) -> list[list[str]]:
    """A spreadsheet-style breakdown of one server: item, formula, value."""
    usd, kw, g = float(server["server_usd"]), float(server["server_kw"]), int(server["gpus"])  # type: ignore[arg-type]
    h = _hourly(usd, kw, a)
    total = h["capital"] + h["operations"] + h["colocation"] + h["power"]
    u = a.utilization
    be = break_even_utilization(usd, kw, g, rent, a)
    pay = payback_month(usd, kw, g, rent, a)
    return [
        ["server", f"{g} x {server['gpu_model']} ({server['kind']}, {server['as_of']})",
         f"${usd:,.0f}"],
        ["capital recovery factor", f"r={a.cost_of_capital:g}, n={a.depreciation_years:g} y",
         f"{_crf(a):.5f}"],
        ["capital $/h", f"{usd:,.0f} x {_crf(a):.5f} / 8760", f"{h['capital']:.4f}"],
        ["operations $/h", f"{usd:,.0f} x {a.operations_share:g} / 8760",
         f"{h['operations']:.4f}"],
        ["colocation $/h", f"{kw:g} kW x {a.colocation_usd_per_kw_month:g} x 12 / 8760",
         f"{h['colocation']:.4f}"],
        ["power $/h", f"{kw:g} kW x ({a.idle_power_share:g} + {1 - a.idle_power_share:g} x "
         f"{u:g}) x {a.pue:g} x {a.usd_per_kwh:g}", f"{h['power']:.4f}"],
        ["total $/h", "capital + operations + colocation + power", f"{total:.4f}"],
        ["$/useful GPU-hour", f"{total:.4f} / ({g} x {u:g})", f"{total / (g * u):.4f}"],
        ["rental $/GPU-hour", "compared with", "–" if rent is None else f"{rent:.4f}"],
        ["break-even utilization", "fixed / (rent x GPUs - power per utilization)",
         "never" if be is None else f"{be:.1%}"],
        ["payback month", "server / (rent of useful hours - cash costs) per month",
         "never" if pay is None else str(pay)],
    ]


def tco_section(rows: pl.DataFrame, a: Assumptions, unit: Unit = USD) -> str:
    """The report's full cost of ownership table (a subsection of rent vs buy); amounts in
    `unit` (the assumptions are USD: converted at the same rate)."""
    parts = ["### Full cost of ownership (server, power, colocation, operations)", "",
             f"{a.depreciation_years:g}-year write-off at {a.cost_of_capital:.0%} cost of "
             f"capital, power at {money(a.usd_per_kwh, unit=unit)}/kWh x PUE {a.pue:g}, "
             f"colocation {money(a.colocation_usd_per_kw_month, unit=unit)}/kW-month, "
             "operations "
             f"{a.operations_share:.0%} of the price a year, {a.utilization:.0%} utilization "
             "(reports/market/tco.toml; servers: schemas/server_prices.csv).", ""]
    if rows.height == 0:
        return "\n".join([*parts, "No server prices.", ""])

    def util(value: float | None) -> str:
        return "never" if value is None else f"{value:.0%}"

    parts.append(table(
        ["server", "price", unit.label("$/h owned"), unit.label("$/useful GPU-h"), "market",
         "break-even util.",
         "payback month", "cheapest rental", "break-even util.", "payback month"],
        [[f"{r['gpus']} x {r['gpu_model']}", money(r["server_usd"], digits=0, unit=unit),
          money(r["total_usd_h"], unit=unit), money(r["usd_per_useful_gpu_hour"], unit=unit),
          money(r["market_usd_per_gpu_hour"], unit=unit), util(r["break_even_util_vs_market"]),
          r["payback_month_vs_market"] or "never", money(r["cheapest_rental_usd"], unit=unit),
          util(r["break_even_util_vs_cheapest"]), r["payback_month_vs_cheapest"] or "never"]
         for r in rows.to_dicts()],
        [False, True, True, True, True, True, True, True, True, True]))
    parts.append("")
    return "\n".join(parts)


def rental_yardsticks(prices: Prices, market: pl.DataFrame
                      ) -> tuple[dict[str, float], dict[str, tuple[float, str]]]:
    """(published market $/GPU-hour per model, (price, provider) of the cheapest rental per
    model); `market`: the day's market values."""
    published = market.filter((pl.col("segment") == ALL)
                              & pl.col("market_usd_per_gpu_hour").is_not_null())
    return (dict(zip(published["gpu_model"], published["market_usd_per_gpu_hour"],
                     strict=True)),
            {r["gpu_model"]: (r["rent_usd_per_hour"], r["rent_provider"])
             for r in cheapest_rental(prices).to_dicts()})
