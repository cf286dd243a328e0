"""Exact answers from a hand-built warehouse with known prices (tests/reports/conftest.py)."""

from __future__ import annotations

from collections.abc import Callable
from datetime import timedelta

import duckdb
import polars as pl
import pytest
from polars.testing import assert_frame_equal

from contract import IN_STOCK
from reports.market.cheapest import OFFER_COLUMNS
from reports.market.comparison import cheapest_cells, comparison_section
from reports.market.fit import fit_matrix, fitting_offers, parse_params, vram_needed_gb
from reports.market.moves import week_moves
from reports.market.plans import effective_plans, plans_section
from reports.market.rankings import cheapest_offers, top_per_tier
from reports.market.rent_vs_buy import break_even
from reports.market.scenarios import Scenario, evaluate, load_scenarios
from reports.market.value import METRICS, price_performance, value_section
from reports.queries import reference_table
from reports.weekly.changes import offering_diff
from schemas.gpus import load_catalog
from schemas.tiers import Tier, load_tiers
from tests.reports.conftest import NOW, Builder, offer
from warehouse.semantic import Prices


def rows(frame: pl.DataFrame, *columns: str) -> list[tuple[object, ...]]:
    return list(frame.select(columns).iter_rows())


@pytest.fixture
def prices(market: duckdb.DuckDBPyConnection) -> Prices:
    return Prices(market, NOW)


def test_prices_prefer_direct_sources_and_flag_stale(prices: Prices) -> None:
    offers = prices.offers()
    # skypilot's lambda row is hidden (lambda has its own source); its gcp rows are kept
    assert offers.filter(pl.col("source") == "skypilot")["provider"].unique().to_list() == ["gcp"]
    stale = offers.group_by("provider").agg(pl.col("stale").all()).sort("provider")
    assert rows(stale, "provider", "stale") == [
        ("aws", True), ("gcp", False), ("lambda", False), ("runpod", False), ("vastai", False)]
    assert offers.height == 18
    # a stale price is not a comparable offer, whatever it costs
    assert set(offers.filter(pl.col("provider") == "aws")["excluded"]) == {"stale"}


def test_freshness_flags_a_source_not_seen_for_48h(prices: Prices,
                                                   market: duckdb.DuckDBPyConnection) -> None:
    assert rows(prices.freshness(), "source", "rows", "stale") == [
        ("aws", 2, True), ("lambda", 4, False), ("runpod", 4, False), ("skypilot", 3, False),
        ("vastai", 6, False)]
    # 47 h after aws's capture it was still fresh
    assert not Prices(market, NOW - timedelta(hours=25)).freshness()["stale"][0]


def test_comparison_cells_cheapest_per_gpu_and_provider(prices: Prices) -> None:
    cells = cheapest_cells(prices, ("on_demand",))
    a100 = cells.filter(pl.col("gpu_model") == "A100 40GB")
    # aws is stale: left out, as everywhere
    assert rows(a100, "provider", "usd_per_gpu_hour") == [
        ("gcp", 3.67), ("lambda", 1.10), ("vastai", 0.90)]
    # the GPU-only GCP T4 price is not comparable with whole offerings, aws's T4 is stale
    assert cells.filter(pl.col("gpu_model") == "T4").height == 0
    markdown = comparison_section(prices)
    assert ("| **A100 40GB** | $3.67 on_demand | $1.10 on_demand | – | $0.90 on_demand |"
            in markdown)
    assert "| **RTX 4090** | – | – | $0.44 community | $0.40 on_demand |" in markdown
    assert "| **RTX 4090** | $0.25 interruptible |" in markdown


def test_rankings_share_ranks_on_ties_and_keep_the_order(prices: Prices) -> None:
    top = top_per_tier(prices)
    assert rows(top.filter(pl.col("tier") == "24 GB"), "rank", "provider", "offering",
                "usd_per_gpu_hour") == [
        (1, "vastai", "3090", 0.25), (2, "vastai", "4090-a", 0.40), (2, "vastai", "4090-b", 0.40),
        (4, "runpod", "L4", 0.43), (5, "runpod", "RTX 4090", 0.44)]
    # aws's T4, the tier's only offer, is stale: the tier is empty
    assert top.filter(pl.col("tier") == "<=16 GB").height == 0


