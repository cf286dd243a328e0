"""The Vast.ai parser's typed fast decode (only the fields it reads) and its general fallback
give the same rows as the row-by-row reference, whatever shape the payload takes."""

from __future__ import annotations

import msgspec
import orjson
import pytest
from polars.testing import assert_frame_equal

from contract import ParseError
from scrapers import vastai
from scrapers._vastai_offers import DECODER
from tests.unit.test_vastai_columnar import _raw, row_by_row

OFFERS = [
    {"id": 10, "gpu_name": "RTX 4090", "num_gpus": 1, "dph_total": 0.5, "dph_base": 0.45,
     "min_bid": 0.3, "gpu_ram": 24564, "cpu_ram": 32000, "rentable": True, "rented": False,
     "geolocation": "Quebec, CA", "cpu_cores_effective": 8.0, "extra": {"nested": [1, 2]}},
    {"ask_contract_id": 11, "gpu_name": "H100 SXM", "num_gpus": 8, "dph_total": 20.0},
    {"id": None, "ask_contract_id": 12, "gpu_name": "A40", "num_gpus": 1, "dph_total": 0.4},
    {"id": 13, "gpu_name": "L4", "num_gpus": 1, "dph_total": 0.3, "rentable": 1, "rented": 0},
]


@pytest.mark.parametrize("payload", [{"offers": OFFERS}, OFFERS,
                                     {"offers": OFFERS, "timestamp": 1.0}])
def test_fast_decode_matches_reference(payload: object) -> None:
    body = orjson.dumps(payload)
    DECODER.decode(body)  # the fast path takes it
    rows = vastai.parse(_raw(body))
    assert_frame_equal(rows, row_by_row(OFFERS))
    # an explicit null id is not replaced by the contract id (as dict.get(id, ...) reads it)
    assert rows["offering"].to_list() == ["10", "10", "11", "13"]


def test_fallback_skips_items_that_are_not_objects() -> None:
    body = orjson.dumps({"offers": [OFFERS[0], "garbage", 7, None, OFFERS[3]]})
    with pytest.raises(msgspec.ValidationError):
        DECODER.decode(body)
    assert_frame_equal(vastai.parse(_raw(body)), row_by_row([OFFERS[0], OFFERS[3]]))


@pytest.mark.parametrize("body", [b'{"offers": null}', b'{"data": []}', b'"offers"',
                                  b'{"offers": [', b"NaN"])
def test_wrong_shapes_still_raise_parse_error(body: bytes) -> None:
    with pytest.raises(ParseError):
        vastai.parse(_raw(body))
