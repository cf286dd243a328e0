"""API keys travel in request headers and nowhere else: not in logs, the raw archive, the
warehouse, Prefect artifacts or error messages. Also proves the real Prefect flow's wiring
against the fault server (one run, a failing source named in its final state's message)."""

from __future__ import annotations

import gzip
import json
import logging
import uuid
from pathlib import Path

import duckdb
import pytest

from flows.refresh import run_refresh
from scrapers.registry import all_sources
from tests.faults.conftest import dummy_secrets, ecb_rates_today, fault_settings
from tests.faults.server import FaultServer

KEYED = {name: s.secret_names for name, s in all_sources().items() if s.secret_names}


def unique_token() -> str:
    return f"sk-test-{uuid.uuid4().hex}"


def warehouse_text(path: Path) -> str:
    """Every row of every table, as text."""
    con = duckdb.connect(str(path), read_only=True)
    try:
        tables = [r[0] for r in con.execute(
            "SELECT table_name FROM information_schema.tables WHERE table_type = 'BASE TABLE'"
        ).fetchall()]
        return "\n".join(repr(con.execute(f'SELECT * FROM "{t}"').fetchall()) for t in tables)
    finally:
        con.close()


def archive_text(root: Path) -> str:
    parts = []
    for file in sorted(root.rglob("*")):
        if file.is_file():
            data = file.read_bytes()
            parts.append((gzip.decompress(data) if file.suffix == ".gz" else data)
                         .decode("utf-8", errors="replace"))
            parts.append(file.name)
    return "\n".join(parts)


def assert_key_sent(server: FaultServer, secrets: dict[str, str]) -> None:
    """Each keyed source sent its key in a header, and never in the URL."""
    for source, names in KEYED.items():
        seen = server.requests_of(source)
        assert seen, f"{source} made no request"
        for name in names:
            key = secrets[name]
            assert any(key in value for s in seen for value in s.headers.values()), \
                f"{source} did not send {name} in a header"
            assert not any(key in s.path for s in seen), f"{source} put {name} in the URL"


@pytest.mark.timeout(180)
def test_keys_are_sent_in_headers_and_stored_nowhere(
    server: FaultServer, tmp_path: Path, caplog: pytest.LogCaptureFixture,
    capfd: pytest.CaptureFixture[str],
) -> None:
    token = unique_token()
    secrets = dummy_secrets(token)
    sources = all_sources()
    warehouse = tmp_path / "wh" / "gpu_prices.duckdb"
    errors: list[str] = []
    caplog.set_level(logging.DEBUG)
    # A healthy night, then one where every source fails (errors carry URLs and reasons).
    for fault in ("healthy", "http500", "garbage"):
        server.reset()
        for source in sources.values():
            server.plan(source, fault)
        server.plan(ecb_rates_today(tmp_path), "healthy")  # euro prices need today's rate
        settings = fault_settings(server, warehouse, secrets=secrets, retries=1)
        outcomes = run_refresh(settings)
        errors += [f"{o.error} {o.url}" for o in outcomes]
        assert_key_sent(server, secrets)
        assert (fault == "healthy") == all(o.ok for o in outcomes), outcomes
    out, err = capfd.readouterr()
    places = {
        "logs": caplog.text, "stdout/stderr": out + err, "error messages": "\n".join(errors),
        "warehouse": warehouse_text(warehouse), "raw archive": archive_text(tmp_path / "wh"),
    }
    assert places["warehouse"] and places["raw archive"]
    for place, text in places.items():
        assert token not in text, f"an API key leaked into the {place}"


@pytest.mark.timeout(300)
def test_prefect_flow_wiring_artifacts_and_no_keys(
    prefect_harness: None, server: FaultServer, tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch, capfd: pytest.CaptureFixture[str],
    caplog: pytest.LogCaptureFixture,
) -> None:
    """The real `refresh` flow over the fault server: the failing source is named in the
    flow's final state, the others land, and no key reaches the logs or the artifact."""
    from prefect.client.orchestration import get_client

    from flows.refresh import refresh

    token = unique_token()
    secrets = dummy_secrets(token)
    sources = all_sources()
    failing = "vastai"
    for source in sources.values():
        server.plan(source, "http503" if source.name == failing else "healthy")
    server.plan(ecb_rates_today(tmp_path), "healthy")  # euro prices need today's rate
    for name in [*sources, "ecb"]:
        monkeypatch.setenv(f"GPUPRICES_BASE_URL_{name.upper()}", server.url(name))
    for name, value in secrets.items():
        monkeypatch.setenv(name, value)
    monkeypatch.setenv("GPUPRICES_TIMEOUT_S", "2")
    monkeypatch.setenv("GPUPRICES_RETRIES", "2")
    monkeypatch.setenv("GPUPRICES_BACKOFF_S", "0.01")
    warehouse = tmp_path / "wh" / "gpu_prices.duckdb"
    caplog.set_level(logging.INFO)

    state = refresh(warehouse=str(warehouse), return_state=True)

    assert state.is_completed()  # the flow's rule: Completed while some sources landed
    assert state.message and failing in state.message and "1 of" in state.message
    assert_key_sent(server, {n: v for n, v in secrets.items()})
    con = duckdb.connect(str(warehouse), read_only=True)
    try:
        statuses = dict(con.execute("SELECT source, status FROM scrape_run").fetchall())
        run = con.execute("SELECT status, note FROM refresh_run").fetchall()
    finally:
        con.close()
    assert statuses.pop(failing) == "failed"
    assert set(statuses.values()) == {"success"}, statuses
    assert run == [("partial", f"failed: {failing}")]

    with get_client(sync_client=True) as client:
        artifacts = client.read_artifacts()
    summary = [a for a in artifacts if a.key == "refresh-summary"]
    assert summary, "the run summary is published as a table artifact"
    artifact_text = json.dumps([a.model_dump(mode="json") for a in artifacts])
    assert failing in artifact_text and "HTTP 503" in artifact_text
    out, err = capfd.readouterr()
    for place, text in {"Prefect artifacts": artifact_text, "logs": caplog.text + out + err,
                        "flow state": repr(state), "warehouse": warehouse_text(warehouse),
                        "raw archive": archive_text(warehouse.parent)}.items():
        assert token not in text, f"an API key leaked into the {place}"
