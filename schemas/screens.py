"""Screens between parse and store: checks that do not trust the parser.

A parser fitted to the pages it has seen keeps making the same classes of mistake on a page it
has not: a count written after the name read as one GPU, a marketing suffix that hides the
GPU, a shifted cell, a price in euros stored as dollars. Every capture, from a refresh, a
backfill or `reparse`, passes these screens in one place (warehouse.ingest), after the parser
and before anything is stored. They quarantine (with the reason) or flag; they never drop a
row and never touch the raw capture, so `reparse` screens again.

Row screens (`screen_rows`: a row failing one is quarantined, its reasons joined by "; "):
- unknown_gpu: the GPU name does not resolve to the catalog: never a comparable price;
- currency: a price quoted in another currency (`currency` not USD) without a dated rate
  (a `fx_rate` column filled by the conversion step): "EUR price, no rate";
- count_in_name: a GPU count written in the name or offering ("(8x)", "8x", "x8", "8 ×",
  "H100x8") that differs from the stored count;
- per_gpu_price: the per-GPU price is not the whole offering's price over the GPU count;
- band: the per-GPU price outside its model's band (`band_frame`: the ONE band definition,
  from the catalog and, when the warehouse passes them, the model's current prices across
  providers; factors in screens.toml), quarantined as suspect with the band in the reason;
- spot_above_on_demand: a spot/interruptible price above the same offering's on-demand price
  (a shifted or swapped cell: which one is wrong cannot be told, so every price of that page
  row is held: the offering and its noted variants, "a3-highgpu-8g (1 Year commitment)");
- conflicting_prices: one offering with two prices for one kind (and term, and effective
  date): one came from the wrong cell (not checked for aggregators, whose repeats are real).

Flags (`flag_jumps`: stored, but `screen_flag` says why the row is kept out of the market):
- a price that moved >= 25 % from the source's previous run while no other provider's price
  of that GPU moved the same way; the next run that shows the same price confirms it.

Gates (`volume_gate`, `provider_gates`: the whole batch, or an aggregator's part for one
provider, is rejected and the earlier prices stay current): rows fell below half of the last
good run, or every price is zero.

Counted, not held: `reserved` rows without `term_months` (`reserved_without_term`).
Pure functions on an observation frame (schemas.observation.OBSERVATION_SCHEMA) plus the
context the warehouse passes in (`ScreenContext`).
"""

from __future__ import annotations

import re
import tomllib
from collections import Counter
from dataclasses import dataclass, field
from functools import cache
from pathlib import Path

import polars as pl

from schemas.gpus import UNKNOWN_GPU, catalog_frame

__all__ = [
    "JUMP_KEY",
    "SCREENS",
    "ScreenConfig",
    "ScreenContext",
    "Screened",
    "band_frame",
    "band_screen",
    "count_in_name",
    "describe_counts",
    "flag_jumps",
    "load_config",
    "provider_gates",
    "reserved_without_term",
    "screen_reasons",
    "screen_rows",
    "volume_gate",
]

CONFIG_PATH = Path(__file__).with_name("screens.toml")
SCREENS = ("unknown_gpu", "currency", "count_in_name", "per_gpu_price", "band",
           "spot_above_on_demand", "conflicting_prices")
# What makes two rows of one source the same offering's price, run after run.
JUMP_KEY = ("provider", "offering", "region", "pricing", "gpu_count", "gpu_only", "term_months")
# One page (capture) at a time: the same offering in two captures may well have two prices.
_OFFER_KEY = ("capture_id", "source", "provider", "offering", "region", "gpu_count", "gpu_only")
_PRICE_KEY = (*_OFFER_KEY, "pricing", "term_months", "effective_from")
# A spot price equal to on-demand but for rounding is not above it (AWS g5: 9.0426 / 9.04259).
SPOT_SLACK = 0.005
# spot-like kind -> the kind it must not be dearer than
_BELOW = {"spot": "on_demand", "interruptible": "on_demand", "community_spot": "community"}


@dataclass(frozen=True, slots=True)
class ScreenConfig:
    floor_per_tflop: float
    ceiling_per_tflop: float
    min_ceiling: float
    abs_floor: float
    abs_ceiling: float
    market_min_providers: int
    market_high_factor: float
    market_low_factor: float
    jump_threshold: float
    others_min_move: float
    others_window_days: int
    volume_min_share: float


