"""JSON helpers shared by API sources: fast decoding with a clear ParseError."""

from __future__ import annotations

import json
from typing import Any

import orjson

from contract import ParseError


def load_json(body: bytes, *, what: str) -> Any:
    """Decode a JSON payload; tolerate a trailing non-JSON message (some CLIs print one)."""
    try:
        return orjson.loads(body)
    except orjson.JSONDecodeError:
        pass
    text = body.decode("utf-8", errors="replace").lstrip("\ufeff \t\r\n")
    if not text:
        raise ParseError(f"{what}: empty body")
    if text[0] not in "[{":
        raise ParseError(f"{what}: expected JSON, got {text[:60]!r}")
    try:
        value, _ = json.JSONDecoder().raw_decode(text)
    except json.JSONDecodeError as exc:
        raise ParseError(f"{what}: invalid JSON ({exc.msg} at char {exc.pos})") from None
    return value


def as_float(value: Any) -> float | None:
    """A finite float from a JSON number or numeric string; None for anything else."""
    if isinstance(value, bool) or value is None:
        return None
    try:
        number = float(value)
    except (TypeError, ValueError):
        return None
    return number if number == number and abs(number) != float("inf") else None
