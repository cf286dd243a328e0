"""The market price on hand-made warehouses; every expected figure is worked out by hand."""

from __future__ import annotations

from datetime import UTC, date, datetime, timedelta

import duckdb
import polars as pl
import pytest

from tests.reports.conftest import Builder, offer
from warehouse.semantic import MarketConfig, Prices, day_end
from warehouse.semantic_market import (
    computed_market,
    coverage_changes,
    market_moves,
    read_market,
)
from warehouse.summaries import rebuild_committed

DAY0 = date(2026, 11, 16)  # a Monday
NOON = timedelta(hours=12)
SEGMENTS = {"azure": "hyperscaler", "lambda": "neocloud", "runpod": "marketplace",
            "coreweave": "neocloud", "a": "neocloud", "b": "neocloud", "c": "neocloud",
            "d": "marketplace"}
RULES = MarketConfig()


def market_at(con: duckdb.DuckDBPyConnection, as_of: datetime, config: MarketConfig = RULES,
              segments: dict[str, str] = SEGMENTS) -> tuple[pl.DataFrame, pl.DataFrame]:
    return computed_market(con, as_of, config, segments)


def market_offers(con: duckdb.DuckDBPyConnection, as_of: datetime) -> pl.DataFrame:
    return Prices(con, as_of, config=RULES, segments=SEGMENTS).offers()


def at(day: date) -> datetime:
    return datetime.combine(day, datetime.min.time(), UTC) + NOON


def overall(market: pl.DataFrame, model: str = "H100 SXM") -> dict[str, object]:
    rows = market.filter((pl.col("gpu_model") == model) & (pl.col("segment") == "all"))
    assert rows.height == 1
    return rows.to_dicts()[0]


def sources(build: Builder, *names: str) -> None:
    for name in names:
        build.source(name, name)


def test_one_vote_per_provider_however_many_regional_rows(build: Builder) -> None:
    # azure: 300 regional rows of one offering, 150 at $10 and 150 at $12 -> its median $11.
    # lambda $3, runpod $2.50, coreweave $6: one row each.
    # per-provider medians sorted: 2.50, 3.00, 6.00, 11.00
    #   median = (3 + 6) / 2 = 4.50        (an offer-weighted median would be ~$11)
    #   p25 = 2.50 + 0.75 x 0.50 = 2.875   (linear, position 0.25 x 3 = 0.75)
    #   p75 = 6.00 + 0.25 x 5.00 = 7.25    (position 2.25)
    #   dispersion = (7.25 - 2.875) / 4.50 = 0.9722 <= 1.0: published
    sources(build, "azure", "lambda", "runpod", "coreweave")
    build.capture("azure", at(DAY0), [
        offer("azure", "ND96isr_H100_v5", "H100 SXM", 80.0 if i % 2 else 96.0, count=8,
              region=f"region-{i:03d}") for i in range(300)])
    build.capture("lambda", at(DAY0), [offer("lambda", "gpu_1x_h100", "H100 SXM", 3.00)])
    build.capture("runpod", at(DAY0), [offer("runpod", "H100 SXM", "H100 SXM", 2.50)])
    build.capture("coreweave", at(DAY0), [offer("coreweave", "HGX H100", "H100 SXM", 48.0,
                                                count=8)])
    providers, market = market_at(build.con, day_end(DAY0))
    row = overall(market)
    assert row["market_usd_per_gpu_hour"] == pytest.approx(4.50)
    # min and max: the lowest and highest counted offer (azure's $96/8 = $12 row), not the
    # lowest and highest provider median
    assert (row["min_usd_per_gpu_hour"], row["max_usd_per_gpu_hour"]) == (pytest.approx(2.50),
                                                                    pytest.approx(12.0))
    assert row["p25_usd_per_gpu_hour"] == pytest.approx(2.875)
    assert row["p75_usd_per_gpu_hour"] == pytest.approx(7.25)
    assert row["dispersion"] == pytest.approx(4.375 / 4.5)
    assert (row["providers"], row["offers"], row["withheld_reason"]) == (4, 303, None)
    azure = providers.filter(pl.col("provider") == "azure").to_dicts()[0]
    assert (azure["median_usd_per_gpu_hour"], azure["offers"], azure["offerings"]) == (11.0, 300, 1)
    # The neocloud segment: lambda $3 and coreweave $6 -> $4.50 (2 providers suffice there).
    neo = market.filter(pl.col("segment") == "neocloud").to_dicts()[0]
    assert (neo["market_usd_per_gpu_hour"], neo["providers"]) == (pytest.approx(4.5), 2)
    hyper = market.filter(pl.col("segment") == "hyperscaler").to_dicts()[0]
    assert hyper["market_usd_per_gpu_hour"] is None
    assert hyper["withheld_reason"] == "only 1 provider(s) quote it; the rule needs 2"