@cache
def load_config(path: Path = CONFIG_PATH) -> ScreenConfig:
    data = tomllib.loads(path.read_text(encoding="utf-8"))
    band, jump, volume = data["band"], data["jump"], data["volume"]
    return ScreenConfig(
        floor_per_tflop=float(band["floor_per_tflop"]),
        ceiling_per_tflop=float(band["ceiling_per_tflop"]),
        min_ceiling=float(band["min_ceiling"]), abs_floor=float(band["abs_floor"]),
        abs_ceiling=float(band["abs_ceiling"]),
        market_min_providers=int(band["market_min_providers"]),
        market_high_factor=float(band["market_high_factor"]),
        market_low_factor=float(band["market_low_factor"]),
        jump_threshold=float(jump["threshold"]), others_min_move=float(jump["others_min_move"]),
        others_window_days=int(jump["others_window_days"]),
        volume_min_share=float(volume["min_share"]),
    )


@dataclass(frozen=True, slots=True)
class ScreenContext:
    """What the warehouse knows that a screen needs; empty = the screens of a bare parse.

    market: gpu_model, providers, median_usd_per_gpu_hour (the model's current prices: the
      median over providers of each provider's median);
    previous: the source's previous prices, JUMP_KEY + previous_price (its last stored
      price), confirmed_price (its last unflagged one), previous_flag;
    others_moved: gpu_model, direction (+1/-1), providers: who moved that GPU's price that
      way lately (a move by another provider makes a jump plausible).
    """

    market: pl.DataFrame | None = None
    previous: pl.DataFrame | None = None
    others_moved: pl.DataFrame | None = None
    aggregator: bool = False


@dataclass(frozen=True, slots=True)
class Screened:
    good: pl.DataFrame
    quarantined: pl.DataFrame  # the rows + failed_check
    counts: Counter[str] = field(default_factory=Counter)  # screen -> rows it held


# --- the band -----------------------------------------------------------------------------

def band_frame(market: pl.DataFrame | None = None) -> pl.DataFrame:
    """(gpu_model, band_low, band_high) per catalog GPU: THE plausible $/GPU-hour band.

    From the catalog (proportional to BF16 TFLOPS, with floors and ceilings); narrowed to
    [median / low factor, median x high factor] of the model's current market when at least
    `market_min_providers` providers price it.
    """
    band = _catalog_band()
    if market is None or market.height == 0:
        return band
    config = load_config()
    wide = market.filter(pl.col("providers") >= config.market_min_providers).select(
        "gpu_model", pl.col("median_usd_per_gpu_hour").alias("_median"))
    return band.join(wide, on="gpu_model", how="left").select(
        "gpu_model",
        pl.max_horizontal("band_low", pl.col("_median") / config.market_low_factor)
        .alias("band_low"),
        pl.min_horizontal("band_high", pl.col("_median") * config.market_high_factor)
        .alias("band_high"),
    )


@cache
def _catalog_band() -> pl.DataFrame:
    config = load_config()
    tflops = pl.col("bf16_tflops").fill_null(0.0)
    return catalog_frame().select(
        "gpu_model",
        pl.max_horizontal(tflops * config.floor_per_tflop, pl.lit(config.abs_floor))
        .alias("band_low"),
        pl.min_horizontal(
            pl.max_horizontal(tflops * config.ceiling_per_tflop, pl.lit(config.min_ceiling)),
            pl.lit(config.abs_ceiling),
        ).alias("band_high"),
    )


# --- a count written in the name ----------------------------------------------------------

# "8x H100", "(8x)", "8 × A100", "8xH100", "gpu_8x_h100" (not "p4d.24xlarge": a lowercase
# word after the x is an instance size).
_COUNT_BEFORE = re.compile(r"(?<![A-Za-z0-9.])(\d{1,3})\s?[x×X](?=[\s_\-)\]/,:]|$|[A-Z])")
# "H100x8", "H100 x8", "x 8", "A100-80Gx8" (not "Max8": a word's x is not a times sign).
_COUNT_AFTER = re.compile(r"(?:(?<=\d)|(?<=\dG)|(?<=\dGB)|(?<![A-Za-z]))[x×]\s?(\d{1,3})"
                          r"(?![\w.])")


# "2x2", "2x4": a TPU slice's topology (or a size); "1-8 x H100": a range. Not one count.
_GRID = re.compile(r"(?<![A-Za-z\d.])\d+\s?[x×]\s?\d+(?![\d.])|\d+\s?[-–]\s?\d+\s?[x×]")


