"""Cost scenarios (reports/market/scenarios.toml): what a job costs on each platform.

cost = GPU-hours x $/GPU-hour of the offer. With a reference GPU, a job measured at `hours` on
it takes hours x bf16_tflops(reference) / bf16_tflops(G) on GPU G (catalog throughput).
"""

from __future__ import annotations

import tomllib
from dataclasses import dataclass
from pathlib import Path

import polars as pl

from reports.markdown import money, number, table
from reports.market.plans import effective_plans
from schemas.gpus import spec_of
from schemas.names import resolve_gpus
from warehouse.fx import USD, Unit
from warehouse.semantic import Prices

__all__ = ["COLUMNS", "SCENARIOS_PATH", "Scenario", "evaluate", "load_scenarios",
           "plan_note", "price_status", "scenario_table", "scenarios_section"]

SCENARIOS_PATH = Path(__file__).with_name("scenarios.toml")
COLUMNS = ("platform", "gpu_model", "offering", "pricing", "hours", "usd_per_gpu_hour",
           "cost_usd", "savings_pct", "price_status", "note")


@dataclass(frozen=True, slots=True)
class Scenario:
    name: str
    title: str
    hours: float
    reference_gpu: str | None = None
    gpus: tuple[str, ...] = ()
    min_vram_gb: float | None = None
    pricing: tuple[str, ...] | None = None  # None: the pricing set of the prices asked
    include_plans: bool = False


def load_scenarios(path: Path = SCENARIOS_PATH) -> list[Scenario]:
    data = tomllib.loads(path.read_text(encoding="utf-8"))
    return [
        Scenario(
            name=s["name"], title=s.get("title", s["name"]), hours=float(s["hours"]),
            reference_gpu=s.get("reference_gpu"), gpus=tuple(s.get("gpus", ())),
            min_vram_gb=s.get("min_vram_gb"),
            pricing=tuple(s["pricing"]) if "pricing" in s else None,
            include_plans=bool(s.get("include_plans", False)),
        )
        for s in data["scenario"]
    ]


def price_status(source_kind: pl.Expr, carried_days: pl.Expr) -> pl.Expr:
    """static (a dated file), carried (its source was last seen on an earlier day) or live."""
    return (pl.when(source_kind == "static").then(pl.lit("static"))
            .when(carried_days > 0).then(pl.lit("carried")).otherwise(pl.lit("live")))


def _offer_rows(prices: Prices, scenario: Scenario) -> pl.DataFrame:
    offers = prices.comparable(scenario.pricing)
    if scenario.gpus:
        offers = offers.filter(pl.col("gpu_model").is_in(resolve_gpus(scenario.gpus)))
    if scenario.min_vram_gb:
        offers = offers.filter(pl.col("gpu_memory_gb") >= scenario.min_vram_gb)
    hours: pl.Expr = pl.lit(scenario.hours)
    if scenario.reference_gpu:
        reference = spec_of(resolve_gpus([scenario.reference_gpu])[0])
        if reference is None or not reference.bf16_tflops:
            raise ValueError(f"no throughput for reference GPU {scenario.reference_gpu!r}")
        offers = offers.filter(pl.col("bf16_tflops") > 0)
        hours = (pl.lit(scenario.hours * reference.bf16_tflops) / pl.col("bf16_tflops")).round(2)
    return (
        offers.with_columns(hours.alias("hours"))
        .with_columns(
            (pl.col("hours") * pl.col("price_usd_per_gpu_hour")).round(2).alias("cost_usd"),
            price_status(pl.col("source_kind"), pl.col("carried_days")).alias("price_status"))
        # the columns read below alone: the sort and the grouping move 12 of ~50 (the rows
        # are ordered by the keys alone, so the rows kept are the same)
        .select("provider", "gpu_model", "offering", "pricing", "hours",
                "price_usd_per_gpu_hour", "cost_usd", "price_status", "carried_days", "region")
        # The cheapest way per provider; equal costs: the fresher price, then by name.
        .sort("cost_usd", "carried_days", "gpu_model", "offering", "region")
        .group_by("provider", maintain_order=True).first()
        .select(pl.col("provider").alias("platform"), "gpu_model", "offering", "pricing",
                "hours", pl.col("price_usd_per_gpu_hour").alias("usd_per_gpu_hour"),
                "cost_usd", "price_status", pl.lit(None, pl.String).alias("note"))
    )