def test_an_outlier_listing_is_left_out_with_its_reason(build: Builder) -> None:
    # a $2.00, b $2.20, c $2.40 and a mislabelled c listing at $0.10.
    # preliminary: c's median (2.40 + 0.10) / 2 = 1.25; median of 2.00, 2.20, 1.25 = 2.00;
    # lower fence 2.00 / 3 = 0.667 -> $0.10 is an outlier. Then c = 2.40, market = 2.20.
    sources(build, "a", "b", "c")
    build.capture("a", at(DAY0), [offer("a", "h100", "H100 SXM", 2.00)])
    build.capture("b", at(DAY0), [offer("b", "h100", "H100 SXM", 2.20)])
    build.capture("c", at(DAY0), [offer("c", "h100", "H100 SXM", 2.40),
                                  offer("c", "h100-cheap", "H100 SXM", 0.10)])
    offers = market_offers(build.con, day_end(DAY0))
    cheap = offers.filter(pl.col("offering") == "h100-cheap").to_dicts()[0]
    assert (cheap["excluded"], cheap["preliminary_usd"]) == ("outlier", pytest.approx(2.00))
    _, market = market_at(build.con, day_end(DAY0))
    row = overall(market)
    assert row["market_usd_per_gpu_hour"] == pytest.approx(2.20)
    assert (row["offers"], row["min_usd_per_gpu_hour"]) == (3, pytest.approx(2.00))


def test_exclusion_reasons(build: Builder) -> None:
    sources(build, "a")
    build.capture("a", at(DAY0), [
        offer("a", "ok", "H100 SXM", 2.0),
        offer("a", "gone", "H100 SXM", 1.0, available=False),
        offer("a", "chip", "H100 SXM", 1.5, gpu_only=True),
        offer("a", "slice", "H100 SXM", 0.5, count=0.5),
        offer("a", "spot", "H100 SXM", 0.9, pricing="spot"),
        offer("a", "unknown", "unknown", 0.9),
    ])
    offers = market_offers(build.con, day_end(DAY0))
    reasons = dict(zip(offers["offering"], offers["excluded"], strict=True))
    assert reasons == {"ok": None, "gone": "unavailable", "chip": "gpu_only",
                       "slice": "fractional", "spot": "other_pricing",
                       "unknown": "unknown_gpu"}


def _three_providers(build: Builder, failing: tuple[int, ...], days: int = 4) -> None:
    """a $2, b $3, c $4 every day at noon; b's source fails on the `failing` days."""
    sources(build, "a", "b", "c")
    for i in range(days):
        day = DAY0 + timedelta(days=i)
        build.capture("a", at(day), [offer("a", "h100", "H100 SXM", 2.0)], run_id=f"r{i}")
        build.capture("c", at(day), [offer("c", "h100", "H100 SXM", 4.0)], run_id=f"r{i}")
        if i in failing:
            build.failure("b", at(day), f"r{i}", "HTTP 503")
        else:
            build.capture("b", at(day), [offer("b", "h100", "H100 SXM", 3.0)], run_id=f"r{i}")


def test_a_source_missing_a_day_is_carried_forward_and_never_a_move(build: Builder) -> None:
    _three_providers(build, failing=(1,))
    days = [DAY0 + timedelta(days=i) for i in range(3)]
    values = [market_at(build.con, day_end(d)) for d in days]
    # Every day: median of 2, 3, 4 = $3, three providers; b (seen 36 h before the end of day
    # 1, within the 48 h freshness limit) carried forward and flagged on day 1.
    assert [overall(m)["market_usd_per_gpu_hour"] for _, m in values] == [3.0] * 3
    assert [overall(m)["carried_providers"] for _, m in values] == [[], ["b"], []]
    b_days = [p.filter(pl.col("provider") == "b")["carried_days"].item() for p, _ in values]
    assert b_days == [0, 1, 0]
    # The stored per-provider medians (kept by every append) give the same: day 0 -> day 1,
    # b keeps its last seen $3, named as carried forward: no move.
    moves = market_moves(build.con, days[0], days[1], config=RULES).to_dicts()[0]
    assert (moves["matched"], moves["pct_change"], moves["carried"]) == (3, 0.0, ["b"])
    assert (moves["providers_down"], moves["providers_up"]) == (0, 0)
    assert coverage_changes(build.con, days[0], days[1]).height == 0