@cache
def count_in_name(text: str | None) -> int | None:
    """The GPU count a name or offering writes ("NVIDIA H100 (8x)" -> 8), None when it writes
    none or several different ones."""
    if not text:
        return None
    text = _GRID.sub(" ", text)
    found = {int(m.group(1)) for pattern in (_COUNT_BEFORE, _COUNT_AFTER)
             for m in pattern.finditer(text)}
    found.discard(0)
    return found.pop() if len(found) == 1 else None


def _written_count() -> pl.Expr:
    def written(row: dict[str, str | None]) -> int | None:
        counts = {c for c in (count_in_name(row["gpu_name"]), count_in_name(row["offering"]))
                  if c is not None}
        return counts.pop() if len(counts) == 1 else None

    return pl.struct("gpu_name", "offering").map_elements(written, return_dtype=pl.Int64)


# --- row screens ----------------------------------------------------------------------------

def _money(column: str) -> pl.Expr:
    return pl.col(column).round(4).cast(pl.String)


def _reasons(frame: pl.DataFrame, context: ScreenContext) -> pl.DataFrame:
    """The frame with one nullable reason column per screen."""
    band = band_frame(context.market)
    names = frame.select("gpu_name", "offering").unique()
    names = names.with_columns(_written_count().alias("_written"))
    converted = pl.col("fx_rate").is_not_null() if "fx_rate" in frame.columns else pl.lit(False)
    foreign = pl.col("currency").is_not_null() & (pl.col("currency") != "USD")
    per_gpu = pl.col("price_usd_per_hour") / pl.col("gpu_count")
    stated = pl.col("price_usd_per_gpu_hour")
    below = pl.col("pricing").replace_strict(_BELOW, default=None)
    reference = pl.lit(None, pl.Float64)
    for kind in set(_BELOW.values()):
        kind_price = (pl.col("price_usd_per_hour").filter(pl.col("pricing") == kind).min()
                      .over([c for c in _OFFER_KEY if c in frame.columns]))
        reference = pl.when(below == kind).then(kind_price).otherwise(reference)
    price_key = [c for c in _PRICE_KEY if c in frame.columns]
    return (
        frame.with_row_index("_row")
        .join(names, on=["gpu_name", "offering"], how="left", nulls_equal=True)
        .join(band, on="gpu_model", how="left")
        .sort("_row")
        .with_columns(reference.alias("_reference"))
        .with_columns(
            pl.when(pl.col("gpu_model") == UNKNOWN_GPU)
            .then(pl.format("unknown GPU '{}' (not in the catalog)",
                            pl.col("gpu_name").fill_null("(none)")))
            .alias("unknown_gpu"),
            pl.when(foreign & ~converted)
            .then(pl.format("{} price, no rate", pl.col("currency")))
            .alias("currency"),
            pl.when(pl.col("_written").is_not_null()
                    & (pl.col("_written").cast(pl.Float64) != pl.col("gpu_count")))
            .then(pl.format("count in name says {}, stored {}", pl.col("_written"),
                            pl.col("gpu_count")))
            .alias("count_in_name"),
            pl.when((stated - per_gpu).abs() > 1e-9 + 1e-6 * per_gpu.abs())
            .then(pl.format("per-GPU price ${} is not the whole ${} over {} GPUs",
                            stated.round(4), _money("price_usd_per_hour"), pl.col("gpu_count")))
            .alias("per_gpu_price"),
            pl.when(pl.col("band_low").is_not_null() & per_gpu.is_not_null()
                    & ~per_gpu.is_between(pl.col("band_low"), pl.col("band_high")))
            .then(pl.format("suspect: ${}/GPU-h outside the band ${}-${} for {}",
                            per_gpu.round(4), _money("band_low"), _money("band_high"),
                            pl.col("gpu_model")))
            .alias("band"),
            pl.when(pl.col("_reference").is_not_null()
                    & (pl.col("price_usd_per_hour") > pl.col("_reference") * (1 + SPOT_SLACK)))
            .then(pl.format("{} ${} above {} ${} of the same offering (shifted cells?)",
                            pl.col("pricing"), _money("price_usd_per_hour"), below,
                            _money("_reference")))
            .alias("spot_above_on_demand"),
            pl.when((pl.col("price_usd_per_hour").n_unique().over(price_key) > 1)
                    & pl.lit(not context.aggregator))
            .then(pl.format("{} prices for one offering and kind", pl.col("price_usd_per_hour")
                            .n_unique().over(price_key)))
            .alias("conflicting_prices"),
        )
    )


