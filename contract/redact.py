"""Secrets out of text: the one function every error and every stored payload goes through.

A key lives in the environment and travels in one request header; if a server echoes it back
(in a body, an error page, a redirect address) it is replaced by `[NAME redacted]` before the
text becomes an error message, a log line, a raw capture or a warehouse row. Payloads are
redacted, not refused: the rest of the page is still a good capture, and the archive then
holds what the parser saw (see README "Secrets").
"""

from __future__ import annotations

from collections.abc import Mapping
from urllib.parse import quote

__all__ = ["MIN_SECRET_CHARS", "contains_secret", "redact", "redact_bytes"]

# Shorter values are refused by the settings: they could not be replaced without mangling text.
MIN_SECRET_CHARS = 8


def _forms(value: str) -> set[str]:
    """The value as sent, percent-encoded (an echoed query string) and with JSON's escaped
    slash (`\\/`, as some servers write it)."""
    return {value, quote(value, safe=""), value.replace("/", "\\/")}


def _pairs(secrets: Mapping[str, str]) -> list[tuple[str, str]]:
    # Longest first, so a key that contains another is replaced whole.
    pairs = [(form, f"[{name} redacted]") for name, value in secrets.items()
             if value and len(value) >= MIN_SECRET_CHARS for form in _forms(value)]
    return sorted(pairs, key=lambda pair: -len(pair[0]))


def redact(text: str, secrets: Mapping[str, str]) -> str:
    """`text` with every secret's value replaced by `[NAME redacted]`."""
    for value, mark in _pairs(secrets):
        if value in text:
            text = text.replace(value, mark)
    return text


def redact_bytes(data: bytes, secrets: Mapping[str, str]) -> bytes:
    """`redact` for a payload (UTF-8 forms of the values)."""
    for value, mark in _pairs(secrets):
        encoded = value.encode()
        if encoded in data:
            data = data.replace(encoded, mark.encode())
    return data


def contains_secret(text: str, secrets: Mapping[str, str]) -> bool:
    return any(value in text for value, _ in _pairs(secrets))
