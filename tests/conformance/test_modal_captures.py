"""Modal parser over the real rendered pricing page in ../shared/captures/modal (skips without it).

Checked by hand (PAGES.md §5 and the page's div.line-item rows): 9 GPUs priced per second,
B200 $0.001736, H200 $0.001261, H100 $0.001097, A100 80 GB $0.000694, A100 40 GB $0.000583,
L40S $0.000542, A10G $0.000306, L4 $0.000222, T4 $0.000164; CPU and memory line items too.
"""

from __future__ import annotations

from datetime import UTC, datetime
from pathlib import Path

import pytest

from contract import RawCapture
from schemas.observation import to_observations, validate
from scrapers.modal import SOURCE
from tests.conftest import CAPTURES, shared_file

pytestmark = pytest.mark.conformance
FILES = sorted((CAPTURES / "modal").glob("*.html")) or [CAPTURES / "modal" / "missing.html"]
PER_SECOND = {
    "Nvidia B200": ("B200", 0.001736), "Nvidia H200": ("H200 SXM", 0.001261),
    "Nvidia H100": ("H100 PCIe", 0.001097), "Nvidia A100, 80 GB": ("A100 80GB", 0.000694),
    "Nvidia A100, 40 GB": ("A100 40GB", 0.000583), "Nvidia L40S": ("L40S", 0.000542),
    "Nvidia A10G": ("A10G", 0.000306), "Nvidia L4": ("L4", 0.000222),
    "Nvidia T4": ("T4", 0.000164),
}


@pytest.mark.parametrize("path", FILES, ids=lambda p: p.name)
def test_every_page_parses_to_valid_known_rows(path: Path) -> None:
    shared_file("captures", "modal", path.name)
    raw = RawCapture(source="modal", url=SOURCE.url, body=path.read_bytes(),
                     fetched_at=datetime(2025, 6, 12, tzinfo=UTC))
    batch = validate(to_observations(SOURCE.parse(raw), raw, "conformance"))
    assert batch.quarantined.height == 0
    assert batch.good.height > 0 and "unknown" not in batch.good["gpu_model"].to_list()


def test_rendered_page_2025_06_12() -> None:
    path = shared_file("captures", "modal", "modal_pricing_rendered_2025-06-12.html")
    raw = RawCapture(source="modal", url=SOURCE.url, body=path.read_bytes(),
                     fetched_at=datetime(2025, 6, 12, tzinfo=UTC))
    frame = validate(to_observations(SOURCE.parse(raw), raw, "conformance")).good
    assert frame.height == 9
    got = {r["offering"]: (r["gpu_model"], r["price_usd_per_hour"])
           for r in frame.iter_rows(named=True)}
    assert set(got) == set(PER_SECOND)
    for offering, (model, per_second) in PER_SECOND.items():
        assert got[offering][0] == model
        assert got[offering][1] == pytest.approx(per_second * 3600)
    assert got["Nvidia H100"][1] == pytest.approx(3.9492)
    assert set(frame["pricing"]) == {"serverless"} and set(frame["billing_increment_s"]) == {1}
