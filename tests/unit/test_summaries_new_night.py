"""The in-order path of the summaries (a night newer than any stored, computed from the batch
itself) stays equal to the plain queries when offerings come and go between nights and several
sources share the day's cheapest rows."""

from __future__ import annotations

import random
from datetime import timedelta

import duckdb

from tests.unit.test_perf_tables import (
    OFFERINGS,
    START,
    assert_views_match_plain,
    batch,
    con,  # noqa: F401  (fixture)
    land,
)


def test_offerings_come_and_go_between_nights(con: duckdb.DuckDBPyConnection) -> None:  # noqa: F811
    rng = random.Random(5)
    for night in range(8):
        at = START + timedelta(days=night)
        kept = [o for i, o in enumerate(OFFERINGS) if (i + night) % 3]  # a rotating subset
        capture = f"n{night:063d}"
        land(con, "alpha", batch("alpha", "alpha", at, capture, rng, offerings=kept), at,
             capture)
        other = f"b{night:063d}"
        land(con, "beta", batch("beta", "beta", at, other, rng), at, other)
        assert_views_match_plain(con)
    state = con.execute("SELECT count(*) FROM price_state WHERE source = 'alpha'").fetchone()
    assert state == (len(OFFERINGS) * 2,)  # every offering ever seen keeps its last price
    assert con.execute("SELECT count(*) FROM price_change WHERE previous_day < changed_on - 1"
                       ).fetchone()[0] > 0  # changes across an offering's gap

