"""Rankings: offers one can rent now first; a stale price never above a live one."""

from __future__ import annotations

from datetime import timedelta

from reports.queries import current_prices_at
from reports.rankings import cheapest_offers, top_per_tier
from tests.reports.conftest import NOW, Builder, offer


def _warehouse(build: Builder) -> None:
    # old: the cheapest price but its source last ran 3 days ago (stale);
    # gone: cheaper still but marked unavailable; live: the dearest, fresh and available.
    build.source("old", "old")
    build.source("fresh", "fresh")
    build.capture("old", NOW - timedelta(days=3), [offer("old", "l4", "L4", 0.30)])
    build.capture("fresh", NOW, [offer("fresh", "gone", "L4", 0.20, available=False),
                                 offer("fresh", "live", "L4", 0.50)])


def test_cheapest_lists_available_live_offers_first(build: Builder) -> None:
    _warehouse(build)
    prices = current_prices_at(build.con, NOW)
    ranked = cheapest_offers(prices, gpu_models=["L4"])
    assert list(zip(ranked["offering"], ranked["stale"], strict=True)) == [
        ("live", False), ("l4", True)]
    everything = cheapest_offers(prices, gpu_models=["L4"], include_unavailable=True)
    assert everything["offering"].to_list() == ["live", "l4", "gone"]


def test_tier_rankings_rank_stale_after_live(build: Builder) -> None:
    _warehouse(build)
    top = top_per_tier(current_prices_at(build.con, NOW))
    assert list(zip(top["rank"], top["offering"], strict=True)) == [(1, "live"), (2, "l4")]


def test_refresh_summary_tier_ranking_skips_past_unavailable(build: Builder) -> None:
    _warehouse(build)
    # The refresh summary ranks one offer per tier, on-demand: the unavailable $0.20 never
    # comes first, and the live $0.50 ranks above the cheaper stale $0.30.
    top = top_per_tier(current_prices_at(build.con, NOW), per_tier=1, pricing=("on_demand",))
    assert top.filter(top["gpu_model"] == "L4")["offering"].to_list() == ["live"]
