"""The ops commands end to end on a temp warehouse, and the deployments `serve` would register."""

from __future__ import annotations

import csv
import io
from datetime import UTC, datetime
from pathlib import Path

from typer.testing import CliRunner

from flows.serve import build_deployments
from gpuprices.cli import app
from tests.ops.snapshots import lambda_csv, moving_history, write_snapshot


def test_backfill_export_reparse_alerts_commands(tmp_path: Path) -> None:
    runner = CliRunner()
    history = moving_history(tmp_path / "history" / "skypilot")
    wh = ["-w", str(tmp_path / "wh" / "w.duckdb")]

    done = runner.invoke(app, ["backfill", "skypilot", str(history.parent), *wh, "-f", "csv"])
    assert done.exit_code == 0, done.output
    rows = list(csv.DictReader(io.StringIO(done.output)))
    assert [(r["snapshot"], r["clouds"], r["status"]) for r in rows] == [
        ("2024-01-01", "lambda, runpod", "success"), ("2024-02-01", "lambda, runpod", "success"),
        ("2024-03-01", "lambda, runpod", "success")]
    again = runner.invoke(app, ["backfill", "skypilot", str(history), *wh, "-f", "csv"])
    assert again.output.count("already stored") == 3

    changes = runner.invoke(app, ["query", "SELECT count(*) AS n FROM price_change", *wh,
                                  "-f", "csv"])
    assert changes.output.split() == ["n", "4"]

    out = tmp_path / "export"
    exported = runner.invoke(app, ["export", str(out), "--format", "csv", *wh])
    assert exported.exit_code == 0, exported.output
    assert "24 observations in 6 partitions" in exported.output
    assert (out / "observations" / "day=2024-03-01" / "provider=runpod" / "data_0.csv").exists()

    reparsed = runner.invoke(app, ["reparse", "--source", "skypilot", "--since", "2024-02-01",
                                   *wh, "-f", "csv"])
    assert reparsed.exit_code == 0, reparsed.output
    assert reparsed.output.count(",reparsed,8,8,") == 2  # the February and March captures

    # Alerts look at the prices standing now (the 2024 history is stale now): today's snapshot
    today = datetime.now(UTC).date().isoformat()
    write_snapshot(history, "lambda", today, lambda_csv(h100=1.99), f"{today}T00:00:00Z")
    landed = runner.invoke(app, ["backfill", "skypilot", str(history.parent), *wh])
    assert landed.exit_code == 0, landed.output
    rules = tmp_path / "rules.toml"
    rules.write_text('[[rule]]\nname = "h100"\nkind = "cheapest_below"\ngpu = "H100"\n'
                     "below_usd_per_gpu_hour = 2.0\n", encoding="utf-8")
    dry = runner.invoke(app, ["alerts", "check", "--rules", str(rules), "--dry-run", *wh])
    assert "would send [h100] cheapest H100 (H100 PCIe, on_demand) is $1.99/GPU-h" in dry.output
    sent = runner.invoke(app, ["alerts", "check", "--rules", str(rules), *wh])
    assert "ALERT [h100]" in sent.output and "1 new alert event(s)" in sent.output
    assert "0 new alert event(s)" in runner.invoke(
        app, ["alerts", "check", "--rules", str(rules), *wh]).output
    listed = runner.invoke(app, ["alerts", "list", *wh, "-f", "csv"])
    assert listed.output.count("cheapest_below") == 1


def test_serve_builds_both_scheduled_deployments() -> None:
    deployments = build_deployments("15 3 * * *", "0 7 * * 2", "/data/w.duckdb")
    summary = [(d.flow_name, d.name,
                [(s.schedule.cron, s.schedule.timezone) for s in d.schedules],  # type: ignore[union-attr]
                d.parameters) for d in deployments]
    assert summary == [
        ("refresh", "refresh-nightly", [("15 3 * * *", "UTC")], {"warehouse": "/data/w.duckdb"}),
        ("weekly-report", "weekly-report", [("0 7 * * 2", "UTC")],
         {"warehouse": "/data/w.duckdb"}),
    ]
    assert [d.entrypoint for d in deployments] == ["flows/refresh.py:refresh",
                                                   "flows/weekly_report.py:weekly_report"]
