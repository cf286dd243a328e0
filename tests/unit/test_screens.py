"""The screens between parse and store (schemas/screens.py), on small hand-made batches: each
holds what it must, with a reason that says why, and lets right rows through."""

from __future__ import annotations

from datetime import UTC, date, datetime
from typing import Any

import polars as pl
import pytest

from contract import RawCapture, rows_frame
from schemas.observation import to_observations, validate
from schemas.screens import (
    ScreenContext,
    band_frame,
    count_in_name,
    flag_jumps,
    load_config,
    provider_gates,
    reserved_without_term,
    screen_rows,
    volume_gate,
)

WHEN = datetime(2026, 3, 1, 6, tzinfo=UTC)
ROW: dict[str, Any] = {"provider": "acme", "offering": "h100-1", "gpu_name": "NVIDIA H100 SXM",
                       "gpu_count": 1.0, "gpu_memory_gb": 80.0, "region": "us-east",
                       "pricing": "on_demand", "price_usd_per_hour": 2.5}


def observations(*rows: dict[str, Any]) -> pl.DataFrame:
    raw = RawCapture("acme", "https://acme.example/prices", WHEN, b"acme page")
    return to_observations(rows_frame([{**ROW, **row} for row in rows]), raw, "t")


def held(frame: pl.DataFrame, context: ScreenContext | None = None) -> dict[str, str]:
    screened = screen_rows(frame, context)
    return dict(zip(screened.quarantined["offering"], screened.quarantined["failed_check"],
                    strict=True))


def test_a_right_batch_passes_every_screen() -> None:
    frame = observations({}, {"offering": "h100-8", "gpu_count": 8.0, "price_usd_per_hour": 20.0},
                         {"offering": "h100-1", "pricing": "spot", "price_usd_per_hour": 1.5})
    screened = screen_rows(frame)
    assert screened.good.height == 3 and screened.quarantined.height == 0
    assert not screened.counts


def test_an_unknown_gpu_is_held_with_its_name_never_stored_as_a_price() -> None:
    reasons = held(observations({}, {"offering": "b300", "gpu_name": "Acme Quantum 9000"}))
    assert reasons == {"b300": "unknown GPU 'Acme Quantum 9000' (not in the catalog)"}


@pytest.mark.parametrize(("text", "count"), [
    ("NVIDIA H100 (8x)", 8), ("8x H100", 8), ("8 x H100", 8), ("8 × A100", 8), ("H100x8", 8),
    ("H100 x8", 8), ("x8", 8), ("(8x)", 8), ("8xH100", 8), ("gpu_8x_h100_sxm5", 8),
    ("A100-80Gx8", 8), ("4x Nvidia A10G", 4), ("nvidia-a10g-x4", 4),
    # not a count: instance sizes, a TPU topology, a range, a word's x, none
    ("p4d.24xlarge", None), ("g5.12xlarge", None), ("v5e-2x2", None), ("1-8 x H100", None),
    ("Max8", None), ("NVIDIA H100 SXM", None), ("2x 8x H100", None), (None, None),
])
def test_counts_written_in_names(text: str | None, count: int | None) -> None:
    assert count_in_name(text) == count


def test_a_count_in_the_name_must_agree_with_the_stored_count() -> None:
    # DigitalOcean 2026: "NVIDIA H100 (8x)" with the whole droplet's price read as one GPU
    frame = observations({"offering": "NVIDIA H100 (8x)", "price_usd_per_hour": 23.92},
                         {"offering": "NVIDIA H100 (1x)", "price_usd_per_hour": 3.39},
                         {"offering": "8x H100 node", "gpu_count": 8.0,
                          "price_usd_per_hour": 23.92})
    assert held(frame) == {"NVIDIA H100 (8x)": "count in name says 8, stored 1.0"}


def test_per_gpu_price_must_be_the_whole_over_the_count() -> None:
    frame = observations({"offering": "h100-8", "gpu_count": 8.0, "price_usd_per_hour": 20.0})
    tampered = frame.with_columns(pl.col("price_usd_per_hour").alias("price_usd_per_gpu_hour"))
    assert held(tampered) == {"h100-8": "per-GPU price $20.0 is not the whole $20.0 over 8.0 GPUs"}


