"""THE CURRENT PRICE's rule (warehouse/views.sql, current_price_at) against a reading of its
comment in Python, over generated rows in force: an announced price replaces its offering's
other rows, aggregators fill in only for providers without a direct source, and one source
speaks per provider x GPU x pricing (source_rank, then name). The macro is the file's own
text, run over a stand-in for observations_at, so a rewrite for speed (issue 23) cannot
change which rows it keeps."""

from __future__ import annotations

import re
from collections.abc import Iterator
from datetime import date
from typing import Any

import duckdb
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from warehouse.connection import VIEWS_SQL

# source -> (aggregator, kind)
SOURCES = {"api": (False, "api"), "page": (False, "page"), "list": (False, "catalog"),
           "agg": (True, "catalog"), "agg2": (True, "api")}
KEY = ("source", "provider", "offering", "region", "pricing", "gpu_count", "gpu_only",
       "term_months")
COLUMNS = (*KEY, "gpu_model", "effective_from", "price")


def _macro(text: str, name: str) -> str:
    found = re.search(rf"CREATE OR REPLACE MACRO {name}\(.*?;\n", text, re.S)
    assert found, name
    return found.group(0)


def _connection() -> duckdb.DuckDBPyConnection:
    text = VIEWS_SQL.read_text(encoding="utf-8")
    con = duckdb.connect()
    con.execute("CREATE TABLE rows_in_force (source VARCHAR, provider VARCHAR, offering VARCHAR, "
                "region VARCHAR, pricing VARCHAR, gpu_count INTEGER, gpu_only BOOLEAN, "
                "term_months INTEGER, gpu_model VARCHAR, effective_from DATE, price DOUBLE, "
                "aggregator BOOLEAN, source_kind VARCHAR)")
    con.execute("CREATE MACRO observations_at(as_of) AS TABLE SELECT * FROM rows_in_force")
    con.execute(_macro(text, "source_rank"))
    con.execute(_macro(text, "current_price_at"))
    return con


def _rank(source: str) -> tuple[int, str]:
    aggregator, kind = SOURCES[source]
    return ((10 if aggregator else 0)
            + {"api": 0, "page": 1, "catalog": 2}.get(kind, 3), source)


def expected(rows: list[dict[str, Any]]) -> list[tuple[Any, ...]]:
    """The rule as views.sql's comment states it, step by step."""
    latest: dict[tuple[Any, ...], date] = {}
    for row in rows:
        if row["effective_from"] is not None:
            key = tuple(row[k] for k in KEY)
            latest[key] = max(latest.get(key, row["effective_from"]), row["effective_from"])
    seen = [r for r in rows if tuple(r[k] for k in KEY) not in latest
            or r["effective_from"] == latest[tuple(r[k] for k in KEY)]]
    direct = {r["provider"] for r in seen if not SOURCES[r["source"]][0]}
    kept = [r for r in seen if not SOURCES[r["source"]][0] or r["provider"] not in direct]
    best: dict[tuple[str, str, str], tuple[int, str]] = {}
    for r in kept:
        group = (r["provider"], r["gpu_model"], r["pricing"])
        best[group] = min(best.get(group, _rank(r["source"])), _rank(r["source"]))
    return sorted((tuple(r[c] for c in COLUMNS) for r in kept
                   if best[(r["provider"], r["gpu_model"], r["pricing"])][1] == r["source"]),
                  key=repr)


# A small key space, mostly one value per key column, so that rows meet: the same offering
# announced and not, two sources of one provider, an aggregator beside a direct source.
row = st.fixed_dictionaries({
    "source": st.sampled_from(sorted(SOURCES)),
    "provider": st.sampled_from(["p", "q"]),
    "offering": st.sampled_from(["o1", "o2"]),
    "region": st.sampled_from(["global", "global", "global", "eu"]),
    "pricing": st.sampled_from(["on_demand", "on_demand", "spot"]),
    "gpu_count": st.sampled_from([1, 1, 1, 8]),
    "gpu_only": st.sampled_from([False, False, False, True]),
    "term_months": st.sampled_from([None, None, None, 12]),
    "gpu_model": st.sampled_from(["H100", "A100"]),
    "effective_from": st.sampled_from([None, date(2026, 1, 1), date(2026, 2, 1)]),
    "price": st.floats(0.1, 10, allow_nan=False),
})


@pytest.fixture(scope="module")
def con() -> Iterator[duckdb.DuckDBPyConnection]:
    connection = _connection()
    yield connection
    connection.close()


@settings(max_examples=200, deadline=None)
@given(rows=st.lists(row, max_size=30))
def test_current_price_at_keeps_the_rows_its_rule_names(con: duckdb.DuckDBPyConnection,
                                                        rows: list[dict[str, Any]]) -> None:
    con.execute("DELETE FROM rows_in_force")
    if rows:
        con.executemany(
            "INSERT INTO rows_in_force VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)",
            [[*(r[c] for c in COLUMNS), *SOURCES[r["source"]]] for r in rows])
    got = con.execute(f"SELECT {', '.join(COLUMNS)} FROM current_price_at(now())").fetchall()
    assert sorted(got, key=repr) == expected(rows)


def test_the_rule_is_exercised_by_a_known_case() -> None:
    """The reference itself on one hand-made case: an announced price replaces the page's
    old row; the API outranks the page; the aggregator fills in for provider q only."""
    base = {"region": "global", "gpu_count": 1, "gpu_only": False, "term_months": None,
            "gpu_model": "H100", "pricing": "on_demand", "offering": "o1"}
    rows = [
        {**base, "source": "page", "provider": "p", "effective_from": None, "price": 3.0},
        {**base, "source": "page", "provider": "p", "effective_from": date(2026, 1, 1),
         "price": 2.5},
        {**base, "source": "api", "provider": "p", "offering": "o2", "effective_from": None,
         "price": 2.9},
        {**base, "source": "agg", "provider": "p", "effective_from": None, "price": 1.0},
        {**base, "source": "agg", "provider": "q", "effective_from": None, "price": 1.5},
    ]
    assert [(r[0], r[1], r[-1]) for r in expected(rows)] == [("agg", "q", 1.5),
                                                             ("api", "p", 2.9)]
    without_api = [r for r in rows if r["source"] != "api"]
    assert [(r[0], r[-1]) for r in expected(without_api)] == [("agg", 1.5), ("page", 2.5)]
