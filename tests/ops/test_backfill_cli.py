"""The `gpuprices backfill ...` commands end to end, on local test data only."""

from __future__ import annotations

import gzip
import subprocess
from pathlib import Path

from typer.testing import CliRunner

from gpuprices.cli import app
from tests.archive_server import serve_archive
from tests.unit.test_ocp_archive_backfill import MONTH
from tests.unit.test_skypilot_git_backfill import LAMBDA_V1, LAMBDA_V2, commit
from tests.unit.test_wayback_backfill import archive_of

runner = CliRunner()


def test_backfill_wayback_command(warehouse_path: Path) -> None:
    args = ["backfill", "wayback", "lambda-page", "--every", "capture", "--interval", "0.2",
            "-w", str(warehouse_path), "--format", "csv"]
    with serve_archive(archive_of()) as base:
        env = {"GPUPRICES_BASE_URL_WAYBACK": base, "GPUPRICES_BACKOFF_S": "0"}
        first = runner.invoke(app, args, env=env)
        second = runner.invoke(app, args, env=env)
    assert first.exit_code == 0, first.output
    assert [line.split(",")[2] for line in first.stdout.strip().splitlines()[1:]] == [
        "success", "failed", "success", "unchanged"]
    assert "4 captures: 4 landed now (1 failed)" in first.output
    assert second.exit_code == 0
    assert "3 already stored" in second.output  # the failed page is retried from the archive


def test_backfill_wayback_refuses_non_page_sources(warehouse_path: Path) -> None:
    result = runner.invoke(app, ["backfill", "wayback", "vastai", "-w", str(warehouse_path)])
    assert result.exit_code == 2 and "not a page source" in result.output
    result = runner.invoke(app, ["backfill", "wayback", "lambda-page", "--interval", "0.01",
                                 "-w", str(warehouse_path)])
    assert result.exit_code == 2  # faster than one request per 0.2 s is refused


def test_backfill_skypilot_git_and_folder_commands(tmp_path: Path,
                                                   warehouse_path: Path) -> None:
    repo = tmp_path / "catalog"
    repo.mkdir()
    subprocess.run(["git", "init", "-q", str(repo)], check=True)
    commit(repo, "2024-01-05T07:00:00Z", {"catalogs/v5/lambda/vms.csv": LAMBDA_V1}, "one")
    commit(repo, "2024-02-02T14:00:00Z", {"catalogs/v5/lambda/vms.csv": LAMBDA_V2}, "two")
    result = runner.invoke(app, ["backfill", "skypilot", "--git", str(repo), "-w",
                                 str(warehouse_path), "--format", "csv"])
    assert result.exit_code == 0, result.output
    assert "2 captures: 2 landed now (0 failed)" in result.output
    result = runner.invoke(app, ["backfill", "skypilot", "-w", str(warehouse_path)])
    assert result.exit_code == 2 and "either a snapshot folder or --git" in result.output


def test_backfill_opencomputeprices_command(tmp_path: Path, warehouse_path: Path) -> None:
    archive = tmp_path / "ocp_2026-01.csv.gz"
    archive.write_bytes(gzip.compress(MONTH.encode()))
    args = ["backfill", "opencomputeprices", str(archive), "-w", str(warehouse_path)]
    first, second = runner.invoke(app, args), runner.invoke(app, args)
    assert first.exit_code == 0, first.output
    assert "3 captures: 3 landed now (0 failed), 0 already stored; 5 rows" in first.output
    assert "0 landed now (0 failed), 3 already stored; 0 rows" in second.output
    missing = runner.invoke(app, ["backfill", "opencomputeprices", str(tmp_path / "nope.csv"),
                                  "-w", str(warehouse_path)])
    assert missing.exit_code == 2
