"""The alert rules as pure functions, on hand-made frames (no warehouse)."""

from __future__ import annotations

from datetime import UTC, date, datetime

import polars as pl
import pytest

from reports.alerts.config import AlertConfigError, Rule, parse_config
from reports.alerts.rules import cheapest_below_events, price_drop_events, stale_source_events

NOW = datetime(2025, 5, 10, 12, tzinfo=UTC)


def comparable(*rows: tuple[str, str, str, str, float]) -> pl.DataFrame:
    """Comparable offers (warehouse.semantic already left out GPU-only, stale, unavailable
    and outlier rows: the rules never see them)."""
    return pl.DataFrame(rows, orient="row", schema={
        "gpu_model": pl.String, "provider": pl.String, "offering": pl.String,
        "pricing": pl.String, "price_usd_per_gpu_hour": pl.Float64,
    }).with_columns(region=pl.lit("eu-1"))


def test_cheapest_below_picks_the_cheapest_offer_of_the_family() -> None:
    frame = comparable(
        ("H100 SXM", "acme", "h100-8x", "on_demand", 2.10),
        ("H100 PCIe", "bolt", "h100-1x", "on_demand", 1.95),
        ("H100 SXM", "spotty", "h100-spot", "spot", 0.90),  # not in the default pricing set
        ("A100 80GB", "acme", "a100-1x", "on_demand", 0.50),  # another GPU
    )
    # "h100", as typed on the command line: the family, resolved when the rule is made
    rule = Rule("cheap", "cheapest_below", gpu="h100", below_usd_per_gpu_hour=2.00)
    assert rule.gpu_models == ("H100 SXM", "H100 PCIe", "H100 NVL")
    [event] = cheapest_below_events(frame, rule)
    assert event.event_key == "bolt|h100-1x|eu-1|on_demand|1.9500"
    assert event.message == ("cheapest h100 (H100 PCIe, on_demand) is $1.95/GPU-h at bolt "
                             "h100-1x (eu-1), below $2.00")
    # pricing "any" lets the spot offer win; a model name matches only that model.
    anything = Rule("any", "cheapest_below", gpu="H100", pricing="any",
                    below_usd_per_gpu_hour=2.00)
    assert cheapest_below_events(frame, anything)[0].event_key.startswith("spotty|h100-spot|")
    sxm = Rule("sxm", "cheapest_below", gpu="H100 SXM", below_usd_per_gpu_hour=2.00)
    assert cheapest_below_events(frame, sxm) == []  # its cheapest eligible is $2.10
    assert cheapest_below_events(frame.head(0), rule) == []


def test_price_drop_groups_regions_and_keeps_the_window() -> None:
    base = {"source": "acme-api", "provider": "acme", "offering": "a100-1x",
            "pricing": "on_demand", "gpu_model": "A100 80GB",
            "old_price_usd_per_hour": 2.00, "new_price_usd_per_hour": 1.70, "pct_change": -15.0}
    frame = pl.DataFrame([
        {**base, "changed_on": date(2025, 5, 8), "region": "us-2"},
        {**base, "changed_on": date(2025, 5, 8), "region": "us-1"},
        {**base, "changed_on": date(2025, 4, 1), "region": "us-1"},  # before the window
        {**base, "changed_on": date(2025, 5, 9), "region": "us-1", "new_price_usd_per_hour": 1.96,
         "pct_change": -2.0},  # too small
    ])
    rule = Rule("drop", "price_drop", gpu="A100 80GB", drop_pct=10, within_days=7)
    [event] = price_drop_events(frame, rule, NOW)
    assert event.event_key == "acme-api|acme|a100-1x|on_demand|2025-05-08|2.0000|1.7000"
    assert event.message == ("A100 80GB at acme a100-1x (on_demand, 2 regions): $2.00 -> "
                             "$1.70/h (-15.0 %) on 2025-05-08")
    wide = Rule("wide", "price_drop", gpu="A100 80GB", drop_pct=1, within_days=60)
    assert [e.message.split(" on ")[-1] for e in price_drop_events(frame, wide, NOW)] == [
        "2025-04-01", "2025-05-08", "2025-05-09"]


def test_stale_source_skips_fresh_skipped_and_never_run_sources() -> None:
    frame = pl.DataFrame({
        "source": ["fresh", "old", "never", "skipped", "unrun"],
        "last_run_at": [NOW, NOW, NOW, NOW, None],
        "last_status": ["success", "failed", "failed", "skipped", None],
        "last_error": [None, "HTTP 503", None, "no key", None],
        "last_success_at": [datetime(2025, 5, 10, 1, tzinfo=UTC),
                            datetime(2025, 5, 8, 12, tzinfo=UTC), None, None, None],
    })
    rule = Rule("stale", "source_stale", source="*", stale_hours=24)
    events = stale_source_events(frame, rule, NOW)
    assert [(e.event_key, e.message) for e in events] == [
        ("never|never", "source never stale for more than 24 h: never succeeded; last run "
                        "failed"),
        ("old|2025-05-08T12:00:00+00:00", "source old stale for more than 24 h: last success "
         "2025-05-08 12:00 UTC (48 h ago); last run failed: HTTP 503"),
    ]
    only = Rule("one", "source_stale", source="fresh", stale_hours=6)
    assert [e.event_key for e in stale_source_events(frame, only, NOW)] == [
        "fresh|2025-05-10T01:00:00+00:00"]


def test_an_unknown_gpu_or_pricing_is_an_error_when_the_rules_load() -> None:
    rule = {"name": "typo", "kind": "cheapest_below", "gpu": "H1000",
            "below_usd_per_gpu_hour": 2.0}
    with pytest.raises(AlertConfigError, match="rule 'typo': unknown GPU 'H1000'"):
        parse_config({"rule": [rule]}, {})
    with pytest.raises(AlertConfigError, match="rule 'typo': pricing must be"):
        parse_config({"rule": [{**rule, "gpu": "H100", "pricing": "cheap"}]}, {})
    with pytest.raises(AlertConfigError, match="unknown field"):
        parse_config({"rule": [{**rule, "gpu": "H100", "gpu_models": ["X"]}]}, {})
    config = parse_config({"rule": [{**rule, "gpu": "h100", "pricing": ["spot", "on_demand"]}]},
                          {})
    assert config.rules[0].gpu_models == ("H100 SXM", "H100 PCIe", "H100 NVL")
    assert config.rules[0].pricing == ("spot", "on_demand")