def _base_offering() -> pl.Expr:
    """The offering without a trailing "(...)" note: one page row's offerings share it
    ("a3-highgpu-8g" and "a3-highgpu-8g (1 Year commitment)")."""
    return pl.col("offering").str.replace(r"\s*\([^()]*\)\s*$", "")


def _held_with_inversion(reasons: pl.DataFrame) -> pl.Series:
    """Every row of a page row (same machine: source, provider, region, count, offering
    without its note) where a spot price sits above on-demand: the cells were shifted, so
    none of that row's prices can be trusted. The reason, or null."""
    key = [c for c in (*_OFFER_KEY, "_base") if c in reasons.columns or c == "_base"]
    key = [c for c in key if c != "offering"]
    with_base = reasons.with_columns(_base_offering().alias("_base"))
    held = with_base.filter(pl.col("spot_above_on_demand").is_not_null()).group_by(key).agg(
        pl.col("spot_above_on_demand").first().alias("_why"))
    marked = with_base.join(held, on=key, how="left", nulls_equal=True, maintain_order="left")
    return marked["_why"]


def screen_reasons(observations: pl.DataFrame,
                   context: ScreenContext | None = None) -> tuple[pl.Series, Counter[str]]:
    """Why each row is held (null: it passes every row screen), aligned with `observations`,
    and how many rows each screen held."""
    context = context or ScreenContext()
    if observations.height == 0:
        return pl.Series("screens", [], dtype=pl.String), Counter()
    reasons = _reasons(observations, context)
    if reasons["spot_above_on_demand"].is_not_null().any():
        row_of = pl.Series("_row_of", _held_with_inversion(reasons))
        reasons = reasons.with_columns(
            pl.coalesce("spot_above_on_demand",
                        pl.format("held with its page row: {}", pl.lit(row_of)))
            .alias("spot_above_on_demand"))
    counts = Counter({name: int(reasons[name].is_not_null().sum()) for name in SCREENS})
    joined = pl.concat_str([pl.col(name) for name in SCREENS], separator="; ",
                           ignore_nulls=True)  # "" when every screen passed
    why = reasons.select(pl.when(joined != "").then(joined).alias("screens"))["screens"]
    return why, +counts


def screen_rows(observations: pl.DataFrame, context: ScreenContext | None = None) -> Screened:
    """Split observations into rows that pass every row screen and rows held with reasons."""
    why, counts = screen_reasons(observations, context)
    marked = observations.with_columns(why.alias("failed_check"))
    return Screened(marked.filter(pl.col("failed_check").is_null()).drop("failed_check"),
                    marked.filter(pl.col("failed_check").is_not_null()), counts)


def band_screen(good: pl.DataFrame, market: pl.DataFrame | None) -> Screened:
    """The price band alone, narrowed to the market (the one screen that changes once the
    warehouse's context is known): rows outside it held with the band in the reason."""
    if good.height == 0 or market is None or market.height == 0:
        return Screened(good, good.with_columns(pl.lit(None, pl.String).alias("failed_check"))
                        .clear())
    band = band_frame(market)
    per_gpu = pl.col("price_usd_per_hour") / pl.col("gpu_count")
    reason = pl.when(pl.col("band_low").is_not_null() & per_gpu.is_not_null()
                     & ~per_gpu.is_between(pl.col("band_low"), pl.col("band_high"))).then(
        pl.format("suspect: ${}/GPU-h outside the band ${}-${} for {}", per_gpu.round(4),
                  _money("band_low"), _money("band_high"), pl.col("gpu_model")))
    marked = (good.with_row_index("_row").join(band, on="gpu_model", how="left").sort("_row")
              .with_columns(reason.alias("failed_check")).select(*good.columns, "failed_check"))
    held = marked.filter(pl.col("failed_check").is_not_null())
    counts = Counter({"band": held.height}) if held.height else Counter()
    return Screened(marked.filter(pl.col("failed_check").is_null()).drop("failed_check"), held,
                    counts)


# --- flags ----------------------------------------------------------------------------------

