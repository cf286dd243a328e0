"""The price observation: one pandera model, and the split of a batch into good and quarantine.

One observation = one offering x pricing x region, as seen in one raw capture at one time.
Rows that fail a check are never dropped and never stored as observations: they go to
quarantine with the name of the check they failed. `validate` runs the screens
(schemas/screens.py: unknown GPU, currency, count in the name, the price band, page
invariants) and then this model's checks; `validate_guarded` adds the suspect-layout guard.
"""

from __future__ import annotations

from collections import Counter
from dataclasses import dataclass, field
from datetime import datetime

import pandera.polars as pa
import polars as pl
from pandera.engines.polars_engine import Date, DateTime

from contract import PARSED_SCHEMA, PRICING, STOCK_LEVELS, RawCapture, conform
from schemas.fx import FX_COLUMNS
from schemas.gpus import UNKNOWN_GPU, normalise_gpu_name
from schemas.invariants import suspect_layout
from schemas.screens import ScreenContext, screen_reasons, volume_gate

SOURCE_KINDS = ("api", "page", "catalog", "static")
_ADDED_IN_V6 = ("term_months", "effective_from", "currency", "price_native_per_hour",
                "gpus_available")
_ADDED_IN_V10 = ("stock_level",)

OBSERVATION_SCHEMA: dict[str, pl.DataType] = {
    "observed_at": pl.Datetime("us", "UTC"),
    "run_id": pl.String(),
    "capture_id": pl.String(),
    "source": pl.String(),
    "source_url": pl.String(),
    # In the warehouse's column order: the columns added by migration 006 come last.
    **{c: t for c, t in PARSED_SCHEMA.items() if c not in (*_ADDED_IN_V6, *_ADDED_IN_V10)},
    "gpu_model": pl.String(),
    "price_usd_per_gpu_hour": pl.Float64(),
    **{c: t for c, t in PARSED_SCHEMA.items() if c in _ADDED_IN_V6},
    # Added in schema version 7: why a stored row is kept out of the market (an unconfirmed
    # jump, schemas.screens.flag_jumps); null for a row nothing flagged.
    "screen_flag": pl.String(),
    **FX_COLUMNS,  # migration 009: the rate a non-USD price was converted at, and its day
    **{c: t for c, t in PARSED_SCHEMA.items() if c in _ADDED_IN_V10},
}

class Observation(pa.DataFrameModel):
    """A validated price observation (polars backend)."""

    observed_at: DateTime = pa.Field(nullable=False,
                                     dtype_kwargs={"time_unit": "us", "time_zone": "UTC"})
    run_id: str = pa.Field(nullable=False)
    capture_id: str = pa.Field(nullable=False, str_length={"min_value": 64, "max_value": 64})
    source: str = pa.Field(nullable=False)
    source_url: str = pa.Field(nullable=False)
    provider: str = pa.Field(nullable=False, str_length={"min_value": 1})
    offering: str = pa.Field(nullable=False, str_length={"min_value": 1})
    gpu_name: str = pa.Field(nullable=True)
    gpu_count: float = pa.Field(nullable=False, gt=0, le=1024)
    gpu_memory_gb: float = pa.Field(nullable=True, gt=0, le=2048)
    vcpus: float = pa.Field(nullable=True, ge=0)
    ram_gb: float = pa.Field(nullable=True, ge=0)
    region: str = pa.Field(nullable=False)
    pricing: str = pa.Field(nullable=False, isin=list(PRICING))
    price_usd_per_hour: float = pa.Field(nullable=False, gt=0)
    billing_increment_s: int = pa.Field(nullable=True, ge=0)
    available: bool = pa.Field(nullable=True)
    gpu_only: bool = pa.Field(nullable=False)
    monthly_fee_usd: float = pa.Field(nullable=True, ge=0)
    term_months: float = pa.Field(nullable=True, gt=0, le=120)
    effective_from: Date = pa.Field(nullable=True)
    currency: str = pa.Field(nullable=True, str_matches=r"^[A-Z]{3}$")
    price_native_per_hour: float = pa.Field(nullable=True, gt=0)
    gpus_available: float = pa.Field(nullable=True, ge=0)
    stock_level: str = pa.Field(nullable=True, isin=list(STOCK_LEVELS))
    fx_rate: float = pa.Field(nullable=True, gt=0)
    fx_date: Date = pa.Field(nullable=True)
    gpu_model: str = pa.Field(nullable=False)
    price_usd_per_gpu_hour: float = pa.Field(nullable=False, gt=0)
    screen_flag: str = pa.Field(nullable=True)

    class Config:
        strict = True
        coerce = False