def test_rankings_keep_every_offer_tied_with_the_last_place(build: Builder) -> None:
    build.source("m", "m")
    build.capture("m", NOW, [offer("m", f"o{i}", "L4", p) for i, p in
                             enumerate([0.5, 0.6, 0.7, 0.8, 0.9, 0.9, 1.0])])
    top = top_per_tier(Prices(build.con, NOW))
    assert rows(top, "rank", "offering") == [
        (1, "o0"), (2, "o1"), (3, "o2"), (4, "o3"), (5, "o4"), (5, "o5")]


def test_cheapest_offers_filters(prices: Prices) -> None:
    h100 = cheapest_offers(prices, gpu_models=["H100 SXM", "H100 PCIe", "H100 NVL"])
    assert rows(h100, "provider", "offering", "price_usd_per_gpu_hour") == [
        ("vastai", "h100-x2", 2.0), ("lambda", "gpu_1x_h100_pcie", 2.49),
        ("lambda", "gpu_8x_h100_sxm5", 2.99)]
    big = cheapest_offers(prices, min_vram_gb=48, providers=["runpod"])
    assert big.height == 0  # its only offer is marked unavailable
    big = cheapest_offers(prices, min_vram_gb=48, providers=["runpod"], include_unavailable=True)
    assert rows(big, "offering", "available") == [("A100 80GB", False)]


def _as_first_written_now_and_a_week_ago(ours: Callable[..., pl.DataFrame],
                                         first: Callable[..., pl.DataFrame], prices: Prices,
                                         asked: dict[str, object]) -> None:
    """`ours` gives the frame the rule as first written gives, now and a week before."""
    now = ours(prices, **asked)
    assert now.equals(first(prices, **asked))
    if not asked:
        assert now.height >= 5  # rows are compared, not empty frames
    earlier = Prices(prices.con, NOW - timedelta(days=7))
    assert ours(earlier, **asked).equals(first(earlier, **asked))


def _cheapest_as_first_written(prices: Prices, *, gpu_models: list[str] | None = None,
                               min_vram_gb: float | None = None, tier: Tier | None = None,
                               pricing: tuple[str, ...] | None = None,
                               providers: list[str] | None = None,
                               include_unavailable: bool = False,
                               in_stock: bool = False) -> pl.DataFrame:
    """The cheapest offers as polars computed them before the question became one SQL
    statement (ties across models listed by model, as the SQL lists them)."""
    offers = prices.offers(pricing)
    keep = pl.col("excluded").is_null()
    if include_unavailable:
        keep |= pl.col("excluded") == "unavailable"
    if in_stock:
        keep &= pl.col("stock").is_in(list(IN_STOCK))
    offers = offers.filter(keep)
    if gpu_models:
        offers = offers.filter(pl.col("gpu_model").is_in(gpu_models))
    if min_vram_gb:
        offers = offers.filter(pl.col("gpu_memory_gb") >= min_vram_gb)
    if tier:
        offers = offers.filter(pl.col("gpu_memory_gb").is_between(tier.min_gb, tier.max_gb))
    if providers:
        offers = offers.filter(pl.col("provider").is_in(providers))
    return offers.sort(pl.col("excluded").is_not_null(), *Prices.ORDER, "gpu_model",
                       maintain_order=True).select(OFFER_COLUMNS)


@pytest.mark.parametrize("asked", [
    {}, {"gpu_models": ["H100 SXM", "H100 PCIe", "H100 NVL"]}, {"min_vram_gb": 48},
    {"min_vram_gb": 0.0}, {"providers": ["runpod"], "include_unavailable": True},
    {"in_stock": True}, {"in_stock": True, "include_unavailable": True},
    {"tier": Tier("32-80", 32, 80)}, {"pricing": ("spot", "on_demand")},
    {"gpu_models": [], "providers": []},
])
def test_cheapest_offers_are_the_rule_as_first_written(prices: Prices,
                                                       asked: dict[str, object]) -> None:
    _as_first_written_now_and_a_week_ago(cheapest_offers, _cheapest_as_first_written, prices,
                                         asked)


