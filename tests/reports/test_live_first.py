"""Rankings list comparable offers only: a stale or unavailable price never ranks, however low."""

from __future__ import annotations

from datetime import timedelta

from reports.market.rankings import cheapest_offers, top_per_tier
from tests.reports.conftest import NOW, Builder, offer
from warehouse.semantic import Prices


def _warehouse(build: Builder) -> None:
    # old: the cheapest price but its source last ran 3 days ago (stale);
    # gone: cheaper still but marked unavailable; live: the dearest, fresh and available.
    build.source("old", "old")
    build.source("fresh", "fresh")
    build.capture("old", NOW - timedelta(days=3), [offer("old", "l4", "L4", 0.30)])
    build.capture("fresh", NOW, [offer("fresh", "gone", "L4", 0.20, available=False),
                                 offer("fresh", "live", "L4", 0.50)])


def test_cheapest_lists_comparable_offers_only(build: Builder) -> None:
    _warehouse(build)
    prices = Prices(build.con, NOW)
    assert cheapest_offers(prices, gpu_models=["L4"])["offering"].to_list() == ["live"]
    # unavailable offers can be listed after the rest; a stale one never is
    everything = cheapest_offers(prices, gpu_models=["L4"], include_unavailable=True)
    assert everything["offering"].to_list() == ["live", "gone"]
    # two days earlier, `old` was fresh and the cheapest
    earlier = Prices(build.con, NOW - timedelta(days=2))
    assert cheapest_offers(earlier, gpu_models=["L4"])["offering"].to_list() == ["l4"]


def test_tier_rankings_leave_stale_and_unavailable_out(build: Builder) -> None:
    _warehouse(build)
    top = top_per_tier(Prices(build.con, NOW))
    assert list(zip(top["rank"], top["offering"], strict=True)) == [(1, "live")]
    # the refresh summary's one offer per tier is the same answer
    one = top_per_tier(Prices(build.con, NOW), per_tier=1)
    assert one.filter(one["gpu_model"] == "L4")["offering"].to_list() == ["live"]
