"""A crafted warehouse file cannot make gpuprices read another file or change the warehouse.

Issue 22.1: a copy of a real warehouse with schema versions 5+ deleted, the summary tables
renamed back to their old names and `observation` replaced by a view reading a secret file.
Reads used to migrate it on a writable, unsandboxed connection and print the secret. Now a
read refuses an older schema with one line, a write refuses a file whose tables are views,
and no connection to a warehouse file can read another file. Each attack here is the test's
input; the secret is a FIFO that reports any open (tests/faults/hostile_files.py).
"""

from __future__ import annotations

import contextlib
import json
import os
import shutil
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

import duckdb
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from typer.testing import CliRunner

from gpuprices.cli import app
from tests.conftest import REPO
from tests.faults.hostile_files import (
    OLD_SUMMARY_NAMES,
    SECRET,
    Canary,
    canary,
    craft_issue_22_1,
    fingerprint,
)
from warehouse.connection import LATEST_SCHEMA_VERSION, WarehouseError, connect_read_only
from warehouse.snapshot import read_dir

runner = CliRunner()


@pytest.fixture
def secret(tmp_path: Path) -> Iterator[Canary]:
    with canary(tmp_path) as found:
        yield found


@pytest.fixture
def evil(night_copy: Path, secret: Canary) -> Path:
    craft_issue_22_1(night_copy, secret.path)
    return night_copy


def one_error_line(output: str) -> str:
    lines = [line for line in output.splitlines() if line.strip()]
    assert len(lines) == 1, output
    assert lines[0].startswith("error: "), output
    return lines[0]


def test_the_canary_sees_a_read(tmp_path: Path, secret: Canary) -> None:
    """The control: a connection with external access on does open the canary."""
    con = duckdb.connect()
    try:
        row = con.execute(f"SELECT content FROM read_text('{secret.path}')").fetchone()
    finally:
        con.close()
    assert row is not None and SECRET in row[0]
    assert secret.opened.wait(5)


READS = [
    ["query", "select distinct offering from daily_price"],
    ["query", "select offering from observation"],
    ["cheapest"],
    ["sources"],
    ["summary"],
    ["history", "H100"],
    ["export", "{out}"],
]


@pytest.mark.parametrize("args", READS, ids=lambda a: a[0])
def test_a_read_of_the_issue_22_1_file_refuses_and_changes_nothing(
        evil: Path, secret: Canary, tmp_path: Path, args: list[str]) -> None:
    before = fingerprint(evil)
    argv = [a.format(out=tmp_path / "out") for a in args]
    result = runner.invoke(app, [*argv, "-w", str(evil)])
    assert result.exit_code == 1, result.output
    line = one_error_line(result.output)
    assert "schema version 4" in line and "gpuprices migrate" in line, line
    assert SECRET not in result.output
    assert not secret.opened.is_set(), "the secret file was opened"
    assert fingerprint(evil) == before, "a read changed the warehouse or its folder"
    assert not (tmp_path / "out").exists()


@pytest.mark.parametrize("args", [["migrate"], ["refresh", "--offline", "-s", "vastai"],
                                  ["reparse"], ["alerts", "check"]], ids=lambda a: a[0])
def test_a_write_refuses_a_file_whose_tables_are_views(evil: Path, secret: Canary,
                                                       tmp_path: Path, args: list[str]) -> None:
    rules = tmp_path / "alerts.toml"
    rules.write_text('[[rule]]\nname = "x"\nkind = "cheapest_below"\ngpu = "H100"\n'
                     "below_usd_per_gpu_hour = 0.5\n")
    digest, _ = fingerprint(evil)
    extra = ["--rules", str(rules)] if args[0] == "alerts" else []
    result = runner.invoke(app, [*args, *extra, "-w", str(evil)])
    assert result.exit_code == 1, result.output
    assert "`observation` is a view" in result.output, result.output
    assert SECRET not in result.output
    assert not secret.opened.is_set(), "the secret file was opened"
    assert fingerprint(evil)[0] == digest, "the refused write changed the warehouse"
    assert not read_dir(evil).exists()


