"""Azure Retail Prices captures in ../shared/captures/azure (real API items).

Checked by hand in azure_retail_prices_unfiltered_items_2026-08-22.json (1,000 items of every
service, 12 of them GPU VM meters): kept are NC48ads_A100_v4 on-demand 7.346 and its two
reservations (42066 / 1 y, 71642 / 3 y), ND96isr_H200_v5 on-demand 106.0 and reservations
(509408 / 1 y, 1386990 / 3 y), and the Linux Spot meters of ND96ams_A100_v4 (15.83894),
NC320lds_xl_RTXPRO6000BSE_v6 (2.64264) and NV4as_v4 (0.053777): 9 rows. Skipped: the
NC80adis_H100_v5 Low Priority meter and both NC320ds_xl_RTXPRO6000BSE_v6 meters (Windows; one
of them DevTestConsumption).
"""

from __future__ import annotations

import orjson
import pytest

from contract import RawCapture, now_utc
from schemas.observation import to_observations, validate
from scrapers import azure
from tests.conftest import shared_file


def _raw(name: str) -> RawCapture:
    path = shared_file("captures", "azure", name)
    return RawCapture(source="azure", url=azure.URL, fetched_at=now_utc(), body=path.read_bytes())


def test_unfiltered_items_yield_the_nine_linux_gpu_prices() -> None:
    raw = _raw("azure_retail_prices_unfiltered_items_2026-08-22.json")
    frame = azure.parse(raw)
    prices = {(r["offering"], r["region"], r["pricing"]): r["price_usd_per_hour"]
              for r in frame.iter_rows(named=True)}
    assert frame.height == 9
    assert prices[("Standard_NC48ads_A100_v4", "eastus2", "on_demand")] == 7.346
    assert prices[("Standard_NC48ads_A100_v4 (1 Year reservation)", "eastus2", "reserved")] == \
        pytest.approx(42066.0 / 8760)
    assert prices[("Standard_ND96isr_H200_v5 (3 Years reservation)", "usgovvirginia",
                   "reserved")] == pytest.approx(1386990.0 / 26280)
    assert prices[("Standard_ND96ams_A100_v4", "switzerlandwest", "spot")] == 15.83894
    assert prices[("Standard_NC320lds_xl_RTXPRO6000BSE_v6", "eastus2", "spot")] == 2.64264
    assert prices[("Standard_NV4as_v4", "usgovarizona", "spot")] == 0.053777
    assert not any("NC80adis" in key[0] or "NC320ds_" in key[0] for key in prices)
    batch = validate(to_observations(frame, raw, "run"))
    assert batch.quarantined.height == 0
    assert set(batch.good["gpu_model"]) == {"A100 80GB", "H200 SXM", "RTX PRO 6000",
                                            "Radeon MI25"}


def test_single_page_envelope_parses_and_classifies_its_meters() -> None:
    raw = _raw("azure_retail_prices_standard_d2s_v3_eastus_spot.json")
    assert azure.parse(raw).height == 0  # D2s_v3 is not a GPU VM
    items = orjson.loads(raw.body)["Items"]
    classes = {(i["productName"].endswith("Windows"), i["meterName"]): azure._pricing(i)
               for i in items}
    assert classes == {
        (False, "D2s v3"): "on_demand", (False, "D2s v3 Spot"): "spot",
        (False, "D2s v3 Low Priority"): None, (True, "D2s v3"): None,
        (True, "D2s v3 Spot"): None, (True, "D2s v3 Low Priority"): None,
    }
