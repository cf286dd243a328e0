"""Alert rules over a warehouse with real price moves: fire once per event, reach a webhook."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta
from pathlib import Path

import pytest

from flows.alerts import alerts_after_refresh
from flows.backfill import backfill_skypilot
from reports.alerts import (
    AlertConfig,
    AlertConfigError,
    Rule,
    check_alerts,
    load_config,
    parse_config,
)
from tests.ops.receiver import http_receiver
from tests.ops.snapshots import lambda_csv, moving_history, runpod_csv, write_snapshot
from warehouse import snapshot
from warehouse.connection import open_warehouse

MARCH_2 = datetime(2024, 3, 2, 12, tzinfo=UTC)
RULES = (
    Rule("cheap-h100", "cheapest_below", gpu="H100", below_usd_per_gpu_hour=2.20),
    Rule("h100-never", "cheapest_below", gpu="H100", below_usd_per_gpu_hour=1.00),
    Rule("a100-drop", "price_drop", gpu="A100 80GB", drop_pct=10, within_days=7),
    Rule("h100-drop", "price_drop", gpu="H100", drop_pct=5, within_days=60),
)


def test_rules_fire_once_per_new_event(tmp_path: Path, warehouse_path: Path) -> None:
    history = moving_history(tmp_path / "skypilot")
    with open_warehouse(warehouse_path) as con:
        backfill_skypilot(con, history, archive_root=tmp_path / "raw")
        fired = check_alerts(con, AlertConfig(RULES), now=MARCH_2)
        assert [(e.rule, e.message) for e in fired] == [
            ("cheap-h100", "cheapest H100 (H100 PCIe, on_demand) is $1.99/GPU-h at lambda "
             "gpu_1x_h100_pcie (us-east-1), below $2.20"),
            # -10.05 %: at least the 10 % asked for; one event for both regions.
            ("a100-drop", "A100 80GB at runpod 1x_A100-80GB_SECURE (on_demand, 2 regions): "
             "$1.99 -> $1.79/h (-10.1 %) on 2024-03-01"),
            ("h100-drop", "H100 PCIe at lambda gpu_1x_h100_pcie (on_demand, 2 regions): "
             "$2.49 -> $1.99/h (-20.1 %) on 2024-02-01"),
        ]
        assert all(e.delivered == ["log"] for e in fired)
        # The next night sees the same state: nothing is sent again.
        assert check_alerts(con, AlertConfig(RULES), now=MARCH_2 + timedelta(days=1)) == []
        # A new cheaper H100 is a new event; the old drops stay sent.
        write_snapshot(history, "lambda", "2024-03-03", lambda_csv(h100=1.89),
                       "2024-03-03T21:00:00Z")
        backfill_skypilot(con, history, archive_root=tmp_path / "raw")
        again = check_alerts(con, AlertConfig(RULES), now=MARCH_2 + timedelta(days=2))
        assert sorted(e.rule for e in again) == ["cheap-h100", "h100-drop"]
        assert "$1.99 -> $1.89/h" in next(e.message for e in again if e.rule == "h100-drop")
        stored = con.execute("SELECT rule, count(*) FROM alert_event GROUP BY ALL ORDER BY ALL"
                             ).fetchall()
        assert stored == [("a100-drop", 1), ("cheap-h100", 2), ("h100-drop", 2)]


def test_stale_source_fires_once_per_episode(tmp_path: Path, warehouse_path: Path) -> None:
    write_snapshot(tmp_path / "s", "runpod", "2024-01-01", runpod_csv())
    config = AlertConfig((Rule("stale", "source_stale", source="*", stale_hours=24),))
    with open_warehouse(warehouse_path) as con:
        backfill_skypilot(con, tmp_path / "s", archive_root=tmp_path / "raw")
        assert check_alerts(con, config) == []  # just succeeded
        later = datetime.now(UTC) + timedelta(hours=30)
        fired = check_alerts(con, config, now=later)
        assert len(fired) == 1 and fired[0].message.startswith(
            "source skypilot-catalog stale for more than 24 h: last success ")
        assert check_alerts(con, config, now=later + timedelta(hours=5)) == []


def test_events_reach_an_apprise_json_webhook(tmp_path: Path, warehouse_path: Path,
                                             monkeypatch: pytest.MonkeyPatch) -> None:
    history = moving_history(tmp_path / "skypilot")
    # The check after a refresh looks at the prices standing now: a snapshot of today (the
    # 2024 history alone is stale now, so no price of it is a comparable offer).
    today = datetime.now(UTC).date().isoformat()
    write_snapshot(history, "lambda", today, lambda_csv(h100=1.99), f"{today}T00:00:00Z")
    with open_warehouse(warehouse_path) as con:
        backfill_skypilot(con, history, archive_root=tmp_path / "raw")
    rules_file = tmp_path / "alerts.toml"
    rules_file.write_text(
        '[notify]\napprise_urls = []\n\n[[rule]]\nname = "cheap-h100"\n'
        'kind = "cheapest_below"\ngpu = "H100"\nbelow_usd_per_gpu_hour = 2.2\n',
        encoding="utf-8")
    monkeypatch.chdir(tmp_path)  # no ./alerts.toml from the repo
    with http_receiver() as (host, received):
        env = {"GPUPRICES_ALERTS": str(rules_file),
               "GPUPRICES_ALERT_URLS": f"json://{host}/gpu-alerts"}
        fired = alerts_after_refresh(warehouse_path, env)
        assert [e.delivered for e in fired] == [["log", "apprise x1"]]
        published = snapshot.current(warehouse_path)
        assert published is not None and published.matches(warehouse_path)
        assert alerts_after_refresh(warehouse_path, env) == []  # sent once
        # ... and a night without a new event never opened the writer: the file and its read
        # snapshot are as they were (a writer's open alone changes the file, then it is
        # copied whole into a new snapshot).
        assert snapshot.current(warehouse_path) == published
        assert published.matches(warehouse_path)
    assert len(received) == 1
    assert received[0]["path"] == "/gpu-alerts"
    assert received[0]["json"]["title"] == "H100 below $2.20/GPU-h"
    assert "$1.99/GPU-h at lambda gpu_1x_h100_pcie" in received[0]["json"]["message"]
    # Without a rules file alerts are off, and a broken file never raises into a refresh.
    assert alerts_after_refresh(warehouse_path, {}) == []
    rules_file.write_text("[[rule]]\nkind = 'nope'\n", encoding="utf-8")
    assert alerts_after_refresh(warehouse_path, {"GPUPRICES_ALERTS": str(rules_file)}) == []


def test_config_errors_name_the_rule(tmp_path: Path) -> None:
    with pytest.raises(AlertConfigError, match="rule 'x' \\(price_drop\\) needs drop_pct"):
        parse_config({"rule": [{"name": "x", "kind": "price_drop", "gpu": "L4"}]}, {})
    with pytest.raises(AlertConfigError, match="unknown field"):
        parse_config({"rule": [{"name": "x", "kind": "source_stale", "source": "*",
                                "stale_hours": 1, "hours": 2}]}, {})
    example = Path(__file__).resolve().parents[2] / "alerts.toml"
    config = load_config(example, {"GPUPRICES_ALERT_URLS": "json://127.0.0.1:9/x, "})
    assert [r.kind for r in config.rules] == ["cheapest_below", "price_drop", "source_stale"]
    assert config.apprise_urls == ("json://127.0.0.1:9/x",)