def test_the_same_attack_at_the_current_schema_version(night_copy: Path, secret: Canary) -> None:
    """Schema version kept: no migration to trick, the view is refused on reading."""
    con = duckdb.connect(str(night_copy))
    con.execute("ALTER TABLE observation RENAME TO observation_rows")
    con.execute("CREATE VIEW observation AS SELECT o.* REPLACE (s.content AS offering) "
                f"FROM observation_rows o, read_text('{secret.path}') s")
    con.close()
    before = fingerprint(night_copy)
    result = runner.invoke(app, ["query", "select offering from observation", "-w",
                                 str(night_copy)])
    assert "`observation` is a view" in one_error_line(result.output)
    assert not secret.opened.is_set()
    assert fingerprint(night_copy) == before


@pytest.mark.parametrize("macro", ["hash", "round", "max", "now", "lower"])
def test_a_macro_shadowing_a_duckdb_function_is_refused(night_copy: Path, secret: Canary,
                                                        macro: str) -> None:
    """File macros take precedence over DuckDB's own functions (`hash` is what the catalog
    sync computes): such a file is neither read nor written."""
    con = duckdb.connect(str(night_copy))
    con.execute(f"CREATE MACRO {macro}(x) AS (SELECT content FROM read_text('{secret.path}'))")
    con.close()
    before = fingerprint(night_copy)
    for args in (["query", f"select {macro}(1)"], ["cheapest"], ["migrate"]):
        result = runner.invoke(app, [*args, "-w", str(night_copy)])
        assert result.exit_code == 1, result.output
        line = one_error_line(result.output)
        assert "macros named like DuckDB's own functions" in line, line
        assert SECRET not in result.output
    assert not secret.opened.is_set()
    assert fingerprint(night_copy)[0] == before[0]


@pytest.mark.parametrize("view", ["latest_price", "latest_capture", "source_status"])
def test_a_view_of_ours_redefined_to_read_a_file_reads_nothing(night_copy: Path,
                                                               secret: Canary,
                                                               view: str) -> None:
    """Views are not tables, so the file opens; any read through the foreign view is refused
    by DuckDB (external access is off on every warehouse connection), in one line."""
    con = duckdb.connect(str(night_copy))
    con.execute(f"CREATE OR REPLACE VIEW {view} AS SELECT content AS provider "
                f"FROM read_text('{secret.path}')")
    con.close()
    before = fingerprint(night_copy)
    for args in (["query", f"select * from {view}"], ["cheapest"], ["sources"]):
        result = runner.invoke(app, [*args, "-w", str(night_copy), "-f", "csv"])
        assert SECRET not in result.output
        if result.exit_code:
            one_error_line(result.output)
    assert not secret.opened.is_set()
    assert fingerprint(night_copy) == before


@pytest.mark.parametrize("definition", [
    "CREATE OR REPLACE VIEW latest_price AS SELECT * FROM enable_logging(storage='file', "
    "storage_config={'path': '{log}'})",
    "CREATE OR REPLACE MACRO current_price_at(as_of) AS TABLE SELECT * FROM "
    "enable_logging(storage='file', storage_config={'path': '{log}'})",
    "CREATE VIEW extra AS SELECT * FROM enable_profiling()",
])
def test_a_view_or_macro_calling_enable_logging_cannot_abort_a_read(night_copy: Path,
                                                                     tmp_path: Path,
                                                                     definition: str) -> None:
    """Run through a view, enable_logging to a file aborted the process (SIGABRT) once the
    permission error came back; such a file is refused before any query. A real process:
    an abort would take pytest down with it."""
    log = tmp_path / "log"
    con = duckdb.connect(str(night_copy))
    con.execute(definition.replace("{log}", str(log)))
    con.close()
    before = fingerprint(night_copy)
    for args in (["query", "select * from latest_price"], ["cheapest"], ["migrate"]):
        done = subprocess.run([sys.executable, "-m", "gpuprices.cli", *args, "-w",
                               str(night_copy)], capture_output=True, text=True, cwd=REPO,
                              env={**os.environ, "PYTHONPATH": str(REPO)}, timeout=120)
        assert done.returncode == 1, (args, done.returncode, done.stderr[-500:])
        assert "calls " in one_error_line(done.stderr), done.stderr
    assert not log.exists()
    assert fingerprint(night_copy)[0] == before[0]


