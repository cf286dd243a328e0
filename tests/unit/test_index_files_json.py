"""reports.index.files writes a month's fixings as JSON with its dates and times formatted by
polars, column by column: each value must read exactly as the value-by-value conversion
(`_json_value`: datetime.isoformat() in UTC, date.isoformat()) wrote it before."""

from __future__ import annotations

import json
from datetime import UTC, date, datetime, timedelta, timezone

import polars as pl

from reports.index.files import _json_rows, _json_value


def _by_value(frame: pl.DataFrame) -> list[dict[str, object]]:
    return [{k: _json_value(v) for k, v in row.items()} for row in frame.iter_rows(named=True)]


def test_dates_and_times_read_as_isoformat_does() -> None:
    east = timezone(timedelta(hours=5, minutes=30))
    frame = pl.DataFrame({
        "fixing_id": ["a", "b", "c", "d"],
        "day": [date(2026, 11, 1), date(2026, 2, 28), None, date(1999, 12, 31)],
        # no fraction, a fraction, one microsecond, null
        "as_of": [datetime(2026, 11, 1, 23, 59, 59, tzinfo=UTC),
                  datetime(2026, 11, 1, 23, 59, 59, 999999, tzinfo=UTC),
                  datetime(2026, 1, 1, 0, 0, 0, 1, tzinfo=UTC), None],
        # another zone: written in UTC
        "published_at": [datetime(2026, 11, 2, 1, 0, tzinfo=east)] * 4,
        "value": [1.25, None, 0.1, 3.0],
        "panel": [3, 0, None, 12],
    }, schema_overrides={"published_at": pl.Datetime("us", "Asia/Kolkata")})
    rows = _json_rows(frame)
    assert rows == _by_value(frame)
    assert rows[0]["as_of"] == "2026-11-01T23:59:59+00:00"
    assert rows[1]["as_of"] == "2026-11-01T23:59:59.999999+00:00"
    assert rows[0]["published_at"] == "2026-11-01T19:30:00+00:00"
    assert json.dumps(rows, sort_keys=True) == json.dumps(_by_value(frame), sort_keys=True)


def test_other_temporal_columns_keep_the_value_by_value_path() -> None:
    naive = pl.DataFrame({"at": [datetime(2026, 11, 1, 12, 0)], "n": [1]})
    assert _json_rows(naive) == _by_value(naive)


def test_an_empty_month_has_no_rows() -> None:
    empty = pl.DataFrame(schema={"day": pl.Date, "as_of": pl.Datetime("us", "UTC")})
    assert _json_rows(empty) == []