def test_the_band_from_the_catalog_catches_unit_slips_and_names_itself() -> None:
    reasons = held(observations({"offering": "cents", "price_usd_per_hour": 0.01},
                                {"offering": "yen", "price_usd_per_hour": 299.0}, {}))
    band = band_frame().filter(pl.col("gpu_model") == "H100 SXM").row(0, named=True)
    assert reasons["cents"].startswith("suspect: $0.01/GPU-h outside the band")
    assert f"${round(band['band_high'], 4)} for H100 SXM" in reasons["yen"]
    assert set(reasons) == {"cents", "yen"}


def test_the_market_narrows_the_band_once_enough_providers_price_the_model() -> None:
    # a swapped cell: $22/GPU-h for an H100 is inside the catalog band but 8.8x the market
    swapped = observations({"offering": "swapped", "price_usd_per_hour": 22.0}, {})
    assert held(swapped) == {}
    config = load_config()
    few = pl.DataFrame({"gpu_model": ["H100 SXM"], "providers": [config.market_min_providers - 1],
                        "median_usd_per_gpu_hour": [2.5]})
    assert held(swapped, ScreenContext(market=few)) == {}
    market = few.with_columns(pl.lit(config.market_min_providers).alias("providers"))
    reasons = held(swapped, ScreenContext(market=market))
    assert list(reasons) == ["swapped"]
    assert reasons["swapped"] == (f"suspect: $22.0/GPU-h outside the band $0.25-"
                                  f"${2.5 * config.market_high_factor} for H100 SXM")


def test_spot_above_on_demand_holds_every_price_of_that_page_row() -> None:
    # gcp-page with one cell deleted: every cell after it moved one column to the left
    frame = observations(
        {"offering": "a3-highgpu-8g", "gpu_count": 8.0, "price_usd_per_hour": 38.4},
        {"offering": "a3-highgpu-8g (DWS Flex-start)", "gpu_count": 8.0, "pricing": "flex",
         "price_usd_per_hour": 41.8},
        {"offering": "a3-highgpu-8g", "gpu_count": 8.0, "pricing": "spot",
         "price_usd_per_hour": 61.5},
        {"offering": "a2-highgpu-1g", "gpu_name": "NVIDIA A100 40GB", "gpu_memory_gb": 40.0,
         "price_usd_per_hour": 3.68},
        {"offering": "a2-highgpu-1g", "gpu_name": "NVIDIA A100 40GB", "gpu_memory_gb": 40.0,
         "pricing": "spot", "price_usd_per_hour": 2.21},
    )
    screened = screen_rows(frame)
    assert screened.good["offering"].to_list() == ["a2-highgpu-1g", "a2-highgpu-1g"]
    reasons = screened.quarantined["failed_check"].to_list()
    assert len(reasons) == 3
    assert all("spot $61.5 above on_demand $38.4 of the same offering" in r for r in reasons)


def test_one_offering_has_one_price_per_kind_and_term_except_at_aggregators() -> None:
    frame = observations({}, {"price_usd_per_hour": 2.9},
                         {"pricing": "reserved", "term_months": 12.0, "price_usd_per_hour": 2.0},
                         {"pricing": "reserved", "term_months": 36.0, "price_usd_per_hour": 1.5})
    screened = screen_rows(frame)
    assert screened.quarantined["failed_check"].to_list() == [
        "2 prices for one offering and kind"] * 2
    assert screened.good["term_months"].to_list() == [12.0, 36.0]
    assert screen_rows(frame, ScreenContext(aggregator=True)).quarantined.height == 0


def test_an_announced_price_is_not_a_conflicting_one() -> None:
    frame = observations({}, {"price_usd_per_hour": 2.2, "effective_from": date(2026, 10, 1)})
    assert screen_rows(frame).good.height == 2


def test_a_price_in_another_currency_is_held_until_a_rate_converts_it() -> None:
    frame = observations({"offering": "eu", "currency": "EUR", "price_native_per_hour": 2.5,
                          "price_usd_per_hour": None}, {"offering": "us", "currency": "USD"})
    assert held(frame) == {"eu": "EUR price, no rate"}
    converted = frame.with_columns(pl.when(pl.col("currency") == "EUR").then(1.08)
                                   .alias("fx_rate"), pl.lit(2.7).alias("price_usd_per_hour"),
                                   pl.lit(2.7).alias("price_usd_per_gpu_hour"))
    assert held(converted) == {}