def test_migrate_upgrades_a_real_older_file_and_then_reads_work(night_copy: Path) -> None:
    """The refusal's advice works: a genuine older file (versions 5+ removed, old summary
    names back) is upgraded by `gpuprices migrate`, after which reads answer."""
    con = duckdb.connect(str(night_copy))
    con.execute("DELETE FROM schema_version WHERE version >= 5")
    con.execute("DROP VIEW daily_cheapest")  # a table before migration 8
    for new, old in OLD_SUMMARY_NAMES.items():
        con.execute(f"ALTER TABLE {new} RENAME TO {old}")
    con.close()
    refused = runner.invoke(app, ["query", "select 1", "-w", str(night_copy)])
    assert "gpuprices migrate" in one_error_line(refused.output)
    migrated = runner.invoke(app, ["migrate", "-w", str(night_copy)])
    assert migrated.exit_code == 0, migrated.output
    assert f"schema version {LATEST_SCHEMA_VERSION}" in migrated.output
    rows = runner.invoke(app, ["query", "select count(*) as n from daily_price", "-w",
                               str(night_copy), "-f", "csv"])
    assert rows.exit_code == 0, rows.output
    assert int(rows.output.splitlines()[-1]) > 0


# --- generated hostile files ------------------------------------------------------------

TABLES = ("observation", "scrape_run", "latest_observation", "daily_price", "schema_version",
          "gpu_catalog", "refresh_run")
VIEWS = ("latest_price", "latest_capture", "source_status", "daily_cheapest_view")
SHADOWED = ("hash", "round", "max", "count", "now", "coalesce", "lower", "sum")
TABLE_MACROS = ("current_price_at", "observations_at", "range")

mutation = st.one_of(
    st.tuples(st.just("version"), st.integers(0, LATEST_SCHEMA_VERSION + 1)),
    st.tuples(st.just("table_as_view"), st.sampled_from(TABLES)),
    st.tuples(st.just("view"), st.sampled_from(VIEWS)),
    st.tuples(st.just("macro"), st.sampled_from(SHADOWED)),
    st.tuples(st.just("table_macro"), st.sampled_from(TABLE_MACROS)),
    st.tuples(st.just("old_names"), st.just("")),
)


def _reads_secret(secret: Path) -> str:
    return f"(SELECT content FROM read_text('{secret}'))"


def mutate(path: Path, mutations: list[tuple[str, object]], secret: Path) -> None:
    con = duckdb.connect(str(path))
    reads = _reads_secret(secret)
    try:
        for kind, arg in mutations:
            try:
                if kind == "version":
                    con.execute("DELETE FROM schema_version WHERE version >= ?", [arg])
                    if arg == LATEST_SCHEMA_VERSION + 1:
                        con.execute("INSERT INTO schema_version VALUES (?, now(), 'x')", [arg])
                elif kind == "table_as_view":
                    con.execute(f"ALTER TABLE {arg} RENAME TO {arg}_rows")
                    con.execute(f"CREATE VIEW {arg} AS SELECT *, {reads} AS leak "
                                f"FROM {arg}_rows")
                elif kind == "view":
                    con.execute(f"CREATE OR REPLACE VIEW {arg} AS SELECT {reads} AS provider")
                elif kind == "macro":
                    con.execute(f"CREATE OR REPLACE MACRO {arg}(x) AS {reads}")
                elif kind == "table_macro":
                    con.execute(f"CREATE OR REPLACE MACRO {arg}(x) AS TABLE "
                                f"SELECT {reads} AS provider")
                else:
                    for new, old in (("daily_price", "daily_price_summary"),
                                     ("price_change", "price_change_event")):
                        con.execute(f"ALTER TABLE {new} RENAME TO {old}")
            except duckdb.Error:
                pass  # a mutation the file no longer allows (already renamed ...): skip it
        con.execute("CHECKPOINT")
    finally:
        con.close()


