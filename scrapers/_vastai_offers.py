"""Vast.ai's typed decode: the offer fields scrapers.vastai reads, and nothing else.

A module of its own so that listing the sources (`gpuprices sources`, the registry) does not
import msgspec and build these types: scrapers.vastai imports it when it parses (issue 23).
"""

from __future__ import annotations

import operator
from typing import Any

import msgspec

__all__ = ["DECODER", "FIELDS", "GET_FIELDS", "Envelope", "Offer"]


class Offer(msgspec.Struct):
    """The fields the parser reads; decoding skips the ~100 others. `Any`: values arrive as
    the JSON has them (as_float and the parser's checks handle odd types). UNSET = absent."""

    id: Any = msgspec.UNSET
    ask_contract_id: Any = None
    gpu_name: Any = None
    geolocation: Any = None
    rentable: Any = None
    rented: Any = None
    num_gpus: Any = None
    dph_total: Any = None
    dph_base: Any = None
    gpu_ram: Any = None
    cpu_ram: Any = None
    cpu_cores_effective: Any = None
    min_bid: Any = None


class Envelope(msgspec.Struct):
    offers: list[Offer]


DECODER = msgspec.json.Decoder(Envelope | list[Offer])
FIELDS = tuple(Offer.__struct_fields__)
GET_FIELDS = operator.attrgetter(*FIELDS)
