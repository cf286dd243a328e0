"""Static reference data shipped with the code: plans (Colab, Kaggle, HF PRO ...) and GPU
ownership costs (purchase price, board power) for the rent-vs-buy scenario.

Both are dated CSV files in this package, edited by hand with a source URL and an as-of date
per row. They are not price observations (a plan sells a monthly allowance, a card is bought
once), so they live in their own warehouse tables (`plan`, `gpu_ownership`, kind 'static'),
re-synced from these files whenever the warehouse is opened for writing.
"""

from __future__ import annotations

from pathlib import Path

import pandera.polars as pa
import polars as pl

from schemas.gpus import load_catalog

PLANS_PATH = Path(__file__).with_name("plans.csv")
OWNERSHIP_PATH = Path(__file__).with_name("gpu_ownership.csv")
STATIC_KIND = "static"

PLAN_SCHEMA: dict[str, pl.DataType] = {
    "provider": pl.String(),
    "plan": pl.String(),
    "usd_per_month": pl.Float64(),
    "compute_units_per_month": pl.Float64(),
    "gpu_model": pl.String(),  # canonical catalog name; empty when the plan names no GPU
    "units_per_gpu_hour": pl.Float64(),  # compute units burned per hour on this GPU
    "gpu_hours_per_week": pl.Float64(),  # weekly GPU quota (Kaggle)
    "session_limit_h": pl.Float64(),
    "as_of": pl.Date(),
    "source_url": pl.String(),
    "notes": pl.String(),
}

OWNERSHIP_SCHEMA: dict[str, pl.DataType] = {
    "gpu_model": pl.String(),
    "purchase_usd": pl.Float64(),
    "power_watts": pl.Float64(),  # board power (TGP/TBP), the upper bound under load
    "as_of": pl.Date(),
    "source_url": pl.String(),
    "notes": pl.String(),
}


class ReferenceDataError(ValueError):
    """A reference CSV does not load or a row breaks a rule; the message names file and row."""


def _known_gpus() -> list[str]:
    return [spec.gpu_model for spec in load_catalog()]


class Plan(pa.DataFrameModel):
    provider: str = pa.Field(nullable=False, str_matches=r"^[a-z0-9]+$")
    plan: str = pa.Field(nullable=False, str_length={"min_value": 1})
    usd_per_month: float = pa.Field(nullable=False, ge=0)
    compute_units_per_month: float = pa.Field(nullable=True, ge=0)
    gpu_model: str = pa.Field(nullable=True, isin=_known_gpus())
    units_per_gpu_hour: float = pa.Field(nullable=True, gt=0)
    gpu_hours_per_week: float = pa.Field(nullable=True, ge=0, le=168)
    session_limit_h: float = pa.Field(nullable=True, gt=0, le=168)
    as_of: pl.Date = pa.Field(nullable=False)
    source_url: str = pa.Field(nullable=False, str_matches=r"^https?://\S+$")
    notes: str = pa.Field(nullable=True)

    @pa.dataframe_check(name="compute_units_need_a_burn_rate")
    def units_have_rate(cls, data: pa.PolarsData) -> pl.LazyFrame:
        # A plan sold in compute units is only comparable when the burn rate per GPU is known.
        return data.lazyframe.select(
            pl.col("compute_units_per_month").is_null()
            | pl.col("gpu_model").is_null()
            | pl.col("units_per_gpu_hour").is_not_null()
        )

    class Config:
        strict = True
        coerce = False
        unique = ("provider", "plan", "gpu_model")


class GpuOwnership(pa.DataFrameModel):
    gpu_model: str = pa.Field(nullable=False, isin=_known_gpus(), unique=True)
    purchase_usd: float = pa.Field(nullable=False, gt=0)
    power_watts: float = pa.Field(nullable=False, gt=0, le=2000)
    as_of: pl.Date = pa.Field(nullable=False)
    source_url: str = pa.Field(nullable=False, str_matches=r"^https?://\S+$")
    notes: str = pa.Field(nullable=True)

    class Config:
        strict = True
        coerce = False


def _read(path: Path, schema: dict[str, pl.DataType]) -> pl.DataFrame:
    try:
        raw = pl.read_csv(path, infer_schema=False)
    except (OSError, pl.exceptions.PolarsError) as exc:
        raise ReferenceDataError(f"{path.name}: cannot read: {exc}") from None
    if raw.columns != list(schema):
        raise ReferenceDataError(
            f"{path.name}: columns {raw.columns} differ from the expected {list(schema)}"
        )
    raw = raw.with_columns(pl.col(c).str.strip_chars().replace("", None) for c in raw.columns)
    converted = []
    for name, dtype in schema.items():
        column = pl.col(name)
        if dtype == pl.Date():
            converted.append(column.str.to_date("%Y-%m-%d", strict=False))
        elif dtype == pl.Float64():
            converted.append(column.cast(pl.Float64, strict=False))
        else:
            converted.append(column)
    frame = raw.select(converted)
    # A value that was present but did not convert is a typo, not a missing value.
    for name in schema:
        bad = raw.with_row_index("_row").filter(
            pl.col(name).is_not_null() & frame[name].is_null()
        )
        if bad.height:
            first = bad.row(0, named=True)
            raise ReferenceDataError(
                f"{path.name}: row {first['_row'] + 2}: {name}={first[name]!r} is not a valid "
                f"{'ISO date (YYYY-MM-DD)' if schema[name] == pl.Date() else 'number'}"
            )
    return frame


def _validate(frame: pl.DataFrame, model: type[pa.DataFrameModel], what: str) -> pl.DataFrame:
    try:
        model.validate(frame, lazy=True)
    except pa.errors.SchemaErrors as errors:
        cases = errors.failure_cases
        problems = []
        for case in cases.head(10).to_dicts():
            where = f"row {case['index'] + 2}: " if case.get("index") is not None else ""
            column = f"{case['column']} " if case.get("column") else ""
            problems.append(
                f"{where}{column}fails {case['check']} (value {str(case['failure_case'])[:80]!r})"
            )
        raise ReferenceDataError(f"{what}: " + "; ".join(problems)) from None
    return frame


def load_plans(path: Path = PLANS_PATH) -> pl.DataFrame:
    """The plans table, validated; raises ReferenceDataError naming the bad row."""
    return _validate(_read(path, PLAN_SCHEMA), Plan, path.name)


def load_ownership(path: Path = OWNERSHIP_PATH) -> pl.DataFrame:
    """The GPU ownership table, validated; raises ReferenceDataError naming the bad row."""
    return _validate(_read(path, OWNERSHIP_SCHEMA), GpuOwnership, path.name)
