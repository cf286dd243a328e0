"""Bad input, generated: every parser, fed its own example mutated at random (missing fields,
nulls, wrong types, huge and negative numbers, unicode names, deleted cells), either raises
ParseError or returns rows that validation accepts or quarantines. Never another exception,
never junk stored. Strategies work on the example's format, so new sources are covered."""

from __future__ import annotations

import json
import math
import re
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import orjson
import polars as pl
import pytest
from hypothesis import HealthCheck, Phase, given, settings
from hypothesis import strategies as st

from contract import ParseError, RawCapture
from schemas.observation import OBSERVATION_SCHEMA, to_observations, validate
from scrapers.base import Source
from scrapers.registry import all_sources
from tests.faults.payloads import _JSONP, kind_of
from warehouse.connection import connect
from warehouse.ingest import ingest

SOURCES = sorted(all_sources())
NO_SHRINK = (Phase.explicit, Phase.generate)  # shrinking a crash costs a minute; skip it
FETCHED_AT = datetime(2025, 6, 12, tzinfo=UTC)
HOSTILE_VALUES: list[Any] = [
    None, "", "abc", "NaN", "-1", "1e400", -1, -0.01, 0, 1e308, -1e308, 10**30, True, [], {},
    "H100\u202e SXM 🚀", "Ｈ１００", "名前", "\x00", "'; DROP TABLE observation; --",
]


# --- mutations by format --------------------------------------------------------------------


def json_paths(value: Any, prefix: tuple[Any, ...] = (), limit: int = 4000) -> list[tuple]:
    """Every path into a JSON document (keys and list indexes), depth first."""
    found: list[tuple[Any, ...]] = []
    stack = [(prefix, value)]
    while stack and len(found) < limit:
        path, node = stack.pop()
        if isinstance(node, dict):
            for key, child in node.items():
                found.append((*path, key))
                stack.append(((*path, key), child))
        elif isinstance(node, list):
            for index, child in enumerate(node):
                found.append((*path, index))
                stack.append(((*path, index), child))
    return found


def mutate_json(doc: Any, path: tuple[Any, ...], action: str, value: Any) -> Any:
    if not path:
        return doc
    parent = doc
    for step in path[:-1]:
        parent = parent[step]
    last = path[-1]
    if action == "drop":
        del parent[last]
    elif action == "scale" and isinstance(parent[last], int | float) \
            and not isinstance(parent[last], bool):
        parent[last] = parent[last] * value
    else:
        parent[last] = value
    return doc


@st.composite
def mutated_json(draw: st.DrawFn, body: bytes) -> bytes:
    wrapper = _JSONP.match(body) if kind_of(body) == "jsonp" else None
    doc = orjson.loads(wrapper.group(2) if wrapper else body)
    for _ in range(draw(st.integers(1, 6))):
        paths = json_paths(doc)
        if not paths:
            break
        path = draw(st.sampled_from(paths))
        action = draw(st.sampled_from(["drop", "set", "set", "scale"]))
        value = (draw(st.sampled_from([-1, 1e6, -1e6, 0, 1e-9])) if action == "scale"
                 else draw(st.sampled_from(HOSTILE_VALUES)))
        doc = mutate_json(doc, path, action, value)
    text = json.dumps(doc, ensure_ascii=False).encode()  # stdlib: big ints too
    return wrapper.group(1) + text + wrapper.group(3) if wrapper else text


_NUMBER = re.compile(rb"-?\d+(?:\.\d+)?")
_CELL = re.compile(rb"<(td|th|li|p|div|span)\b[^>]*>.*?</\1>", re.S)


@st.composite
def mutated_text(draw: st.DrawFn, body: bytes) -> bytes:
    """CSV / HTML / markdown: change numbers, blank or garble fields, delete cells or lines."""
    for _ in range(draw(st.integers(1, 6))):
        action = draw(st.sampled_from(["number", "number", "cell", "line", "unicode"]))
        if action == "number":
            spans = [m.span() for m in _NUMBER.finditer(body)]
            if spans:
                start, end = draw(st.sampled_from(spans))
                new = draw(st.sampled_from([b"-1", b"0", b"1e400", b"99999999999999999999",
                                            b"", b"NaN", b"abc", b"-0.5"]))
                body = body[:start] + new + body[end:]
        elif action == "cell":
            spans = [m.span() for m in _CELL.finditer(body)] or \
                    [m.span() for m in re.finditer(rb"[^,|\n]+", body)]
            if spans:
                start, end = draw(st.sampled_from(spans))
                body = body[:start] + draw(st.sampled_from([b"", b"\xff\xfe", b",,", b"|"])) \
                    + body[end:]
        elif action == "line":
            lines = body.splitlines(keepends=True)
            if len(lines) > 1:
                del lines[draw(st.integers(0, len(lines) - 1))]
                body = b"".join(lines)
        else:
            at = draw(st.integers(0, len(body)))
            body = body[:at] + "H100 ✓ 名前 \u202e".encode() + body[at:]
    return body


