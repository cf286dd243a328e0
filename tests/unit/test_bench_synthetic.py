"""The benchmark's bulk load (bench/synthetic.py) builds the day tables a year per transaction:
they must equal what one rebuild of everything gives, across the year boundary."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta

from bench.synthetic import generate, last_night
from tests.unit.test_perf_tables import assert_summaries_equal_a_rebuild
from warehouse.connection import connect


def test_a_history_loaded_a_year_at_a_time_equals_one_rebuild() -> None:
    con = connect(":memory:")
    rows = generate(con, offerings=20, days=370, chunk_days=100)
    assert rows > 6_000
    # the history ends tonight, so that commands asked now find fresh prices
    assert last_night(con).date() == datetime.now(UTC).date()
    first_market_day, last_market_day = con.execute(
        "SELECT min(day), max(day) FROM market_price").fetchone() or (None, None)
    assert first_market_day is not None and last_market_day is not None
    assert last_market_day - first_market_day > timedelta(days=365)
    assert_summaries_equal_a_rebuild(con)
