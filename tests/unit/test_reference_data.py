"""Plans and GPU ownership: the shipped CSVs validate, bad rows are refused with the row named,
and both tables are re-synced into the warehouse on every writable open."""

from __future__ import annotations

import datetime as dt
from pathlib import Path

import pytest

from schemas.gpus import load_catalog
from schemas.reference import (
    OWNERSHIP_PATH,
    PLANS_PATH,
    ReferenceDataError,
    load_ownership,
    load_plans,
)
from warehouse.connection import connect


def _copy_with(tmp_path: Path, source: Path, replace: tuple[str, str] | None = None,
               append: str | None = None) -> Path:
    text = source.read_text(encoding="utf-8")
    if replace:
        assert replace[0] in text
        text = text.replace(replace[0], replace[1], 1)
    if append:
        text = text.rstrip("\n") + "\n" + append + "\n"
    path = tmp_path / source.name
    path.write_text(text, encoding="utf-8")
    return path


def test_shipped_plans_hold_the_seed_facts() -> None:
    plans = load_plans()
    pro_t4 = plans.filter(plan="Colab Pro", gpu_model="T4").row(0, named=True)
    assert pro_t4["usd_per_month"] == 9.99
    assert pro_t4["compute_units_per_month"] == 100
    assert pro_t4["units_per_gpu_hour"] == 1.96
    assert plans.filter(plan="Colab Pro+", gpu_model="A100 40GB")["usd_per_month"].item() == 49.99
    kaggle = plans.filter(provider="kaggle")
    assert set(kaggle["gpu_model"]) == {"T4", "P100"}
    assert kaggle["gpu_hours_per_week"].unique().to_list() == [30.0]
    free = plans.filter(plan="Colab Free").row(0, named=True)
    assert (free["usd_per_month"], free["gpu_model"]) == (0.0, "T4")
    assert plans.filter(plan="HF PRO")["usd_per_month"].item() == 9.0
    assert plans["as_of"].dtype.is_temporal() and plans["as_of"].null_count() == 0
    assert plans["source_url"].str.starts_with("https://").all()


def test_shipped_ownership_covers_the_rent_vs_buy_cards() -> None:
    owned = load_ownership()
    known = {spec.gpu_model for spec in load_catalog()}
    assert set(owned["gpu_model"]) <= known
    assert {"RTX 3090", "RTX 4090", "RTX 5090", "RTX A6000", "RTX 6000 Ada",
            "H100 PCIe"} <= set(owned["gpu_model"])
    rtx4090 = owned.filter(gpu_model="RTX 4090").row(0, named=True)
    assert rtx4090["purchase_usd"] == pytest.approx(1600, abs=5)  # seed: $1,600
    assert rtx4090["power_watts"] == 450
    assert rtx4090["as_of"] == dt.date(2022, 10, 12)
    assert 25_000 <= owned.filter(gpu_model="H100 PCIe")["purchase_usd"].item() <= 30_000


def test_plan_with_unknown_gpu_is_rejected_naming_the_row(tmp_path: Path) -> None:
    bad = _copy_with(tmp_path, PLANS_PATH, append=(
        "colab,Colab Pro,9.99,100,Quantum 9000,3.0,,24,2025-01-01,https://x.example,typo"))
    with pytest.raises(ReferenceDataError, match=r"row 14: gpu_model fails isin"):
        load_plans(bad)


def test_negative_price_is_rejected(tmp_path: Path) -> None:
    bad = _copy_with(tmp_path, OWNERSHIP_PATH, replace=("RTX 3090,1499,", "RTX 3090,-1499,"))
    with pytest.raises(ReferenceDataError, match=r"row 2: purchase_usd fails greater_than"):
        load_ownership(bad)


def test_bad_date_and_missing_source_are_rejected(tmp_path: Path) -> None:
    bad_date = _copy_with(tmp_path, OWNERSHIP_PATH, replace=("2020-09-24", "Sept 2020"))
    with pytest.raises(ReferenceDataError, match=r"row 2: as_of='Sept 2020' is not a valid ISO"):
        load_ownership(bad_date)
    no_url = _copy_with(tmp_path, PLANS_PATH, append=(
        "kaggle,Kaggle Pro,0,,T4,,30,12,2025-01-01,,no source"))
    with pytest.raises(ReferenceDataError, match=r"source_url"):
        load_plans(no_url)


def test_compute_units_without_a_burn_rate_are_rejected(tmp_path: Path) -> None:
    bad = _copy_with(tmp_path, PLANS_PATH, append=(
        "colab,Colab Pro,9.99,100,P100,,,24,2025-01-01,https://x.example,no rate"))
    with pytest.raises(ReferenceDataError, match="compute_units_need_a_burn_rate"):
        load_plans(bad)


def test_wrong_header_is_rejected(tmp_path: Path) -> None:
    bad = _copy_with(tmp_path, OWNERSHIP_PATH, replace=("power_watts", "watts"))
    with pytest.raises(ReferenceDataError, match="columns"):
        load_ownership(bad)


def test_tables_are_synced_into_the_warehouse(warehouse_path: Path) -> None:
    con = connect(warehouse_path)
    try:
        plan_columns = [r[0] for r in con.execute("DESCRIBE plan").fetchall()]
        assert plan_columns == [*load_plans().columns, "kind"]
        owned_columns = [r[0] for r in con.execute("DESCRIBE gpu_ownership").fetchall()]
        assert owned_columns == [*load_ownership().columns, "kind"]
        assert con.execute("SELECT count(*) FROM plan").fetchone() == (load_plans().height,)
        assert con.execute("SELECT DISTINCT kind FROM gpu_ownership").fetchall() == [("static",)]
        # A stale row left by an older version disappears on the next writable open.
        con.execute("INSERT INTO gpu_ownership VALUES "
                    "('T4', 1, 1, DATE '2020-01-01', 'https://x', NULL, 'static')")
    finally:
        con.close()
    con = connect(warehouse_path)
    try:
        rows = con.execute(
            "SELECT gpu_model, purchase_usd FROM gpu_ownership ORDER BY gpu_model").fetchall()
        assert ("T4", 1.0) not in rows
        assert ("RTX 4090", 1599.0) in rows
    finally:
        con.close()