def _top_per_tier_as_first_written(prices: Prices, *, per_tier: int = 5,
                                   tiers: list[Tier] | None = None,
                                   pricing: tuple[str, ...] | None = None) -> pl.DataFrame:
    """The cheapest per tier as polars ranked it before it became one SQL statement (ties
    after provider, offering and region listed by pricing and model, as the SQL lists them)."""
    tiers = tiers or load_tiers()
    tier: pl.Expr = pl.lit(None, pl.String)
    for t in reversed(tiers):
        tier = pl.when(pl.col("gpu_memory_gb").is_between(t.min_gb, t.max_gb)).then(
            pl.lit(t.name)).otherwise(tier)
    order = {t.name: i for i, t in enumerate(tiers)}
    ranked = (prices.comparable(pricing).filter(pl.col("gpu_memory_gb").is_not_null())
              .with_columns(tier.alias("tier")).filter(pl.col("tier").is_not_null())
              .with_columns(pl.col("price_usd_per_gpu_hour").rank("min").over("tier")
                            .cast(pl.Int64).alias("rank"),
                            (pl.col("price_usd_per_gpu_hour") / pl.col("gpu_memory_gb"))
                            .alias("usd_per_gb_vram_hour"))
              .filter(pl.col("rank") <= per_tier))
    return ranked.select(
        "tier", "rank", "gpu_model", "provider", "offering", "region", "pricing", "gpu_count",
        "gpu_memory_gb", pl.col("price_usd_per_gpu_hour").alias("usd_per_gpu_hour"),
        "usd_per_gb_vram_hour", "available", "stock", "carried_days",
    ).sort(pl.col("tier").replace_strict(order, default=len(order)), "rank", "provider",
           "offering", "region", "pricing", "gpu_model", maintain_order=True)


@pytest.mark.parametrize("asked", [
    {}, {"per_tier": 1}, {"per_tier": 2, "pricing": ("spot", "on_demand", "interruptible")},
    {"tiers": [Tier("small", 0, 24), Tier("odd", 24.0, 24.0), Tier("big", 40, 1000)]},
])
def test_top_per_tier_is_the_rule_as_first_written(prices: Prices,
                                                   asked: dict[str, object]) -> None:
    _as_first_written_now_and_a_week_ago(top_per_tier, _top_per_tier_as_first_written, prices,
                                         asked)


def test_a_tie_across_models_in_a_tier_is_listed_by_model(build: Builder) -> None:
    build.source("runpod", "runpod")
    build.capture("runpod", NOW - timedelta(hours=1), [
        offer("runpod", "serverless 4090, 3090", "RTX 4090", 0.31),
        offer("runpod", "serverless 4090, 3090", "RTX 3090", 0.31),
        offer("runpod", "RTX 4090", "RTX 4090", 0.69)])
    top = top_per_tier(Prices(build.con, NOW), per_tier=1)
    assert top.select("rank", "gpu_model").rows() == [(1, "RTX 3090"), (1, "RTX 4090")]