def read_everything(con: duckdb.DuckDBPyConnection) -> None:
    """Every table, view and table macro the file has, as a reader would touch them."""
    names = [str(r[0]) for r in con.execute(
        "SELECT table_name FROM information_schema.tables").fetchall()]
    statements = [f'SELECT * FROM "{name}" LIMIT 5' for name in names]
    statements += ["SELECT * FROM current_price_at(now())", "SELECT hash(1), round(1.5)",
                   "SELECT * FROM range(3)"]
    for sql in statements:
        with contextlib.suppress(duckdb.Error):
            con.execute(sql).fetchall()


@pytest.fixture(scope="module")
def base_warehouse(tmp_path_factory: pytest.TempPathFactory) -> Path:
    from contract.settings import Settings
    from flows.refresh import run_refresh

    path = tmp_path_factory.mktemp("base") / "w.duckdb"
    run_refresh(Settings(warehouse=path), source_names=["vastai", "lambda"], offline=True)
    shutil.rmtree(read_dir(path))
    return path


@pytest.mark.timeout(600)
@settings(max_examples=40, deadline=None,
          suppress_health_check=[HealthCheck.function_scoped_fixture,
                                 HealthCheck.too_slow])
@given(mutations=st.lists(mutation, min_size=1, max_size=4), sandboxed=st.booleans())
def test_hostile_files_opened_read_only_read_nothing_else_and_stay_unchanged(
        base_warehouse: Path, tmp_path_factory: pytest.TempPathFactory,
        mutations: list[tuple[str, object]], sandboxed: bool) -> None:
    folder = tmp_path_factory.mktemp("hostile")
    path = folder / "w.duckdb"
    shutil.copyfile(base_warehouse, path)
    with canary(folder) as secret:
        mutate(path, mutations, secret.path)
        before = fingerprint(path)
        try:
            con = connect_read_only(path, sandboxed=sandboxed)
        except WarehouseError as refused:
            assert SECRET not in str(refused)
        else:
            try:
                read_everything(con)
            finally:
                con.close()
        assert not secret.opened.is_set(), f"{mutations}: a file outside was opened"
        assert fingerprint(path) == before, f"{mutations}: the warehouse changed"


# --- sealed read snapshots (warehouse.snapshot): the catalog check once, at publish --------

@pytest.fixture
def catalog_checks(monkeypatch: pytest.MonkeyPatch) -> list[str]:
    """Every check_functions a read runs, by file name (the real check still runs)."""
    from warehouse import schema

    seen: list[str] = []
    real = schema.check_functions

    def counted(con: duckdb.DuckDBPyConnection) -> None:
        row = con.execute("SELECT path FROM duckdb_databases() WHERE NOT internal "
                          "AND database_name = current_database()").fetchone()
        seen.append(Path(str(row[0] if row else "")).name)
        real(con)

    monkeypatch.setattr(schema, "check_functions", counted)
    return seen


def _published(path: Path, checks: list[str]) -> Path:
    """Publish a read snapshot of `path` the way every write session does; its file. The
    writer checked the warehouse file itself on opening it: `checks` is reset after."""
    from warehouse.connection import open_warehouse
    from warehouse.snapshot import current

    with open_warehouse(path):
        pass
    assert checks == [path.name]
    checks.clear()
    published = current(path)
    assert published is not None and published.seal is not None
    return published.path


def _shadow(path: Path, secret: Path) -> None:
    """Change a published (read-only) generation in place: a macro named like `round`."""
    os.chmod(path, 0o644)
    con = duckdb.connect(str(path))
    con.execute(f"CREATE MACRO round(x) AS (SELECT content FROM read_text('{secret}'))")
    con.close()
    os.chmod(path, 0o444)


def test_a_sealed_snapshot_is_read_without_a_second_catalog_check(
        night_copy: Path, catalog_checks: list[str]) -> None:
    generation = _published(night_copy, catalog_checks)
    with connect_read_only(night_copy) as con:
        rows = con.execute("SELECT count(*) FROM latest_price").fetchone()
    assert rows and rows[0] > 0
    assert generation.name not in catalog_checks, catalog_checks
    result = runner.invoke(app, ["query", "select round(2.5)", "-w", str(night_copy)])
    assert result.exit_code == 0 and "3" in result.output, result.output
    assert catalog_checks == [], catalog_checks


