"""Paperspace page parser against real Paperspace prices in ../shared/captures/opencomputeprices.

No raw Paperspace page exists. The real figures are SkyPilot's Paperspace catalog rows (14, in
ocp_skypilot_subset_2026-03-21.csv: machine type, GPU, count, vCPUs, RAM, region NY2, price per
machine-hour) and OpenComputePrices' own Paperspace row (ocp_paperspace.csv, H100 $5.95). The
SkyPilot rows are rendered into the table layout our parser reads, WITHOUT their gpu_count, so
the test checks that the counts our parser takes from Paperspace's machine names ("H100x8",
"V100-32Gx4") agree with SkyPilot's, and that every GPU maps to the catalog. Checked by hand:
14 machines, 7 of them multi-GPU (A4000x2/x4, P4000x2, V100-32Gx2/x4, A100-80Gx8,
H100x8).
"""

from __future__ import annotations

import csv
from datetime import UTC, datetime

import pytest

from schemas.observation import to_observations, validate
from scrapers import paperspace
from scrapers.base import RawCapture
from tests.conftest import shared_file


def _read(*parts: str) -> list[dict[str, str]]:
    with shared_file(*parts).open(newline="", encoding="utf-8") as handle:
        return list(csv.DictReader(handle))


@pytest.fixture(scope="module")
def skypilot_rows() -> list[dict[str, str]]:
    rows = _read("captures", "opencomputeprices", "ocp_skypilot_subset_2026-03-21.csv")
    return [r for r in rows if r["provider"] == "paperspace"]


def test_skypilot_paperspace_rows_through_the_page_parser(
    skypilot_rows: list[dict[str, str]],
) -> None:
    assert len(skypilot_rows) == 14
    html = "<table><tr><th>Machine</th><th>GPU</th><th>vCPU</th><th>RAM</th><th>Hourly</th></tr>"
    html += "".join(
        f'<tr><td>{r["instance_type"]}</td><td>{r["gpu_name"]}</td><td>{r["vcpus"]}</td>'
        f'<td>{r["ram_gb"]} GB</td><td>${r["price_per_hour"]}/hr</td></tr>' for r in skypilot_rows)
    raw = RawCapture(source="paperspace", url=paperspace.URL,
                     fetched_at=datetime(2026, 3, 21, tzinfo=UTC),
                     body=(html + "</table>").encode())
    obs = to_observations(paperspace.parse(raw), raw, run_id="conformance")
    assert obs.height == 14
    counts = dict(zip(obs["offering"], obs["gpu_count"], strict=True))
    assert counts == {r["instance_type"]: float(r["gpu_count"]) for r in skypilot_rows}
    assert sum(c > 1 for c in counts.values()) == 7
    prices = dict(zip(obs["offering"], obs["price_usd_per_hour"], strict=True))
    assert prices["H100x8"] == 47.6
    assert prices["A100-80G"] == 3.18
    assert prices["GPU+"] == 0.45
    models = dict(zip(obs["offering"], obs["gpu_model"], strict=True))
    assert models["A100-80Gx8"] == "A100 80GB"
    assert models["V100-32Gx4"] == "V100 32GB"
    assert models["GPU+"] == "Quadro M4000"
    assert "unknown" not in models.values()
    assert validate(obs).quarantined.height == 0


def test_our_example_agrees_with_the_real_figures(skypilot_rows: list[dict[str, str]]) -> None:
    example = paperspace.SOURCE.parse(paperspace.SOURCE.example_capture())
    ours = dict(zip(example["offering"], example["price_usd_per_hour"], strict=True))
    real = {r["instance_type"]: float(r["price_per_hour"]) for r in skypilot_rows}
    shared = sorted(set(ours) & set(real))
    assert len(shared) == 10
    assert {k: ours[k] for k in shared} == {k: real[k] for k in shared}
    [ocp] = _read("captures", "opencomputeprices", "ocp_paperspace.csv")
    assert (ocp["instance_type"], float(ocp["price_per_hour"])) == ("H100", ours["H100"])