def _price_performance_as_first_written(prices: Prices, metric: str,
                                        gpu_models: list[str] | None = None) -> pl.DataFrame:
    """The value ranking as polars computed it before it became one SQL statement (memory
    bandwidth from the catalog file; ties across models listed by model, as the SQL lists
    them)."""
    column = METRICS[metric][0]
    price = pl.col("usd_per_gpu_hour")
    bandwidth = pl.DataFrame(
        [{"gpu_model": s.gpu_model, "memory_bandwidth_gbps": s.memory_bandwidth_gbps}
         for s in load_catalog()],
        schema={"gpu_model": pl.String, "memory_bandwidth_gbps": pl.Float64})
    offers = prices.comparable().rename({"price_usd_per_gpu_hour": "usd_per_gpu_hour"})
    if gpu_models:
        offers = offers.filter(pl.col("gpu_model").is_in(gpu_models))
    return (
        offers.join(bandwidth, on="gpu_model", how="left")
        .with_columns((price / (pl.col("bf16_tflops") / 1000)).alias("usd_per_pflop_hour"),
                      (price / pl.col("gpu_memory_gb")).alias("usd_per_gb_vram_hour"),
                      (price / (pl.col("memory_bandwidth_gbps") / 1000))
                      .alias("usd_per_tbps_hour"))
        .filter(pl.col(column).is_not_null() & (pl.col(column) > 0))
        .sort(column, "provider", "offering", "region", "usd_per_gpu_hour", "pricing",
              "gpu_model", maintain_order=True)
        .select("gpu_model", "provider", "offering", "region", "pricing", "gpu_count",
                "usd_per_gpu_hour", "usd_per_pflop_hour", "usd_per_gb_vram_hour",
                "usd_per_tbps_hour", "carried_days", "source"))


@pytest.mark.parametrize("metric", list(METRICS))
@pytest.mark.parametrize("models", [None, ["H100 SXM", "A100 80GB"], ["B200"], []])
def test_price_performance_is_the_rule_as_first_written(
        prices: Prices, metric: str, models: list[str] | None) -> None:
    # polars divided a column by 1000 as a product with 0.001: a ratio could differ in its
    # last bit (3.52112676056338 for 3.5211267605633805, $0.25 / 71 TFLOPS); every other
    # value, and the order, is the same
    ours = price_performance(prices, metric, models)
    assert_frame_equal(ours, _price_performance_as_first_written(prices, metric, models),
                       check_exact=False, rel_tol=1e-15, abs_tol=0)
    if models is None:
        assert ours.height >= 5  # rows are compared, not empty frames
    for other in (Prices(prices.con, NOW - timedelta(days=7)),
                  Prices(prices.con, NOW, ("spot", "on_demand"))):
        assert_frame_equal(price_performance(other, metric, models),
                           _price_performance_as_first_written(other, metric, models),
                           check_exact=False, rel_tol=1e-15, abs_tol=0)


def test_the_value_section_ranks_each_models_best(prices: Prices) -> None:
    section = value_section(prices, limit=50)
    for metric, (_, header) in METRICS.items():
        best = price_performance(prices, metric).group_by("gpu_model", maintain_order=True
                                                          ).first()
        part = section.split(f"### Best {header}")[1].split("###")[0]
        listed = [line.split("|")[1].strip() for line in part.splitlines()
                  if line.startswith("| ") and "---" not in line][1:]
        assert listed == best["gpu_model"].to_list()
        assert len(listed) >= 3
    # the offers it ranked were a temporary table, dropped afterwards
    assert not prices.con.sql("SELECT * FROM duckdb_tables() WHERE table_name = "
                              "'_value_offers'").fetchall()


def test_week_over_week_moves_and_offerings(market: duckdb.DuckDBPyConnection) -> None:
    old, new = Prices(market, NOW - timedelta(days=7)), Prices(market, NOW)
    # The moves are the market's, over providers quoting on both days; here at most two
    # providers match, fewer than the rule's three: every move is withheld, none is printed.
    moves = week_moves(market, NOW.date()).moves
    assert rows(moves, "gpu_model", "matched", "old_usd_per_gpu_hour", "new_usd_per_gpu_hour",
                "pct_change") == [
        ("A100 40GB", 2, pytest.approx(0.95), 1.0, None), ("A100 80GB", 1, 1.29, 1.29, None),
        ("H100 PCIe", 1, 2.49, 2.49, None), ("RTX 3090", 1, 0.275, 0.25, None),
        ("RTX 4090", 1, 0.50, 0.40, None)]
    appeared, vanished = offering_diff(old, new)
    assert rows(vanished, "provider", "offering") == [("vastai", "old-offer")]
    assert ("lambda", "gpu_8x_h100_sxm5") in rows(appeared, "provider", "offering")
    keys = rows(appeared, "provider", "offering", "pricing")
    assert ("vastai", "4090-a", "on_demand") not in keys  # existed a week ago
    assert ("runpod", "RTX 4090", "community") in keys  # runpod's first week


