"""gpuprices.output: every format prints every frame the commands produce, lists included."""

from __future__ import annotations

import json

import polars as pl
import pytest

from gpuprices.output import Format, print_frame

FRAME = pl.DataFrame({"source": ["a", "b"], "unknown_gpus": [["X1", "Y2"], []],
                      "price": [1.5, None]})


def test_csv_flattens_list_columns(capsys: pytest.CaptureFixture[str]) -> None:
    print_frame(FRAME, Format.csv)
    assert capsys.readouterr().out.splitlines() == [
        "source,unknown_gpus,price", 'a,"X1, Y2",1.5', 'b,"",']


def test_json_keeps_lists(capsys: pytest.CaptureFixture[str]) -> None:
    print_frame(FRAME, Format.json)
    assert json.loads(capsys.readouterr().out)[0]["unknown_gpus"] == ["X1", "Y2"]


def test_table_shows_every_value(capsys: pytest.CaptureFixture[str]) -> None:
    print_frame(FRAME, Format.table, title="t")
    out = capsys.readouterr().out
    assert "X1, Y2" in out and "1.5" in out


def _tables() -> list[tuple[pl.DataFrame, str | None, int | None, int, bool]]:
    """Frames of every shape a command prints, with a title or not, cut or not (a narrow
    terminal), rows left out or not, --wide or not."""
    import random

    rng = random.Random(23)
    words = ["H100", "a100 80GB", "lambda", "us-east-1", "on_demand", "", "x" * 40,
             "community spot", "[link=x]y[/link]", "2 unknown GPU, 1 CPU-only machine"]
    tables = []
    for case in range(60):
        n_cols, n_rows = rng.randint(1, 7), rng.choice([0, 1, 3, 12])
        columns = {}
        for c in range(n_cols):
            name = rng.choice(["gpu", "provider", "usd_per_gpu_hour", "region", "offers",
                               "a much longer column name"]) + f"_{c}"
            if rng.random() < 0.4:
                columns[name] = [rng.choice([None, 0.5, 12.25, 1234.5, 3.0])
                                 for _ in range(n_rows)]
            elif rng.random() < 0.3:
                columns[name] = [rng.randint(-5, 100000) for _ in range(n_rows)]
            else:
                columns[name] = [rng.choice(words) for _ in range(n_rows)]
        title = rng.choice([None, "t", "cheapest comparable offer per GPU tier", "y" * 90])
        tables.append((pl.DataFrame(columns), title, rng.choice([None, 2, 50]),
                       rng.choice([200, 100, 60, 30, 12]), case % 5 == 0))
    return tables


@pytest.mark.parametrize(("frame", "title", "max_rows", "width", "wide"), _tables())
def test_the_plain_table_is_richs_table(frame: pl.DataFrame, title: str | None,
                                        max_rows: int | None, width: int, wide: bool,
                                        capsys: pytest.CaptureFixture[str],
                                        monkeypatch: pytest.MonkeyPatch) -> None:
    """A table written without rich (stdout no terminal, ASCII) is the one rich draws."""
    from gpuprices import output

    monkeypatch.setenv("COLUMNS", str(width))
    for name in output._RICH_STYLING:
        monkeypatch.delenv(name, raising=False)
    output.set_wide(wide)
    try:
        print_frame(frame, Format.table, title=title, max_rows=max_rows)
        plain = capsys.readouterr().out
        monkeypatch.setattr(output, "_plain", lambda *_: False)
        print_frame(frame, Format.table, title=title, max_rows=max_rows)
        drawn = capsys.readouterr().out
    finally:
        output.set_wide(False)
    assert plain == drawn


def test_many_of_those_tables_are_written_without_rich(
        capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch) -> None:
    """The comparison above compares something: the plain way takes a third of its tables
    or more (the others: a title or a note wider than the table, a terminal too narrow)."""
    from gpuprices import output

    taken: list[bool] = []
    real = output._plain
    monkeypatch.setattr(output, "_plain", lambda *a: taken.append(real(*a)) or taken[-1])
    for name in output._RICH_STYLING:
        monkeypatch.delenv(name, raising=False)
    for frame, title, max_rows, width, _ in _tables():
        monkeypatch.setenv("COLUMNS", str(width))
        print_frame(frame, Format.table, title=title, max_rows=max_rows)
    capsys.readouterr()
    assert sum(taken) >= len(taken) // 3, f"{sum(taken)} of {len(taken)}"


