"""Full cost of ownership, checked against a case worked by hand like a spreadsheet."""

from __future__ import annotations

import polars as pl
import pytest

from reports.market.tco import Assumptions, tco_rows, tco_sheet

# | item                     | formula                                   | value      |
# |--------------------------|-------------------------------------------|------------|
# | server                   | 8 GPUs, 5 kW                              | $100,000   |
# | capital $/h              | 100,000 / 4 years / 8760 (no interest)    | 2.853881   |
# | operations $/h           | 100,000 x 0.05 / 8760                     | 0.570776   |
# | colocation $/h           | 5 kW x $150 x 12 / 8760                   | 1.027397   |
# | power $/h                | 5 kW x (0.2 + 0.8 x 0.5) x 1.5 x $0.10    | 0.450000   |
# | total $/h                | sum                                       | 4.902055   |
# | $/useful GPU-hour        | 4.902055 / (8 x 0.5)                      | 1.225514   |
# | break-even vs $2.00      | (2.853881 + 0.570776 + 1.027397 + 0.15)   |            |
# |                          |   / (2.00 x 8 - 0.75 x 0.8)               | 0.298835   |
# | monthly saving vs $2.00  | (8 - 0.570776 - 1.027397 - 0.45) x 730    | 4,344.83   |
# | payback month            | ceil(100,000 / 4,344.83) = ceil(23.02)    | 24         |
# | vs $0.10 rental          | margin 0.8 - 0.6 = 0.2 -> u 23 > 1        | never      |
CASE = Assumptions(depreciation_years=4, cost_of_capital=0.0, usd_per_kwh=0.10, pue=1.5,
                   colocation_usd_per_kw_month=150, operations_share=0.05, utilization=0.5,
                   idle_power_share=0.2)
SERVER = {"gpu_model": "H100 SXM", "gpus": 8, "server_usd": 100_000.0, "server_kw": 5.0,
          "kind": "test", "as_of": "2026-01-01"}


def test_tco_worked_case() -> None:
    rows = tco_rows(pl.DataFrame([SERVER]), CASE, {"H100 SXM": 2.00},
                    {"H100 SXM": (0.10, "cheapco")}).to_dicts()[0]
    assert rows["capital_usd_h"] == pytest.approx(2.853881, abs=1e-6)
    assert rows["operations_usd_h"] == pytest.approx(0.570776, abs=1e-6)
    assert rows["colocation_usd_h"] == pytest.approx(1.027397, abs=1e-6)
    assert rows["power_usd_h"] == pytest.approx(0.45)
    assert rows["total_usd_h"] == pytest.approx(4.902055, abs=1e-6)
    assert rows["usd_per_useful_gpu_hour"] == pytest.approx(1.225514, abs=1e-6)
    assert rows["break_even_util_vs_market"] == pytest.approx(0.298835, abs=1e-6)
    assert rows["payback_month_vs_market"] == 24
    assert rows["break_even_util_vs_cheapest"] is None
    assert rows["payback_month_vs_cheapest"] is None
    assert rows["cheapest_provider"] == "cheapco"


def test_cost_of_capital_uses_the_annuity() -> None:
    # r = 8 %, n = 5: CRF = 0.08 x 1.08^5 / (1.08^5 - 1) = 0.2504565
    rows = tco_rows(pl.DataFrame([SERVER]), Assumptions(cost_of_capital=0.08,
                                                       depreciation_years=5), {}, {})
    assert rows["capital_usd_h"][0] == pytest.approx(100_000 * 0.2504565 / 8760, rel=1e-6)


def test_the_sheet_shows_the_arithmetic() -> None:
    sheet = {item: (formula, value) for item, formula, value in tco_sheet(SERVER, CASE, 2.00)}
    assert sheet["power $/h"] == ("5 kW x (0.2 + 0.8 x 0.5) x 1.5 x 0.1", "0.4500")
    assert sheet["$/useful GPU-hour"] == ("4.9021 / (8 x 0.5)", "1.2255")
    assert sheet["break-even utilization"][1] == "29.9%"
    assert sheet["payback month"][1] == "24"


def test_assumptions_out_of_range_are_refused() -> None:
    with pytest.raises(ValueError, match="pue must be between 1 and 3"):
        CASE.with_overrides(pue=0.5)
