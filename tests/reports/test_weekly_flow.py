"""The weekly_report flow writes the dated markdown + chart and publishes the artifact."""

from __future__ import annotations

import base64
from datetime import UTC, datetime
from pathlib import Path

import pytest

from tests.reports.conftest import Builder, build_market
from warehouse.connection import connect


@pytest.mark.timeout(240)
def test_weekly_report_flow(prefect_harness: None, tmp_path: Path) -> None:
    from prefect.client.orchestration import get_client
    from prefect.client.schemas.filters import ArtifactFilter, ArtifactFilterKey

    from flows.weekly_report import weekly_report
    from reports.weekly.report import artifact_key, week_label

    warehouse = tmp_path / "w.duckdb"
    con = connect(warehouse)
    try:
        build_market(Builder(con), at=datetime.now(UTC))
    finally:
        con.close()
    out = tmp_path / "reports"
    path = Path(weekly_report(week=None, out_dir=str(out), warehouse=str(warehouse)))
    week = week_label(datetime.now(UTC))
    assert path == out / f"{week}.md"
    text = path.read_text(encoding="utf-8")
    assert text.startswith(f"# GPU prices: week {week}")
    assert f"![{week}-cheapest.png]({week}-cheapest.png)" in text
    assert (out / f"{week}-cheapest.png").read_bytes()[:4] == b"\x89PNG"
    with get_client(sync_client=True) as client:
        artifacts = client.read_artifacts(artifact_filter=ArtifactFilter(
            key=ArtifactFilterKey(any_=[artifact_key(week)])))
    assert artifacts and artifacts[0].type == "markdown"
    board = out / "board" / f"{week}.html"
    assert (out / "board" / "index.html").read_text(encoding="utf-8") == board.read_text(
        encoding="utf-8")
    # In the UI the chart is embedded and the board is named, not linked as a local file
    # (tests/flows/test_report_artifact.py covers GPUPRICES_BOARD_URL).
    chart = base64.b64encode((out / f"{week}-cheapest.png").read_bytes()).decode()
    assert artifacts[0].data == text.replace(
        f"]({week}-cheapest.png)", f"](data:image/png;base64,{chart})") + (
        f"\nPrice board for {week}: `{board}` on the machine that ran this flow (set "
        "GPUPRICES_BOARD_URL to where board/ is served to link it here).\n")