def test_scenario_500_gpu_hours_of_a100_40gb(prices: Prices) -> None:
    scenario = next(s for s in load_scenarios() if s.name == "500h-a100-40gb")
    result = evaluate(prices, scenario)
    # aws's stale $4.10 is not a comparable offer: it is not a way to do the job
    assert rows(result, "platform", "cost_usd", "savings_pct", "price_status") == [
        ("vastai", 450.0, 75.5, "live"), ("lambda", 550.0, 70.0, "live"),
        ("gcp", 1835.0, 0.0, "live")]


def test_scenario_scales_hours_by_throughput(prices: Prices) -> None:
    scenario = Scenario(name="t", title="t", hours=2.0, reference_gpu="RTX 4090",
                        gpus=("H100 SXM", "RTX 4090"))
    result = evaluate(prices, scenario)
    # 2 h x 165 / 989 TFLOPS = 0.33 h on an H100 SXM: 0.33 x $2.00 beats 2 h x $0.40
    assert rows(result, "platform", "gpu_model", "hours", "cost_usd") == [
        ("vastai", "H100 SXM", 0.33, 0.66), ("runpod", "RTX 4090", 2.0, 0.88),
        ("lambda", "H100 SXM", 0.33, 0.99)]


def test_scenario_with_free_tiers_and_plans(market: duckdb.DuckDBPyConnection,
                                            prices: Prices) -> None:
    scenario = next(s for s in load_scenarios() if s.name == "gpt2-small-3h")
    result = evaluate(prices, scenario, reference_table(market, "plan"))
    assert rows(result.head(3), "platform", "offering", "cost_usd", "note") == [
        ("colab", "Colab Free", 0.0, "free tier"), ("kaggle", "Kaggle Free", 0.0, "free tier"),
        ("vastai", "3090", 0.75, None)]
    pro = result.filter(pl.col("offering") == "Colab Pro")  # one row: its cheapest GPU
    assert rows(pro, "gpu_model", "cost_usd", "price_status", "note") == [
        ("T4", 9.99, "static", "plan: $9.99/month")]
    assert pro["usd_per_gpu_hour"][0] == pytest.approx(9.99 / (100 / 1.96))


def test_vram_rules() -> None:
    assert parse_params("70B") == 70.0
    assert parse_params("124M") == pytest.approx(0.124)
    assert vram_needed_gb(70, "qlora") == 51.0  # 70 x 0.7 + 2
    assert vram_needed_gb(7, "full") == 142.0  # 7 x 20 + 2
    with pytest.raises(ValueError):
        parse_params("big")


def test_fit_picks_cheapest_live_single_or_multi_gpu(prices: Prices) -> None:
    matrix = fit_matrix(prices, sizes=(7.0, 70.0), methods=("full", "qlora"))
    assert rows(matrix, "params_b", "method", "vram_needed_gb", "provider", "offering",
                "gpu_count", "price_usd_per_hour") == [
        (7.0, "full", 142.0, "vastai", "h100-x2", 2.0, 4.0),
        (7.0, "qlora", 6.9, "vastai", "3090", 1.0, 0.25),
        (70.0, "full", 1402.0, None, None, None, None),
        (70.0, "qlora", 51.0, "lambda", "gpu_1x_a100_sxm4_80gb", 1.0, 1.29)]
    # runpod's A100 80GB is unavailable and aws is stale: neither is offered
    fits = fitting_offers(prices, 51.0)
    assert "runpod" not in fits["provider"].to_list()
    assert "aws" not in fitting_offers(prices, 300.0)["provider"].to_list()


