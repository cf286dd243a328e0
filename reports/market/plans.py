"""Plans and free tiers (Colab, Kaggle, HF PRO ...) with an effective $/GPU-hour where the
plan says how many GPU-hours it includes."""

from __future__ import annotations

import polars as pl

from reports.markdown import money, number, table
from warehouse.fx import USD, Unit

WEEKS_PER_MONTH = 52 / 12


def gpu_hours_per_month() -> pl.Expr:
    """GPU-hours a plan includes per month: compute units / units per GPU-hour, or the weekly
    GPU-hour quota x 52/12; null when the plan does not say."""
    from_units = pl.col("compute_units_per_month") / pl.col("units_per_gpu_hour")
    from_quota = pl.col("gpu_hours_per_week") * WEEKS_PER_MONTH
    return pl.coalesce(from_units, from_quota)


def effective_plans(plans: pl.DataFrame) -> pl.DataFrame:
    """Each plan with gpu_hours_per_month and usd_per_gpu_hour (0 for free tiers)."""
    hours = gpu_hours_per_month()
    return plans.with_columns(
        hours.alias("gpu_hours_per_month"),
        pl.when(pl.col("usd_per_month") == 0).then(pl.lit(0.0))
        .otherwise(pl.col("usd_per_month") / hours).alias("usd_per_gpu_hour"),
    ).sort("provider", "usd_per_month", "plan")


def plans_section(plans: pl.DataFrame | None, unit: Unit = USD) -> str:
    parts = ["## 8. Plans and free tiers", ""]
    if plans is None:
        return "\n".join([*parts, "No plans data: this warehouse has no `plan` table yet.", ""])
    if plans.height == 0:
        return "\n".join([*parts, "No plans data: the `plan` table is empty.", ""])
    rows = effective_plans(plans)
    parts += [unit.label("Effective $/GPU-hour") + " = monthly price / GPU-hours included per "
              "month "
              "(compute units / units per GPU-hour, or weekly quota x 52/12); "
              "– where the plan states no quota.", ""]
    parts.append(table(
        ["provider", "plan", unit.label("$/month"), "GPU", "GPU-h/week", "session limit h",
         "GPU-h/month", unit.label("effective $/GPU-h"), "as of"],
        [[r["provider"], r["plan"], money(r["usd_per_month"], unit=unit), r["gpu_model"] or "–",
          number(r["gpu_hours_per_week"]), number(r["session_limit_h"]),
          number(r["gpu_hours_per_month"]), money(r["usd_per_gpu_hour"], unit=unit), r["as_of"]]
         for r in rows.to_dicts()],
        [False, False, True, False, True, True, True, True, False],
    ))
    parts.append("")
    return "\n".join(parts)