def test_a_snapshot_changed_after_it_was_published_is_checked_and_refused(
        night_copy: Path, secret: Canary, catalog_checks: list[str]) -> None:
    generation = _published(night_copy, catalog_checks)
    _shadow(generation, secret.path)
    for args in (["query", "select round(1)"], ["cheapest"], ["sources"]):
        result = runner.invoke(app, [*args, "-w", str(night_copy)])
        assert result.exit_code == 1, result.output
        assert "macros named like DuckDB's own functions" in one_error_line(result.output)
    assert generation.name in catalog_checks
    assert not secret.opened.is_set()


def test_a_copied_warehouse_folder_is_checked_though_its_seals_came_along(
        night_copy: Path, tmp_path: Path, secret: Canary, catalog_checks: list[str]) -> None:
    """A folder shipped elsewhere (times kept) holds the identities of other inodes. Even
    with its snapshot's record rewritten to name the copied warehouse, and its seal taken
    just before the copy, the seal does not hold there: the snapshot made hostile before the
    copy is checked and refused."""
    from warehouse.snapshot import identity, seal_of

    generation = _published(night_copy, catalog_checks)
    _shadow(generation, secret.path)
    sidecar = generation.with_suffix(".json")
    record = json.loads(sidecar.read_text())
    record["seal"] = list(seal_of(generation))
    shipped = tmp_path / "shipped"
    shutil.copytree(night_copy.parent, shipped, symlinks=True)
    copied = shipped / night_copy.name
    record["source"] = list(identity(copied))
    copied_sidecar = shipped / generation.relative_to(night_copy.parent).with_suffix(".json")
    os.chmod(copied_sidecar, 0o644)
    copied_sidecar.write_text(json.dumps(record))
    result = runner.invoke(app, ["query", "select round(1)", "-w", str(copied)])
    assert result.exit_code == 1, result.output
    assert "macros named like DuckDB's own functions" in one_error_line(result.output)
    assert catalog_checks == [generation.name]
    assert not secret.opened.is_set()


@pytest.mark.parametrize("writable", ["folder", "record"])
def test_a_seal_others_could_have_written_is_not_believed(
        night_copy: Path, secret: Canary, catalog_checks: list[str], writable: str) -> None:
    """A read folder (or record) another user may write: whoever can write there could have
    put a hostile file in place and a seal that matches it, so every read checks it."""
    generation = _published(night_copy, catalog_checks)
    shared = generation.parent if writable == "folder" else generation.with_suffix(".json")
    os.chmod(shared, shared.stat().st_mode | 0o022)
    with connect_read_only(night_copy) as con:
        assert con.execute("SELECT count(*) FROM source").fetchone() != (0,)
    assert catalog_checks == [generation.name]
    _shadow(generation, secret.path)  # then a seal that matches the hostile file
    from warehouse.snapshot import seal_of

    record = generation.with_suffix(".json")
    forged = {**json.loads(record.read_text()), "seal": list(seal_of(generation))}
    record.write_text(json.dumps(forged))  # its mode kept: only `shared` is open to others
    result = runner.invoke(app, ["query", "select round(1)", "-w", str(night_copy)])
    assert result.exit_code == 1, result.output
    assert "macros named like DuckDB's own functions" in one_error_line(result.output)
    assert not secret.opened.is_set()


def test_a_snapshot_without_a_seal_is_checked(night_copy: Path,
                                              catalog_checks: list[str]) -> None:
    """Published by a gpuprices before seals: read as before, with the catalog check."""
    generation = _published(night_copy, catalog_checks)
    sidecar = generation.with_suffix(".json")
    record = json.loads(sidecar.read_text())
    del record["seal"]
    sidecar.write_text(json.dumps(record))
    with connect_read_only(night_copy) as con:
        assert con.execute("SELECT count(*) FROM source").fetchone() != (0,)
    assert catalog_checks == [generation.name]
