"""The CLI cannot write through `query`, hostile option values stay values (bound parameters),
and raw-archive file names come from hashes, never from provider data."""

from __future__ import annotations

import re
from datetime import UTC, datetime
from pathlib import Path

import duckdb
import pytest
from typer.testing import CliRunner

from contract import RawCapture
from gpuprices.cli import app
from warehouse.archive import archive, archive_path, read_archived

HOSTILE = [
    "'; DROP TABLE observation; --",
    "x' OR '1'='1",
    'x") OR 1=1 --',
    "H100'); DELETE FROM observation WHERE ('1'='1",
    "%' UNION SELECT * FROM observation --",
]
WRITES = [
    "DELETE FROM observation",
    "UPDATE observation SET price_usd_per_hour = 0.01",
    "INSERT INTO source VALUES ('x', 'x', 'api', 'x', false)",
    "DROP TABLE observation",
    "CREATE TABLE stolen AS SELECT * FROM observation",
    "SELECT 1; DROP TABLE observation",
]
runner = CliRunner()


def fingerprint(path: Path) -> tuple[object, ...]:
    con = duckdb.connect(str(path), read_only=True)
    try:
        tables = sorted(r[0] for r in con.execute(
            "SELECT table_name FROM information_schema.tables").fetchall())
        rows = con.execute("SELECT count(*), sum(price_usd_per_hour) FROM observation").fetchone()
        return (*tables, rows)
    finally:
        con.close()


@pytest.fixture
def warehouse(night_copy: Path) -> Path:
    return night_copy


@pytest.mark.parametrize("statement", WRITES)
def test_query_refuses_every_write(warehouse: Path, statement: str) -> None:
    before = fingerprint(warehouse)
    result = runner.invoke(app, ["query", statement, "-w", str(warehouse)])
    assert result.exit_code != 0, result.output
    assert "read-only" in result.output.lower() or "read only" in result.output.lower(), \
        result.output
    assert fingerprint(warehouse) == before


def test_query_reads(warehouse: Path) -> None:
    result = runner.invoke(app, ["query", "SELECT count(*) AS n FROM observation", "-w",
                                 str(warehouse), "-f", "csv"])
    assert result.exit_code == 0, result.output
    assert int(result.output.strip().splitlines()[-1]) > 0


def commands(value: str, warehouse: Path) -> list[list[str]]:
    w = ["-w", str(warehouse), "-f", "csv"]
    return [
        ["cheapest", "--provider", value, *w],
        ["cheapest", "--gpu", value, *w],
        ["cheapest", "--pricing", value, *w],
        ["cheapest", "--tier", value, *w],
        ["history", value, *w],
        ["history", "H100", "--provider", value, *w],
        ["scenario", "--gpu-hours", "10", "--gpu", value, *w],
        ["fit", "--params", value, *w],
        ["fit", "--params", "7B", "--method", value, *w],
    ]


@pytest.mark.parametrize("value", HOSTILE)
def test_hostile_option_values_are_bound_not_spliced(warehouse: Path, value: str) -> None:
    before = fingerprint(warehouse)
    for args in commands(value, warehouse):
        result = runner.invoke(app, args)
        shown = f"{args[0]} {args[1]}: {result.output}"
        # A clean answer or a clean refusal; never a crash, never SQL parsed from the value.
        assert result.exception is None or isinstance(result.exception, SystemExit), shown
        assert "Parser Error" not in result.output and "syntax error" not in result.output, shown
        if result.exit_code == 0 and "--provider" in args:
            # A provider filter of "x' OR '1'='1" matches no provider: no rows come back.
            assert not re.search(r"\b(vastai|lambda|aws|azure|runpod)\b", result.output), shown
    assert fingerprint(warehouse) == before


def test_provider_filter_still_works(warehouse: Path) -> None:
    """The control for the test above: a real provider value does return its rows (the seed
    is 72 h old: stale now, so its day's history, not `cheapest`, still shows it)."""
    con = duckdb.connect(str(warehouse), read_only=True)
    try:
        row = con.execute("SELECT provider, gpu_model FROM daily_cheapest WHERE gpu_model "
                          "<> 'unknown' LIMIT 1").fetchone()
    finally:
        con.close()
    assert row
    result = runner.invoke(app, ["history", str(row[1]), "--provider", str(row[0]), "-w",
                                 str(warehouse), "-f", "csv"])
    assert result.exit_code == 0, result.output
    assert str(row[0]) in result.output


@pytest.mark.parametrize("source,url", [
    ("../../../../tmp/evil", "https://example.com/../../etc/passwd"),
    ("/etc/cron.d/x", "file:///etc/shadow"),
    ("a\x00b", "http://x/%2e%2e/%2e%2e/"),
    ("名前\u202e", "https://例え.jp/価格"),
])
def test_archive_names_come_from_hashes(tmp_path: Path, source: str, url: str) -> None:
    root = tmp_path / "raw"
    body = f"payload from {source} {url}".encode()
    raw = RawCapture(source=source, url=url, fetched_at=datetime.now(UTC), body=body)
    relative = archive(raw, root)
    assert re.fullmatch(r"[0-9a-f]{2}/[0-9a-f]{64}\.gz", relative.as_posix())
    assert relative.name == f"{raw.capture_id}.gz"
    written = [p for p in tmp_path.rglob("*") if p.is_file()]
    assert written == [root / relative], "nothing is written anywhere else"
    assert read_archived(root, relative) == body
    for bad in ("../" + "a" * 61, source, "A" * 64):
        with pytest.raises(ValueError, match="sha256"):
            archive_path(bad)