@dataclass(frozen=True, slots=True)
class ValidatedBatch:
    good: pl.DataFrame  # OBSERVATION_SCHEMA
    quarantined: pl.DataFrame  # OBSERVATION_SCHEMA + failed_check
    suspect: str | None = None  # why the whole batch looks like a misread layout (all quarantined)
    screens: Counter[str] = field(default_factory=Counter)  # rows each screen held (or counted)


def to_observations(
    parsed: pl.DataFrame, raw: RawCapture, run_id: str, *, observed_at: datetime | None = None
) -> pl.DataFrame:
    """Add provenance, the canonical gpu_model and the per-GPU price to a parser's frame."""
    frame = conform(parsed)
    # Only the form factor in the offering name helps the normaliser (gpu_8x_h100_sxm5), so
    # reduce it to that token first: a batch then has a handful of distinct names to resolve.
    frame = frame.with_columns(
        pl.col("offering").str.to_uppercase().str.extract(r"(SXM|PCIE|NVL)", 1).alias("_hint")
    )
    keys = ["gpu_name", "gpu_memory_gb", "_hint"]
    names = frame.select(keys).unique().with_columns(
        pl.struct(keys)
        .map_elements(
            lambda r: normalise_gpu_name(r["gpu_name"], r["gpu_memory_gb"], r["_hint"]),
            return_dtype=pl.String,
        )
        .alias("gpu_model")
    )
    frame = frame.join(names, on=keys, how="left", nulls_equal=True, maintain_order="left")
    return frame.with_columns(
        pl.lit(observed_at or raw.fetched_at).cast(pl.Datetime("us", "UTC")).alias("observed_at"),
        pl.lit(run_id).alias("run_id"),
        pl.lit(raw.capture_id).alias("capture_id"),
        pl.lit(raw.source).alias("source"),
        pl.lit(raw.url).alias("source_url"),
        pl.col("gpu_model").fill_null(UNKNOWN_GPU),
        pl.col("gpu_only").fill_null(False),
        (pl.col("price_usd_per_hour") / pl.col("gpu_count")).alias("price_usd_per_gpu_hour"),
        pl.lit(None, pl.String).alias("screen_flag"),
        *(pl.lit(None, kind).alias(column) for column, kind in FX_COLUMNS.items()),
    ).select(list(OBSERVATION_SCHEMA))


def validate(observations: pl.DataFrame, context: ScreenContext | None = None) -> ValidatedBatch:
    """Split a batch into rows that pass every screen and check, and rows quarantined with
    the screens' reasons and the failed checks (joined by "; "). `context`: what the
    warehouse knows (the market, for the band); None for a bare parse."""
    frame = observations.select(list(OBSERVATION_SCHEMA))
    screened, counts = screen_reasons(frame, context)
    checked = _check_reasons(frame)
    if isinstance(checked, str):  # a schema-level failure: the whole batch is suspect
        return ValidatedBatch(good=frame.clear(), screens=counts,
                              quarantined=frame.with_columns(pl.lit(checked)
                                                             .alias("failed_check")))
    joined = pl.concat_str([pl.lit(screened), pl.lit(checked)], separator="; ",
                           ignore_nulls=True)  # "" when the row passed both
    marked = frame.with_columns(pl.when(joined != "").then(joined).alias("failed_check"))
    return ValidatedBatch(good=marked.filter(pl.col("failed_check").is_null())
                          .drop("failed_check"),
                          quarantined=marked.filter(pl.col("failed_check").is_not_null()),
                          screens=counts)


def _check_passes(column: str, check: pa.Check) -> pl.Expr | None:
    """True where a row passes one of the model's built-in checks (the expression pandera's
    polars backend evaluates; a null passes, as pandera ignores nulls in checks); None for a
    check not written here, which leaves the batch to pandera."""
    value, stats = pl.col(column), check.statistics
    if check.name == "greater_than":
        passes = value > stats["min_value"]
    elif check.name == "greater_than_or_equal_to":
        passes = value >= stats["min_value"]
    elif check.name == "less_than_or_equal_to":
        passes = value <= stats["max_value"]
    elif check.name == "isin":
        passes = value.is_in(list(stats["allowed_values"]))
    elif check.name == "str_matches":
        pattern = stats["pattern"]
        passes = value.str.contains(pattern if pattern.startswith("^") else f"^{pattern}")
    elif check.name == "str_length" and stats.get("exact_value") is None:
        length = value.str.len_chars()
        passes = pl.lit(True)
        if stats.get("min_value") is not None:
            passes = passes & (length >= stats["min_value"])
        if stats.get("max_value") is not None:
            passes = passes & (length <= stats["max_value"])
    else:
        return None
    return passes | value.is_null()