def payloads(source: Source) -> st.SearchStrategy[bytes]:
    example = source.example.read_bytes()
    if kind_of(example, source.example) in ("json", "jsonp"):
        return mutated_json(example)
    return mutated_text(example)


def capture(source: Source, body: bytes) -> RawCapture:
    return RawCapture(source=source.name, url=source.url, fetched_at=FETCHED_AT, body=body)


# --- properties -----------------------------------------------------------------------------


def check_parse(source: Source, body: bytes) -> None:
    raw = capture(source, body)
    try:
        parsed = source.parse(raw)
    except ParseError:
        return
    except Exception as exc:  # the finding: a parser crash that is not a ParseError
        pytest.fail(f"{source.name}: {type(exc).__name__}: {exc} (not a ParseError)")
    batch = validate(to_observations(parsed, raw, "property"))
    good = batch.good
    assert batch.good.height + batch.quarantined.height == parsed.height
    if good.height:
        prices = good["price_usd_per_gpu_hour"].to_list()
        assert all(p is not None and math.isfinite(p) and p > 0 for p in prices)
        assert good["gpu_count"].min() > 0  # type: ignore[operator]
        assert good["offering"].null_count() == 0 and good["provider"].null_count() == 0


# Parsers once crashed here with TypeError / polars ComputeError on mutated input (aws-spot,
# azure, gcp, lambda, ...); SourceDef.parse now turns any such crash into a ParseError that
# names the source, so every source must pass.
@pytest.mark.parametrize("source_name", SOURCES)
def test_parser_raises_parse_error_or_returns_checkable_rows(source_name: str) -> None:
    source = all_sources()[source_name]

    @settings(max_examples=30, deadline=None, database=None, derandomize=True, phases=NO_SHRINK,
              suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large])
    @given(payloads(source))
    def run(body: bytes) -> None:
        check_parse(source, body)

    run()


INGEST_SUBSET = SOURCES[::3]  # the warehouse path is slower; a third of the sources suffices


@pytest.mark.parametrize("source_name", INGEST_SUBSET)
def test_mutated_payloads_never_store_junk(source_name: str, tmp_path: Path) -> None:
    source = all_sources()[source_name]
    con = connect(tmp_path / "w.duckdb")
    count = iter(range(10**6))

    @settings(max_examples=12, deadline=None, database=None, derandomize=True, phases=NO_SHRINK,
              suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large,
                                     HealthCheck.function_scoped_fixture])
    @given(payloads(source))
    def run(body: bytes) -> None:
        outcome = ingest(con, source, capture(source, body), run_id=f"prop-{next(count)}",
                         archive_root=tmp_path / "raw")
        assert outcome.status in ("success", "unchanged", "failed", "rejected"), outcome
        assert (outcome.error is None) == (outcome.status in ("success", "unchanged"))

    try:
        run()
        stored = con.execute("SELECT * FROM observation").pl()
        if stored.height:
            frame = stored.select(list(OBSERVATION_SCHEMA)).with_columns(
                pl.col("observed_at").dt.convert_time_zone("UTC"))
            again = validate(frame.cast(OBSERVATION_SCHEMA))  # type: ignore[arg-type]
            assert again.quarantined.height == 0, again.quarantined["failed_check"].to_list()
        junk = con.execute("SELECT count(*) FROM observation WHERE price_usd_per_hour <= 0 "
                           "OR NOT isfinite(price_usd_per_hour) OR gpu_count <= 0").fetchone()
        assert junk == (0,)
    finally:
        con.close()


def test_a_mutation_really_changes_the_payload() -> None:
    """Guard against strategies that silently mutate nothing."""
    doc = {"offers": [{"id": 1, "dph_total": 0.4}]}
    assert mutate_json(orjson.loads(orjson.dumps(doc)), ("offers", 0, "dph_total"), "set",
                       -1) == {"offers": [{"id": 1, "dph_total": -1}]}
    assert ("offers", 0, "dph_total") in json_paths(doc)
