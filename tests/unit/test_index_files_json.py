"""reports.index.files writes a month's fixings as JSON with its dates and times formatted by
polars, column by column: each value must read exactly as the value-by-value conversion
(`_json_value`: datetime.isoformat() in UTC, date.isoformat()) wrote it before; and the
document is written by polars only when its bytes are those json.dumps wrote."""

from __future__ import annotations

import json
from datetime import UTC, date, datetime, timedelta, timezone

import polars as pl
import pytest

from reports.index.files import (
    _dates_as_text,
    _json_rows,
    _json_value,
    _month_json,
    _polars_writes_as_json_dumps,
)


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


def _dumped(month: str, frame: pl.DataFrame) -> bytes:
    """The month's document as json.dumps wrote it before polars did."""
    return json.dumps({"month": month, "fixings": _json_rows(frame)}, sort_keys=True,
                      separators=(",", ":")).encode()


def _month_frame(**columns: list[object]) -> pl.DataFrame:
    base: dict[str, list[object]] = {
        "fixing_id": ["f1", "f2", "f3"],
        "day": [date(2026, 11, 1), date(2026, 11, 2), None],
        "value": [2.3456789, None, 0.0001],
        "band_low": [1.0, None, 12345.678],
        "panel": [7, 0, None],
        "withheld_reason": [None, "thin panel: 2 providers (< 3)", "a \"quoted\" \\ reason"],
        "passing": [True, False, None],
        "published_at": [datetime(2026, 11, 2, 6, 0, 0, 250000, tzinfo=UTC), None,
                         datetime(2026, 11, 3, tzinfo=UTC)],
    }
    return pl.DataFrame({**base, **columns}, schema_overrides={"panel": pl.Int32})


def test_polars_writes_the_month_as_json_dumps_did() -> None:
    frame = _month_frame()
    assert _polars_writes_as_json_dumps(_dates_as_text(frame)[0])  # the fast path is taken
    assert _month_json("2026-11", frame) == _dumped("2026-11", frame)
    empty = frame.clear()
    assert _month_json("2026-11", empty) == _dumped("2026-11", empty)


@pytest.mark.parametrize("columns", [
    {"value": [1e-05, 1.5e-07, 2.0]},  # json.dumps: 1e-05, polars: 0.00001
    {"value": [float("nan"), 1.0, float("inf")]},  # json.dumps: NaN, polars: null
    {"withheld_reason": ["panel \u2265 3", None, "caf\u00e9"]},  # json.dumps escapes them
    {"withheld_reason": ["\x7f", None, None]},
    {"band_low": pl.Series([0.1, None, 2.5], dtype=pl.Float32)},  # 0.10000000149011612
], ids=["tiny floats", "not finite", "not ascii", "delete", "float32"])
def test_values_polars_writes_otherwise_go_through_json_dumps(columns: dict[str, list[object]]
                                                              ) -> None:
    frame = _month_frame(**columns)
    assert not _polars_writes_as_json_dumps(_dates_as_text(frame)[0])
    assert _month_json("2026-11", frame) == _dumped("2026-11", frame)
