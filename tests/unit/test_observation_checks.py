"""The model's checks as one polars expression (schemas.observation._all_pass): a batch it
passes is one pandera passes, and validate() answers the same with it as with pandera alone."""

from __future__ import annotations

import math
from datetime import UTC, datetime

import polars as pl
import pytest

import schemas.observation as observation
from scrapers.registry import all_sources, get_source

WHEN = datetime(2026, 1, 1, tzinfo=UTC)


def _observations(source_name: str) -> pl.DataFrame:
    source = get_source(source_name)
    raw = source.example_capture(WHEN)
    return observation.to_observations(source.parse(raw), raw, "run-1")


def _bad_values() -> list[tuple[str, str, object]]:
    """(column, check, a value that fails it) for every check and non-null rule of the model."""
    cases: list[tuple[str, str, object]] = []
    for name, column in observation.Observation.to_schema().columns.items():
        if not column.nullable:
            cases.append((name, "not_nullable", None))
        if column.dtype.type.is_float():
            cases.append((name, "nan", math.nan))
        for check in column.checks:
            stats = check.statistics
            bad = {"greater_than": lambda s: s["min_value"],
                   "greater_than_or_equal_to": lambda s: s["min_value"] - 1,
                   "less_than_or_equal_to": lambda s: s["max_value"] + 1,
                   "isin": lambda s: "not-a-kind",
                   "str_matches": lambda s: "usd",
                   "str_length": lambda s: "x" * (s["min_value"] - 1 if s["min_value"] > 1
                                                  else s["max_value"] + 1 if s["max_value"]
                                                  else 0)}[check.name](stats)
            cases.append((name, check.name, bad))
    return cases


def test_the_expression_covers_the_whole_model() -> None:
    assert observation._ALL_PASS is not None, "a check of the model has no expression"
    assert observation._ALL_PASS[0] == dict(observation.OBSERVATION_SCHEMA)


@pytest.mark.parametrize(("column", "check", "bad"), _bad_values(),
                         ids=lambda v: v if isinstance(v, str) else None)
def test_a_row_failing_any_check_goes_to_pandera(column: str, check: str, bad: object,
                                                 monkeypatch: pytest.MonkeyPatch) -> None:
    frame = _observations("lambda").head(3)
    assert observation._all_pass(frame)
    broken = frame.with_columns(
        pl.when(pl.int_range(pl.len()) == 1).then(pl.lit(bad, frame.schema[column]))
        .otherwise(pl.col(column)).alias(column))
    assert not observation._all_pass(broken)
    batch = observation.validate(broken)
    if check != "nan":  # pandera lets NaN through some columns: it decides, not the expression
        assert batch.good.height == 2 and batch.quarantined.height == 1
        assert column in batch.quarantined["failed_check"][0]
    monkeypatch.setattr(observation, "_ALL_PASS", None)
    alone = observation.validate(broken)
    assert batch.good.equals(alone.good) and batch.quarantined.equals(alone.quarantined)


def test_a_type_that_differs_goes_to_pandera() -> None:
    frame = _observations("lambda")
    assert not observation._all_pass(frame.with_columns(pl.col("vcpus").cast(pl.Float32)))
    assert not observation._all_pass(frame.drop("screen_flag"))


@pytest.mark.parametrize("source", sorted(all_sources()))
def test_validate_answers_as_pandera_alone(source: str,
                                           monkeypatch: pytest.MonkeyPatch) -> None:
    frame = _observations(source)
    fast = observation.validate(frame)
    monkeypatch.setattr(observation, "_ALL_PASS", None)
    slow = observation.validate(frame)
    assert fast.good.equals(slow.good)
    assert fast.quarantined.equals(slow.quarantined)
    assert fast.screens == slow.screens