def test_a_source_silent_past_the_freshness_limit_has_left(build: Builder) -> None:
    # b fails on days 1 and 2: at the end of day 2 it was last seen 60 h before: stale, so
    # it does not count, and the change is coverage (b left), not a price move.
    _three_providers(build, failing=(1, 2))
    offers = market_offers(build.con, day_end(DAY0 + timedelta(days=2)))
    assert offers.filter(pl.col("provider") == "b")["excluded"].to_list() == ["stale"]
    _, market = market_at(build.con, day_end(DAY0 + timedelta(days=2)))
    assert (overall(market)["providers"], overall(market)["withheld_reason"]) == \
        (2, "only 2 provider(s) quote it; the rule needs 3")
    moves = market_moves(build.con, DAY0, DAY0 + timedelta(days=2), config=RULES).to_dicts()
    assert [(m["matched"], m["pct_change"], m["withheld_reason"]) for m in moves] == [
        (2, None, "only 2 matched provider(s); the rule needs 3")]
    left = coverage_changes(build.con, DAY0, DAY0 + timedelta(days=2)).to_dicts()
    assert [(r["provider"], r["change"]) for r in left] == [("b", "left")]
    # Day 6: nobody seen since day 3 noon (84 h): every offer is stale, nothing is quoted.
    late = market_offers(build.con, day_end(DAY0 + timedelta(days=6)))
    assert set(late["excluded"]) == {"stale"}


def test_a_provider_joining_mid_week_is_coverage_not_a_price_move(build: Builder) -> None:
    # Week ago: a $2, b $3, c $4 -> market $3. Now: the same three, and d joins at $1.
    # All providers now: 1, 2, 3, 4 -> median $2.50 (-16.7 %), yet no price moved:
    # the matched move over a, b, c is 0 % and d is a coverage change.
    sources(build, "a", "b", "c", "d")
    week_ago, now = DAY0, DAY0 + timedelta(days=7)
    for day in (week_ago, now):
        build.capture("a", at(day), [offer("a", "h100", "H100 SXM", 2.0)])
        build.capture("b", at(day), [offer("b", "h100", "H100 SXM", 3.0)])
        build.capture("c", at(day), [offer("c", "h100", "H100 SXM", 4.0)])
    build.capture("d", at(now - timedelta(days=3)), [offer("d", "h100", "H100 SXM", 1.0)])
    build.capture("d", at(now), [offer("d", "h100", "H100 SXM", 1.0)])
    _, old_market = market_at(build.con, day_end(week_ago))
    _, new_market = market_at(build.con, day_end(now))
    assert overall(old_market)["market_usd_per_gpu_hour"] == 3.0
    assert overall(new_market)["market_usd_per_gpu_hour"] == 2.5
    move = market_moves(build.con, week_ago, now, config=RULES).to_dicts()[0]
    assert (move["matched"], move["old_usd_per_gpu_hour"], move["new_usd_per_gpu_hour"],
            move["pct_change"]) == \
        (3, 3.0, 3.0, 0.0)
    coverage = coverage_changes(build.con, week_ago, now).to_dicts()
    # (read from the stored table: segments of schemas/provider_segments.csv, where d is not)
    assert coverage == [{"gpu_model": "H100 SXM", "provider": "d", "segment": "unclassified",
                         "change": "joined", "median_usd_per_gpu_hour": 1.0}]


