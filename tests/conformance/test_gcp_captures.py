"""GCP captures: the real Billing Catalog GPU SKUs and the legacy calculator price list.

Checked by hand in gcp_billing_catalog_compute_gpu_skus_2025-06-17.json (1,632 SKUs): 288
on-demand, 290 Spot and 582 "Commitment v1" GPU SKUs; 6 on-demand and 12 commitment V100
SKUs (Jakarta, Warsaw, Delhi, Montreal, Seoul, Osaka) are priced $0 and dropped, leaving
282 + 290 + 570 = 1,142 rows. DWS Defined Duration (115), "Reserved ..." (202) and licence-fee
SKUs (155) are not list prices. The capture dropped serviceRegions, so regions are place names.
"""

from __future__ import annotations

import pytest

from contract import ParseError, RawCapture, now_utc
from schemas.observation import to_observations, validate
from scrapers import gcp
from tests.conftest import shared_file


def _raw(*parts: str) -> RawCapture:
    path = shared_file("captures", *parts)
    return RawCapture(source="gcp", url=gcp.URL, fetched_at=now_utc(), body=path.read_bytes())


def test_billing_catalog_gpu_skus() -> None:
    raw = _raw("gcp-billing-api", "gcp_billing_catalog_compute_gpu_skus_2025-06-17.json")
    frame = gcp.parse(raw)
    counts = dict(frame.group_by("pricing").len().iter_rows())
    assert counts == {"on_demand": 282, "spot": 290, "reserved": 570}
    prices = {(r["offering"], r["region"], r["pricing"]): r["price_usd_per_hour"]
              for r in frame.iter_rows(named=True)}
    assert prices[("nvidia-l4", "hong kong", "spot")] == pytest.approx(0.2350321)
    assert prices[("nvidia-h100-80gb", "virginia", "on_demand")] == pytest.approx(9.796551)
    assert prices[("nvidia-h100-80gb (1 Year commitment)", "warsaw", "reserved")] == \
        pytest.approx(8.759585)
    assert prices[("nvidia-tesla-t4", "americas", "on_demand")] == pytest.approx(0.35)
    assert prices[("nvidia-h200-141gb", "northern virginia", "on_demand")] == \
        pytest.approx(9.31174)
    assert ("nvidia-tesla-v100", "jakarta", "on_demand") not in prices  # priced $0
    batch = validate(to_observations(frame, raw, "run"))
    assert batch.quarantined.height == 0
    assert set(batch.good["gpu_model"]) == {"A100 40GB", "A100 80GB", "H100 SXM", "H200 SXM",
                                            "L4", "P100", "P4", "T4", "V100 16GB"}
    assert batch.good["gpu_only"].all()


def test_legacy_calculator_price_list_is_rejected() -> None:
    raw = _raw("gcp", "gcp_calculator_pricelist_v1.10_2016-11-30.json")
    with pytest.raises(ParseError, match="calculator"):
        gcp.parse(raw)