def _all_pass_expression() -> tuple[dict[str, pl.DataType], pl.Expr] | None:
    """(the model's column types, an expression true when every row passes every check), from
    the Observation model itself; None when the model has a check written only in pandera."""
    schema = Observation.to_schema()
    if schema.checks or not schema.strict or schema.coerce or schema.unique:
        return None
    dtypes: dict[str, pl.DataType] = {}
    passes: list[pl.Expr] = []
    for name, column in schema.columns.items():
        if column.unique or column.coerce or column.dtype is None:
            return None
        dtypes[name] = column.dtype.type
        value = pl.col(name)
        if not column.nullable:
            passes.append(value.is_not_null())
        if dtypes[name].is_float():  # NaN: left to pandera, whatever the column allows
            passes.append(value.is_nan().fill_null(False).not_())
        for check in column.checks:
            if (expression := _check_passes(name, check)) is None or not check.ignore_na:
                return None
            passes.append(expression)
    return dtypes, pl.all_horizontal(passes).fill_null(False).all()


# pandera costs ~20 ms per batch whatever its size (most of a small source's ingest); a batch
# whose every row passes these same checks, written as one polars expression, skips it.
# Any failure, or a type that differs, goes to pandera, which names the failed checks.
_ALL_PASS = _all_pass_expression()


def _all_pass(frame: pl.DataFrame) -> bool:
    """True when `frame` has the model's exact columns and types and every row passes every
    check: pandera would find nothing (tests/unit/test_observation_checks.py)."""
    if _ALL_PASS is None:
        return False
    dtypes, expression = _ALL_PASS
    if dict(frame.schema) != dtypes:
        return False
    return frame.height == 0 or bool(frame.select(expression).item())


def _check_reasons(frame: pl.DataFrame) -> pl.Series | str:
    """The pandera model's failed checks per row (null: passed), aligned with `frame`; or,
    for a schema-level failure (wrong dtype, missing column), its reason for the whole batch."""
    none = pl.Series("checks", [None] * frame.height, dtype=pl.String)
    if _all_pass(frame):
        return none
    try:
        Observation.validate(frame, lazy=True)
    except pa.errors.SchemaErrors as errors:
        cases = errors.failure_cases
        row_level = cases.filter(pl.col("index").is_not_null())
        if row_level.height == 0:
            return "; ".join(sorted(set(cases["check"].cast(pl.String).to_list())))
        reasons = (
            row_level.with_columns(
                pl.when(pl.col("schema_context") == "Column")
                .then(pl.col("column") + ": " + pl.col("check"))
                .otherwise(pl.col("check"))
                .alias("reason")
            )
            .group_by("index")
            .agg(pl.col("reason").unique().sort().str.join("; ").alias("checks"))
            .with_columns(pl.col("index").cast(pl.UInt32))
        )
        return (frame.select(pl.int_range(pl.len(), dtype=pl.UInt32).alias("index"))
                .join(reasons, on="index", how="left", maintain_order="left")["checks"])
    return none


def validate_guarded(observations: pl.DataFrame, *, aggregator: bool = False,
                     context: ScreenContext | None = None) -> ValidatedBatch:
    """`validate`, then the suspect-layout guard (schemas.invariants) over the whole batch.

    When most rows break the page's own invariants, no row is good: every row goes to
    quarantine with the guard's reason and `suspect` says why, so the caller fails the source
    and keeps its earlier prices. Ingest and reparse land batches through this function.
    """
    context = context or ScreenContext(aggregator=aggregator)
    batch = validate(observations, context)
    reason = suspect_layout(observations, duplicates_conflict=not aggregator)
    if reason is None:
        return batch
    frame = observations.select(list(OBSERVATION_SCHEMA))
    return ValidatedBatch(good=frame.clear(),
                          quarantined=frame.with_columns(pl.lit(reason).alias("failed_check")),
                          suspect=reason, screens=batch.screens)


def batch_rejection(rows: int, previous_good_rows: int | None,
                    prices: pl.Series | None = None) -> str | None:
    """Why a whole batch must not land, or None. Guards against layout changes and wipe-outs
    (the volume gate of schemas.screens: fewer than half the rows, or every price zero)."""
    if rows == 0:
        return "the response parsed to zero rows (page layout or API shape changed?)"
    return volume_gate(rows, previous_good_rows, prices)