def test_withheld_values_keep_their_reason(build: Builder) -> None:
    # Two providers only; then one provider listing 7 of 9 offerings (78 % > 75 %);
    # then three providers at $1, $2, $10: p25 1.5, p75 6, median 2 -> dispersion 2.25 > 1.
    sources(build, "a", "b", "c")
    build.capture("a", at(DAY0), [offer("a", "l4", "L4", 0.5),
                                  *[offer("a", f"a100-{i}", "A100 80GB", 1.0 + i / 100)
                                    for i in range(7)],
                                  offer("a", "h100", "H100 SXM", 1.0)])
    build.capture("b", at(DAY0), [offer("b", "l4", "L4", 0.7), offer("b", "a100", "A100 80GB",
                                                                       1.2),
                                  offer("b", "h100", "H100 SXM", 2.0)])
    build.capture("c", at(DAY0), [offer("c", "a100", "A100 80GB", 1.3),
                                  offer("c", "h100", "H100 SXM", 10.0)])
    _, market = market_at(build.con, day_end(DAY0))
    reasons = {r["gpu_model"]: (r["market_usd_per_gpu_hour"], r["withheld_reason"])
               for r in market.filter(pl.col("segment") == "all").to_dicts()}
    assert reasons == {
        "L4": (None, "only 2 provider(s) quote it; the rule needs 3"),
        "A100 80GB": (None, "one provider (a) lists 7 of 9 offerings (78% > 75%)"),
        "H100 SXM": (None, "providers disagree: dispersion (p75-p25)/median 2.25 > 1.0"),
    }
    assert overall(market)["median_usd_per_gpu_hour"] == 2.0  # still stored, for explain


def test_the_stored_table_is_kept_by_every_append(build: Builder) -> None:
    """No flow keeps the market table: each append's own transaction does, from the first
    day it changed on. It equals the market computed from scratch, and a rebuild."""
    _three_providers(build, failing=(1,))
    stored = read_market(build.con, segment="all").select("day", "market_usd_per_gpu_hour",
                                                          "providers")
    # Day 0 .. day 3 and the carried-forward day after the last run (its prices 36 h old).
    days = [DAY0 + timedelta(days=i) for i in range(5)]
    assert stored["day"].to_list() == days
    assert stored["market_usd_per_gpu_hour"].to_list() == [3.0] * 5
    computed = pl.concat([market_at(build.con, day_end(d), segments={})[1].filter(
        pl.col("segment") == "all") for d in days])
    assert stored["market_usd_per_gpu_hour"].to_list() == \
        computed["market_usd_per_gpu_hour"].to_list()
    carried = build.con.execute(
        "SELECT carried_days FROM market_provider_price WHERE provider = 'b' ORDER BY day"
    ).fetchall()
    assert [r[0] for r in carried] == [0, 1, 0, 0, 1]
    before = read_market(build.con)
    rebuild_committed(build.con)
    assert read_market(build.con).equals(before)