def _plan_rows(plans: pl.DataFrame | None, scenario: Scenario) -> pl.DataFrame | None:
    if plans is None or plans.height == 0:
        return None
    rows = effective_plans(plans).filter(
        pl.col("gpu_model").is_not_null(),  # a plan without a GPU cannot run the job
        pl.col("session_limit_h").is_null() | (pl.col("session_limit_h") >= scenario.hours),
        pl.col("gpu_hours_per_week").is_null()
        | (pl.col("gpu_hours_per_week") >= scenario.hours),
    )
    if scenario.gpus:
        rows = rows.filter(pl.col("gpu_model").is_in(resolve_gpus(scenario.gpus)))
    if scenario.min_vram_gb:
        memory = {m: spec.memory_gb for m in rows["gpu_model"].drop_nulls().unique()
                  if (spec := spec_of(m))}
        rows = rows.filter(pl.col("gpu_model").replace_strict(memory, default=0.0)
                           >= scenario.min_vram_gb)
    kind = pl.col("kind") if "kind" in rows.columns else pl.lit("static")
    return rows.select(
        pl.col("provider").alias("platform"), "gpu_model", pl.col("plan").alias("offering"),
        pl.lit("plan").alias("pricing"), pl.lit(scenario.hours).alias("hours"),
        pl.col("usd_per_gpu_hour"),
        pl.col("usd_per_month").round(2).alias("cost_usd"),
        pl.when(kind == "live").then(pl.lit("live")).otherwise(pl.lit("static"))
        .alias("price_status"),
        pl.when(pl.col("usd_per_month") == 0).then(pl.lit("free tier"))
        .otherwise(pl.format("plan: ${}/month", pl.col("usd_per_month").round(2)))
        .alias("note"),
    # A plan priced per GPU type is one way to do the job: keep its cheapest GPU.
    ).sort("cost_usd", "usd_per_gpu_hour", "gpu_model").group_by(
        "platform", "offering", maintain_order=True).first()


def evaluate(prices: Prices, scenario: Scenario,
             plans: pl.DataFrame | None = None) -> pl.DataFrame:
    """One row per platform, cheapest first, with savings vs the most expensive platform."""
    frames = [_offer_rows(prices, scenario)]
    if scenario.include_plans and (plan_rows := _plan_rows(plans, scenario)) is not None:
        frames.append(plan_rows.select(frames[0].columns).cast(
            {"hours": pl.Float64, "usd_per_gpu_hour": pl.Float64, "cost_usd": pl.Float64}))
    rows = pl.concat(frames, how="vertical_relaxed")
    top = rows["cost_usd"].max()
    savings = (pl.lit(0.0) if not top else
               ((1 - pl.col("cost_usd") / pl.lit(top)) * 100).round(1))
    return rows.with_columns(savings.alias("savings_pct")).sort(
        "cost_usd", "platform", "offering").select(COLUMNS)


def plan_note(r: dict[str, object], unit: Unit) -> str:
    """A plan's note names its monthly price: in `unit` when it is not USD."""
    note = str(r["note"] or "")
    if unit.converting and r["pricing"] == "plan" and note.startswith("plan: $"):
        return f"plan: {money(r['cost_usd'], unit=unit)}/month"  # type: ignore[arg-type]
    return note


def scenario_table(rows: pl.DataFrame, unit: Unit = USD) -> str:
    return table(
        ["platform", "GPU", "offering", "pricing", "hours", unit.label("$/GPU-h"), "cost",
         "savings vs most expensive", "price"],
        [[r["platform"], r["gpu_model"] or "–", r["offering"], r["pricing"], number(r["hours"], 2),
          money(r["usd_per_gpu_hour"], unit=unit), money(r["cost_usd"], unit=unit)
          + (f" ({plan_note(r, unit)})" if r["note"] else ""),
          "–" if r["savings_pct"] is None else f"{r['savings_pct']:.0f}%", r["price_status"]]
         for r in rows.to_dicts()],
        [False, False, False, False, True, True, True, True, False],
    )


def scenarios_section(prices: Prices, plans: pl.DataFrame | None,
                      scenarios: list[Scenario] | None = None, unit: Unit = USD) -> str:
    parts = ["## 5. Cost scenarios", "",
             unit.label("cost = GPU-hours x $/GPU-hour") + " of each platform's cheapest "
             "comparable offer "
             f"(pricing {', '.join(prices.pricing)} unless a scenario names its own). Where a "
             "reference GPU is given, the job takes hours x bf16_tflops(reference) / "
             "bf16_tflops(GPU) on another GPU. Scenarios live in "
             "reports/market/scenarios.toml.", ""]
    for scenario in scenarios or load_scenarios():
        parts += [f"### {scenario.title}", ""]
        rows = evaluate(prices, scenario, plans)
        if rows.height == 0:
            parts += ["No matching offers in the warehouse.", ""]
            continue
        parts += [scenario_table(rows, unit), ""]
    if plans is None:
        parts += ["(No plans data: free tiers and plans are not included.)", ""]
    return "\n".join(parts)