# Every kind warehouse.frames.relation_rows passes on, with NULLs, negatives, a fall-back
# hour (01:30 twice in New York on 2026-11-01), a HUGEINT past 64 bits and lists of text
# (NULL, empty, a NULL item).
_PLAIN_SQL = (
    "SELECT i, i * 1.5::DOUBLE AS usd, 'gpu ' || i AS name, i % 2 = 0 AS even, "
    "DATE '2026-11-26' + i::INTEGER AS day, TIMESTAMP '2026-11-26 10:57:14.5' AS at, "
    "NULL::VARCHAR AS nothing, (i * 7)::TINYINT AS small, 1.5::FLOAT AS f, "
    "TIMESTAMPTZ '2026-11-01 05:10:59.5+00' + i * INTERVAL 30 MINUTE AS seen, "
    "CASE WHEN i > 0 THEN (i - 2.25)::DECIMAL(10, 3) END AS usd_exact, "
    "(i * 1.5)::DECIMAL(18, 0) AS whole, (i - 2)::HUGEINT * 10000000000000000000000 AS huge, "
    "(i % 3)::VARCHAR::ENUM('0', '1', '2') AS grade, TIME '10:11:12.5' AS clock, "
    "(TIMESTAMP '2026-01-01' + i * INTERVAL 1 SECOND)::TIMESTAMP_S AS at_s, "
    "TIMESTAMP '2026-01-01 00:00:00.123'::TIMESTAMP_MS AS at_ms, "
    "'0c56a6cf-d0a1-4d3e-9f0a-6c8e5a8e0b1' || i::VARCHAR AS id_text, "
    "('0c56a6cf-d0a1-4d3e-9f0a-6c8e5a8e0b1' || i::VARCHAR)::UUID AS id, "
    "CASE WHEN i = 1 THEN NULL WHEN i = 2 THEN []::VARCHAR[] "
    "ELSE ['lambda', 'a, b', NULL, 'x' || i] END AS carried "
    "FROM range(5) t(i)")


@pytest.mark.parametrize("zone", ["UTC", "America/New_York"])
def test_duckdbs_rows_print_as_their_frame(capsys: pytest.CaptureFixture[str],
                                           zone: str) -> None:
    """A query's plain columns print the same from DuckDB's rows as from a polars frame, in
    the session's time zone; a column of another type (a list here) is left to polars."""
    import duckdb

    from warehouse.frames import relation_frame, relation_rows

    con = duckdb.connect()
    con.execute(f"SET TimeZone = '{zone}'")
    rows = relation_rows(con.sql(_PLAIN_SQL))
    assert rows is not None and rows.height == 5
    assert [rows.numeric[rows.columns.index(c)] for c in ("usd_exact", "huge", "seen")] == [
        True, True, False]
    print_frame(rows, Format.table, title="rows", max_rows=4)
    from_rows = capsys.readouterr().out
    print_frame(relation_frame(con.sql(_PLAIN_SQL)), Format.table, title="rows", max_rows=4)
    assert from_rows == capsys.readouterr().out
    # the fall-back hour: the same wall time twice, an hour apart in UTC
    seen = [row[rows.columns.index("seen")] for row in rows.rows]
    if zone == "America/New_York":
        assert [f"{t:%H:%M}" for t in seen[:3]] == ["01:10", "01:40", "01:10"]
    assert relation_rows(con.sql("SELECT [1, 2] AS l")) is None  # a list of numbers
    assert relation_rows(con.sql("SELECT [[1]]::VARCHAR[][] AS l")) is None
    assert relation_rows(con.sql("SELECT 1 AS a, 2 AS a")) is None