def test_fit_sorts_once_and_leaves_a_tie_to_the_one_size_sort(
        build: Builder, monkeypatch: pytest.MonkeyPatch) -> None:
    """fit_matrix sorts the offers once for every size; where the two cheapest that fit tie
    on every sort key (one offering quoting two GPU models), fitting_offers decides, as it
    did for each size before."""
    import reports.market.fit as fit

    build.source("m", "m")
    build.capture("m", NOW, [offer("m", "A6000 or A40", "RTX A6000", 0.30, memory=48),
                             offer("m", "A6000 or A40", "A40", 0.30, memory=48),
                             offer("m", "big", "H100 SXM", 2.50, memory=80),
                             offer("m", "small", "L4", 0.20, memory=24)])
    prices = Prices(build.con, NOW)
    asked: list[float] = []
    one_size = fit.fitting_offers

    def fitting_offers(prices: Prices, needed_gb: float) -> pl.DataFrame:
        asked.append(needed_gb)
        return one_size(prices, needed_gb)

    monkeypatch.setattr(fit, "fitting_offers", fitting_offers)
    sizes = (1.0, 15.0, 30.0, 50.0)  # inference: 4, 32, 62, 102 GB
    matrix = fit_matrix(prices, sizes=sizes, methods=("inference",))
    assert asked == [32.0]  # the tie: 0.30 for 48 GB, twice; the others have one cheapest
    tie = one_size(prices, 32.0).head(1)
    assert rows(matrix, "vram_needed_gb", "offering", "gpu_model", "price_usd_per_hour") == [
        (4.0, "small", "L4", 0.20), (32.0, "A6000 or A40", tie["gpu_model"][0], 0.30),
        (62.0, "big", "H100 SXM", 2.50), (102.0, None, None, None)]


def test_rent_vs_buy_break_even(market: duckdb.DuckDBPyConnection,
                                prices: Prices) -> None:
    own = reference_table(market, "gpu_ownership")
    assert own is not None
    result = break_even(own, prices)
    # RTX 4090: 1600 / (0.40 - 0.45 kW x $0.15) = 1600 / 0.3325 = 4812 h
    assert rows(result, "gpu_model", "power_usd_per_hour", "rent_usd_per_hour",
                "break_even_hours") == [("L4", 0.0108, 0.43, 5964.0),
                                        ("RTX 4090", 0.0675, 0.40, 4812.0)]
    never = break_even(pl.DataFrame({"gpu_model": ["RTX 4090"], "purchase_usd": [1600.0],
                                     "power_watts": [4000.0]}), prices)
    assert never["break_even_hours"][0] is None


def test_plans_effective_price_and_missing_table(market: duckdb.DuckDBPyConnection) -> None:
    plans = reference_table(market, "plan")
    assert plans is not None
    effective = effective_plans(plans)
    assert rows(effective, "plan", "gpu_hours_per_month") == [
        ("Colab Free", None), ("Colab Pro", pytest.approx(100 / 1.96)),
        ("Colab Pro", pytest.approx(100 / 4.8)), ("HF PRO", None),
        ("Kaggle Free", pytest.approx(130.0))]
    market.execute("DROP TABLE plan")
    assert reference_table(market, "plan") is None
    assert "No plans data" in plans_section(None)


def test_plans_whose_session_or_quota_is_too_short_are_left_out(
        market: duckdb.DuckDBPyConnection, prices: Prices) -> None:
    long_job = Scenario(name="t", title="t", hours=20.0, include_plans=True)
    plans = evaluate(prices, long_job, reference_table(market, "plan")).filter(
        pl.col("pricing") == "plan")
    # Colab Free (12 h sessions) and Kaggle Free (9 h) cannot run 20 h; Colab Pro (24 h) can;
    # HF PRO names no GPU
    assert rows(plans, "offering") == [("Colab Pro",)]
    assert [s.name for s in load_scenarios()] == [
        "7b-10m-tokens", "100h-training", "500h-a100-40gb", "gpt2-small-3h"]