def test_validate_screens_first_then_checks_the_model() -> None:
    batch = validate(observations({"offering": "eu", "currency": "EUR",
                                   "price_usd_per_hour": None},
                                  {"offering": "bad-kind", "pricing": "preemptible"}, {}))
    reasons = dict(zip(batch.quarantined["offering"], batch.quarantined["failed_check"],
                       strict=True))
    assert reasons["eu"].startswith("EUR price, no rate")
    assert reasons["bad-kind"].startswith("pricing: isin")
    assert batch.screens == {"currency": 1}


def test_reserved_rows_without_a_term_are_counted() -> None:
    frame = observations({"pricing": "reserved"}, {"pricing": "reserved", "term_months": 12.0},
                         {"offering": "other", "pricing": "on_demand"})
    assert reserved_without_term(frame) == 1


def _previous(price: float, *, flag: str | None = None,
              confirmed: float | None = None) -> pl.DataFrame:
    return observations({}).select(
        "provider", "offering", "region", "pricing", "gpu_count", "gpu_only", "term_months",
        pl.lit(price).alias("previous_price"), pl.lit(confirmed).cast(pl.Float64)
        .alias("confirmed_price"), pl.lit(flag, pl.String).alias("previous_flag"))


def _flags(price: float, context: ScreenContext) -> list[str | None]:
    good, _ = flag_jumps(observations({"price_usd_per_hour": price}), context)
    return good["screen_flag"].to_list()


def test_a_jump_is_flagged_until_the_next_run_confirms_it() -> None:
    assert _flags(2.6, ScreenContext(previous=_previous(2.5))) == [None]
    flags = _flags(3.5, ScreenContext(previous=_previous(2.5)))
    assert flags[0] is not None and flags[0].startswith("unconfirmed move 40.0% from $2.5")
    # the next run shows 3.5 again: confirmed
    after_flag = _previous(3.5, flag=flags[0], confirmed=2.5)
    assert _flags(3.5, ScreenContext(previous=after_flag)) == [None]
    # ... or back at 2.5: the jump was a glitch, the confirmed price holds, nothing flagged
    assert _flags(2.5, ScreenContext(previous=after_flag)) == [None]
    # a third price, far from both: flagged again, against the confirmed one
    assert "from $2.5" in str(_flags(5.0, ScreenContext(previous=after_flag))[0])


def test_a_jump_is_not_flagged_when_another_provider_moved_the_same_way() -> None:
    moved = pl.DataFrame({"gpu_model": ["H100 SXM"], "direction": [1],
                          "providers": [["otherco"]]})
    assert _flags(3.5, ScreenContext(previous=_previous(2.5), others_moved=moved)) == [None]
    own = moved.with_columns(pl.lit(["acme"]).alias("providers"))
    assert _flags(3.5, ScreenContext(previous=_previous(2.5), others_moved=own))[0] is not None
    down = moved.with_columns(pl.lit(-1).alias("direction"))
    assert _flags(3.5, ScreenContext(previous=_previous(2.5), others_moved=down))[0] is not None


def test_volume_gates() -> None:
    assert volume_gate(10, 20) is None
    assert "only 9 rows against 20" in str(volume_gate(9, 20))
    assert volume_gate(9, None) is None
    zeros = pl.Series([0.0, 0.0, None])
    assert "every price is zero" in str(volume_gate(3, 3, zeros))


def test_provider_gates_judge_each_provider_of_an_aggregator_alone() -> None:
    frame = observations({"provider": "lambda"}, {"provider": "lambda", "offering": "b"},
                         {"provider": "runpod", "price_usd_per_hour": 0.0},
                         {"provider": "aws"})
    gates = provider_gates(frame, {"lambda": 10, "runpod": 1, "aws": 1, "gone": 5})
    assert set(gates) == {"lambda", "runpod"}
    assert "only 2 lambda rows against 10" in gates["lambda"]
    assert "every price is zero" in gates["runpod"]