def flag_jumps(good: pl.DataFrame, context: ScreenContext) -> tuple[pl.DataFrame, int]:
    """`good` with `screen_flag` set on unconfirmed jumps, and how many rows were flagged."""
    if "screen_flag" not in good.columns:
        good = good.with_columns(pl.lit(None, pl.String).alias("screen_flag"))
    previous = context.previous
    if previous is None or previous.height == 0 or good.height == 0:
        return good, 0
    config = load_config()
    key = list(JUMP_KEY)
    moved = context.others_moved if context.others_moved is not None else pl.DataFrame(
        schema={"gpu_model": pl.String, "direction": pl.Int64,
                "providers": pl.List(pl.String)})
    joined = (
        good.with_row_index("_row")
        .join(previous.select(*key, "previous_price", "confirmed_price", "previous_flag"),
              on=key, how="left", nulls_equal=True)
        .sort("_row")
    )
    price = pl.col("price_usd_per_hour")
    same_as_previous = ((price / pl.col("previous_price") - 1).abs() < 1e-6)
    reference = pl.when(pl.col("previous_flag").is_not_null()).then(pl.col("confirmed_price")) \
        .otherwise(pl.col("previous_price"))
    change = price / reference - 1
    joined = joined.with_columns(change.alias("_change"),
                                 change.sign().cast(pl.Int64).alias("_direction"))
    joined = joined.join(moved.select("gpu_model", "direction", "providers"),
                         left_on=["gpu_model", "_direction"],
                         right_on=["gpu_model", "direction"], how="left").sort("_row")
    others = pl.col("providers").fill_null(pl.lit([], pl.List(pl.String))).list.set_difference(
        pl.concat_list(pl.col("provider"))).list.len() > 0
    jump = (
        reference.is_not_null() & (pl.col("_change").abs() >= config.jump_threshold)
        & ~(pl.col("previous_flag").is_not_null() & same_as_previous)
        & ~others
    ).fill_null(False)
    flag = pl.format("unconfirmed move {}% from ${} (previous run); kept out of the market "
                     "until the next run confirms it",
                     (pl.col("_change") * 100).round(1), reference.round(4))
    flagged = joined.with_columns(
        pl.when(jump).then(flag).otherwise(pl.col("screen_flag")).alias("screen_flag"))
    return flagged.select(good.columns), int(flagged.select(jump.sum()).item())


# --- gates ----------------------------------------------------------------------------------

def volume_gate(rows: int, previous_rows: int | None, prices: pl.Series | None = None,
                *, what: str = "rows") -> str | None:
    """Why a whole batch (or one provider's part of it) must not land, or None."""
    config = load_config()
    if prices is not None and len(prices) and prices.fill_null(0.0).abs().max() == 0:
        return f"every price is zero ({len(prices)} {what}): a broken feed, not free GPUs"
    if previous_rows and rows < previous_rows * config.volume_min_share:
        return (f"only {rows} {what} against {previous_rows} in the last good run "
                f"(lost more than {1 - config.volume_min_share:.0%}: partial or changed "
                "response?)")
    return None


def provider_gates(parsed: pl.DataFrame, previous: dict[str, int]) -> dict[str, str]:
    """An aggregator's batch, per provider: provider -> why its part is rejected.

    `parsed`: every row the capture gave (good and held); `previous`: each provider's rows in
    its last good part. A provider the capture does not mention is not gated: its earlier
    prices stay current by themselves (warehouse/views.sql, provider_capture).
    """
    gates: dict[str, str] = {}
    if parsed.height == 0:
        return gates
    for (provider,), part in parsed.group_by(["provider"]):
        reason = volume_gate(part.height, previous.get(str(provider)),
                             part["price_usd_per_hour"], what=f"{provider} rows")
        if reason:
            gates[str(provider)] = reason
    return gates


# --- counts ---------------------------------------------------------------------------------

def reserved_without_term(frame: pl.DataFrame) -> int:
    """Reserved rows that do not say their commitment's length (a page states it: find it)."""
    if frame.height == 0:
        return 0
    return int(frame.select(((pl.col("pricing") == "reserved")
                             & pl.col("term_months").is_null()).sum()).item())


_LABELS = {"unknown_gpu": "unknown GPU", "currency": "other currency, no rate",
           "count_in_name": "count in name differs",
           "per_gpu_price": "per-GPU price not whole/count", "band": "outside the price band",
           "spot_above_on_demand": "spot above on-demand",
           "conflicting_prices": "conflicting prices", "jump": "unconfirmed jump (flagged)",
           "reserved_without_term": "reserved without term (counted)"}


def describe_counts(counts: Counter[str]) -> str:
    """'3 unknown GPU, 1 outside the price band' (most first); '' for none."""
    return ", ".join(f"{n} {_LABELS.get(name, name)}" for name, n in
                     sorted(counts.items(), key=lambda item: (-item[1], item[0])) if n)