def test_explain_market_line_by_line(build: Builder) -> None:
    from reports.market.explain import explain_market

    sources(build, "a", "b", "c")
    build.capture("a", at(DAY0), [offer("a", "h100", "H100 SXM", 2.00)])
    build.capture("b", at(DAY0), [offer("b", "h100", "H100 SXM", 2.20)])
    build.capture("c", at(DAY0), [offer("c", "h100", "H100 SXM", 2.40),
                                  offer("c", "h100-cheap", "H100 SXM", 0.10),
                                  offer("c", "h100-spot", "H100 SXM", 0.90, pricing="spot")])
    cap = dict(build.con.execute("SELECT source, left(capture_id, 12) FROM scrape_run").fetchall())
    seen = "observed 2026-11-16 12:00 UTC"
    lines = explain_market(build.con, ["H100 SXM"], DAY0, config=RULES, segments=SEGMENTS,
                           now=at(DAY0 + timedelta(days=30)))
    expected = [
        "market price of H100 SXM on 2026-11-16, as prices stood at 2026-11-16 23:59 UTC",
        "rule (warehouse/market.toml): comparable offers, pricing on_demand, community, "
        "serverless; available; whole GPUs; seen within 48 h; outliers below 1/3 or above 5x "
        "the preliminary median",
        "counted (3 offers):",
        f"  a h100 (us, on_demand): $2.0000/h / 1 GPU = $2.0000/GPU-h; source a, capture "
        f"{cap['a']}, {seen}",
        f"  b h100 (us, on_demand): $2.2000/h / 1 GPU = $2.2000/GPU-h; source b, capture "
        f"{cap['b']}, {seen}",
        f"  c h100 (us, on_demand): $2.4000/h / 1 GPU = $2.4000/GPU-h; source c, capture "
        f"{cap['c']}, {seen}",
        "excluded (2 offers):",
        f"  c h100-cheap (us, on_demand): $0.1000/GPU-h; outlier: below $0.6667 = preliminary "
        f"$2.0000 / 3; source c, capture {cap['c']}, {seen}",
        f"  c h100-spot (us, spot): $0.9000/GPU-h; other pricing (spot); source c, capture "
        f"{cap['c']}, {seen}",
        "per-provider medians:",
        "  a [neocloud]: median(2.0000) = 2.0000",
        "  b [neocloud]: median(2.2000) = 2.2000",
        "  c [neocloud]: median(2.4000) = 2.4000",
        "across providers: median(2.0000, 2.2000, 2.4000) = 2.2000",
        "  min 2.0000, p25 2.1000, p75 2.3000, max 2.4000; dispersion (2.3000 - 2.1000) / "
        "2.2000 = 0.09",
        "  two-stage median: $2.2000/GPU-hour (3 providers, 3 offers; the offer statistics "
        "beside the index, not the market price)",
        "segment neocloud: median(2.0000, 2.2000, 2.4000) = 2.2000",
        "  min 2.0000, p25 2.1000, p75 2.3000, max 2.4000; dispersion (2.3000 - 2.1000) / "
        "2.2000 = 0.09",
        "  two-stage median: $2.2000/GPU-hour (3 providers, 3 offers; the offer statistics "
        "beside the index, not the market price)",
    ]
    assert lines[:len(expected)] == expected
    # the market price itself: the index (no fixing stored: indicative). Its prints skip the
    # market's outlier fence (the index screens prints, and landing screens drop such rows):
    # c's print is the median of 2.40 and 0.10 = 1.25. Equal weights, sd 3 %: votes
    # 1.2125 1.25 1.2875 | 1.94 2.0 2.06 | 2.134 2.2 2.266; the central third is a's -> 2.0
    index = lines[len(expected):]
    assert index[0] == ("market price = the on-demand index (indicative: the day is not fixed "
                        "yet; docs/index-methodology.md):")
    assert index[1].startswith("  [all] $2.0000/GPU-hour, band $")
    assert index[1].endswith("; panel 3 (0 carried), 0 kept out; method 1.0")
    votes = index[index.index(next(v for v in index if v.startswith("votes of [all]"))) + 1:]
    assert votes == ["  c [unclassified]: 1.2500 sd 0.0375 weight 0.3333 [new]",
                     "  a [unclassified]: 2.0000 sd 0.0600 weight 0.3333 [new]",
                     "  b [unclassified]: 2.2000 sd 0.0660 weight 0.3333 [new]", ""]


def test_explain_market_makes_the_market_from_the_offers_it_lists(
        build: Builder, monkeypatch: pytest.MonkeyPatch) -> None:
    # one reading of the offers (Prices), not three (at 50 M each is ~50 ms): the market the
    # explanation shows is computed from the rows it lists
    import warehouse.semantic_market
    from reports.market.explain import explain_market

    sources(build, "a", "b")
    build.capture("a", at(DAY0), [offer("a", "h100", "H100 SXM", 2.00)])
    build.capture("b", at(DAY0), [offer("b", "h100", "H100 SXM", 2.20)])

    def read_again(*args: object, **kwargs: object) -> str:
        raise AssertionError("the market read the offers again")

    monkeypatch.setattr(warehouse.semantic_market, "offers_sql", read_again)
    lines = explain_market(build.con, ["H100 SXM"], DAY0, config=RULES, segments=SEGMENTS,
                           now=at(DAY0 + timedelta(days=30)))
    assert "across providers: median(2.0000, 2.2000) = 2.1000" in lines


def test_explain_cheapest_names_what_it_passed_over(build: Builder) -> None:
    from reports.market.explain import explain_cheapest

    sources(build, "a", "b")
    build.capture("a", at(DAY0), [offer("a", "gone", "A100 80GB", 0.50, available=False),
                                  offer("a", "x1", "A100 80GB", 1.50)])
    build.capture("b", at(DAY0), [offer("b", "x8", "A100 80GB", 9.60, count=8)])
    lines = explain_cheapest(Prices(build.con, at(DAY0)), ["A100 80GB"])
    assert lines[1] == "answer: b x8 (us, on_demand) [A100 80GB]: $9.6000/h / 8 GPU = " \
                       "$1.2000/GPU-h"
    assert lines[3] == "cheaper offers passed over (1):"
    assert lines[4].startswith("  a gone (us, on_demand) [A100 80GB]: $0.5000/GPU-h; "
                               "unavailable: marked so by its source; source a, capture ")
    assert len(lines) == 5
