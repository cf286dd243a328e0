"""refresh_days recomputes a few days with each day's offers in a temporary table, and many
days (a rebuild) with the offers in each statement: both ways give the same tables."""

from __future__ import annotations

import random
from datetime import timedelta

import duckdb
import pytest

from tests.unit.test_perf_tables import START, batch, con, land, table  # noqa: F401 (fixture)
from warehouse import semantic_daily
from warehouse.semantic_daily import DERIVED_TABLES, refresh_days
from warehouse.transaction import transaction


def _recomputed(warehouse: duckdb.DuckDBPyConnection) -> dict[str, object]:
    with transaction(warehouse):
        days = refresh_days(warehouse, None)
    assert len(days) > 12
    return {name: table(warehouse, name) for name in DERIVED_TABLES}


def test_the_day_tables_are_the_same_either_way(con: duckdb.DuckDBPyConnection,  # noqa: F811
                                                monkeypatch: pytest.MonkeyPatch) -> None:
    rng = random.Random(3)
    for night in range(14):
        at = START + timedelta(days=night)
        land(con, "alpha", batch("alpha", "alpha", at, f"a{night:063d}", rng), at,
             f"a{night:063d}")
        if night % 4:
            land(con, "beta", batch("beta", "beta", at, f"b{night:063d}", rng), at,
                 f"b{night:063d}")
    monkeypatch.setattr(semantic_daily, "TEMP_TABLE_DAYS", 10_000)
    in_tables = _recomputed(con)
    monkeypatch.setattr(semantic_daily, "TEMP_TABLE_DAYS", 0)
    in_statements = _recomputed(con)
    assert con.execute("SELECT count(*) FROM duckdb_tables() WHERE table_name = '_day_offers'"
                       ).fetchone() == (0,)
    for name in DERIVED_TABLES:
        assert in_tables[name].height > 0, name
        assert in_statements[name].equals(in_tables[name]), name
