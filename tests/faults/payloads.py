"""Fault payloads derived from each source's bundled example, generically by format.

Every transform takes the example's bytes and returns the bytes a broken provider would send:
emptied, renamed (layout change), prices x100 (unit change), or the wrong kind of document.
They work on JSON, CSV, HTML and markdown alike, so a new source is covered without code here.
"""

from __future__ import annotations

import contextlib
import csv
import io
import re
from collections.abc import Callable
from pathlib import Path
from typing import Any

import orjson

# Keys / CSV columns that hold prices. A parent key that matches scales everything beneath it
# (GCP's unitPrice {units, nanos}, Azure's retailPrice, RunPod's lowestPrice {...}).
PRICE_KEY = re.compile(
    r"(?i)(price|cost|dph|bid|usd|amount|retail|hourly|per_?hour|per_?sec|rate$|^rate|"
    r"spot|on_?demand|^(units|nanos)$)"
)
DOLLARS = re.compile(r"\$\s?(\d+(?:,\d{3})*(?:\.\d+)?)")

GARBAGE_HTML = (b"<!DOCTYPE html><html><head><title>Just a moment...</title></head>"
                b"<body><h1>Checking your browser before accessing</h1></body></html>")
GARBAGE_JSON = b'{"error": "upstream unavailable", "code": 503}'


_JSONP = re.compile(rb"^\s*([\w.$]+\()(.*)(\)\s*;?\s*)$", re.S)


def kind_of(body: bytes, path: Path | None = None) -> str:
    """json | jsonp | csv | html | markdown | text, from the body first, the file name second."""
    try:
        orjson.loads(body)
        return "json"
    except orjson.JSONDecodeError:
        pass
    match = _JSONP.match(body)
    if match:
        try:
            orjson.loads(match.group(2))
            return "jsonp"
        except orjson.JSONDecodeError:
            pass
    suffix = path.suffix.lower() if path else ""
    head = body[:4096].lower()
    if suffix in (".html", ".htm") or b"<html" in head or b"<table" in body.lower():
        return "html"
    if suffix in (".md", ".mdx"):
        return "markdown"
    first = head.split(b"\n", 1)[0]
    if suffix == ".csv" or (first.count(b",") >= 2 and b"<" not in first):
        return "csv"
    return "text"


# --- JSON ---------------------------------------------------------------------------------


def _scale(value: Any, factor: float) -> Any:
    if isinstance(value, bool) or value is None:
        return value
    if isinstance(value, int | float):
        scaled = value * factor
        return int(scaled) if isinstance(value, int) else scaled
    if isinstance(value, str):
        try:
            number = float(value)
        except ValueError:
            return DOLLARS.sub(lambda m: _dollars(m, factor), value)
        return str(int(number * factor)) if re.fullmatch(r"-?\d+", value) else repr(
            number * factor)
    if isinstance(value, list):
        return [_scale(v, factor) for v in value]
    if isinstance(value, dict):
        return {k: _scale(v, factor) for k, v in value.items()}
    return value


def scale_prices_json(value: Any, factor: float) -> Any:
    if isinstance(value, dict):
        return {k: (_scale(v, factor) if PRICE_KEY.search(k) else scale_prices_json(v, factor))
                for k, v in value.items()}
    if isinstance(value, list):
        return [scale_prices_json(v, factor) for v in value]
    return value


def empty_json(value: Any) -> Any:
    """Empty every record list, keeping containers (pages, wrappers) so the shape stays valid."""
    if isinstance(value, dict):
        shapes = {frozenset(v) if isinstance(v, dict) else None for v in value.values()}
        if len(value) >= 2 and len(shapes) == 1 and None not in shapes:
            return {}  # a map of records by name (Lambda's {"data": {"gpu_1x_a10": {...}}})
        return {k: empty_json(v) for k, v in value.items()}
    if isinstance(value, list):
        is_pages = any(isinstance(v, dict) and any(isinstance(x, list | dict) for x in v.values())
                       and _holds_records(v) for v in value)
        return [empty_json(v) for v in value] if is_pages else []
    return value


def _holds_records(value: dict[str, Any]) -> bool:
    """A page container: a dict whose lists (at any depth) hold dicts."""
    for v in value.values():
        if isinstance(v, list) and any(isinstance(x, dict) for x in v):
            return True
        if isinstance(v, dict) and _holds_records(v):
            return True
    return False


def rename_keys_json(value: Any) -> Any:
    if isinstance(value, dict):
        return {f"{k}_v2": rename_keys_json(v) for k, v in value.items()}
    if isinstance(value, list):
        return [rename_keys_json(v) for v in value]
    return value


# --- CSV / HTML / markdown ------------------------------------------------------------------


def _dollars(match: re.Match[str], factor: float) -> str:
    number = float(match.group(1).replace(",", "")) * factor
    return f"${number:.6g}"


def _split_csv_line(line: str) -> list[str]:
    return next(csv.reader([line]), [])


def _join_csv_line(fields: list[str], like: str) -> str:
    """Re-serialise in the style of the original line (AWS quotes every non-empty field)."""
    ending = "\n" if like.endswith("\n") else ""
    if like.startswith('"'):
        text = ",".join(f'"{f.replace(chr(34), chr(34) * 2)}"' if f else "" for f in fields)
    else:
        out = io.StringIO()
        csv.writer(out, lineterminator="").writerow(fields)
        text = out.getvalue()
    return text + ending


def csv_layout(body: bytes) -> tuple[list[str], str, set[int]]:
    """(lines, header line, indices of header lines): the header is the first widest row."""
    lines = body.decode("utf-8", errors="replace").splitlines(keepends=True)
    widths = [len(_split_csv_line(line)) if line.strip() else 0 for line in lines]
    width = max(widths, default=0)
    header = next((line for line, w in zip(lines, widths, strict=True) if w == width), "")
    headers = {i for i, line in enumerate(lines) if line.rstrip("\r\n") == header.rstrip("\r\n")}
    return lines, header, headers


def _is_data(i: int, lines: list[str], headers: set[int]) -> bool:
    return bool(lines[i].strip()) and i not in headers and i > min(headers, default=len(lines))


def scale_prices_csv(body: bytes, factor: float) -> bytes:
    lines, header, headers = csv_layout(body)
    names = _split_csv_line(header)
    price_cols = [i for i, name in enumerate(names) if PRICE_KEY.search(name)]
    for n, line in enumerate(lines):
        if not _is_data(n, lines, headers):
            continue
        fields = _split_csv_line(line)
        if len(fields) != len(names):
            continue
        for i in price_cols:
            with contextlib.suppress(ValueError):
                fields[i] = repr(float(fields[i]) * factor) if fields[i].strip() else fields[i]
        lines[n] = _join_csv_line(fields, line)
    return "".join(lines).encode()


# Prices also hide in markup: data-secure-cloud-price="2.39", or JSON embedded in a page.
_PRICE_ATTR = re.compile(r'\b([\w:-]+)=(["\'])(\d+(?:\.\d+)?)\2')
_PRICE_JSON = re.compile(r'(["\']?)([A-Za-z_][\w-]*)\1(\s*:\s*)(["\']?)(\d+(?:\.\d+)?)\4')


def _scaled_number(text: str, factor: float) -> str:
    return f"{float(text) * factor:.6g}"


def scale_prices_text(body: bytes, factor: float) -> bytes:
    text = body.decode("utf-8", errors="replace")
    text = DOLLARS.sub(lambda m: _dollars(m, factor), text)
    text = _PRICE_ATTR.sub(lambda m: (
        f"{m[1]}={m[2]}{_scaled_number(m[3], factor)}{m[2]}" if PRICE_KEY.search(m[1])
        else m[0]), text)
    text = _PRICE_JSON.sub(lambda m: (
        f"{m[1]}{m[2]}{m[1]}{m[3]}{m[4]}{_scaled_number(m[5], factor)}{m[4]}"
        if PRICE_KEY.search(m[2]) else m[0]), text)
    return text.encode()


_TR = re.compile(r"<tr\b[^>]*>(?:(?!</tr>).)*?<td\b.*?</tr>", re.S | re.I)
_MD_ROW = re.compile(r"^\s*\|.*\|\s*$")
_MD_RULE = re.compile(r"^\s*\|?\s*:?-{3,}")


def empty_text(body: bytes, kind: str) -> bytes:
    text = body.decode("utf-8", errors="replace")
    if kind == "csv":
        lines, _, headers = csv_layout(body)
        return "".join(x for i, x in enumerate(lines) if not _is_data(i, lines, headers)).encode()
    if kind == "html":
        emptied = _TR.sub("", text)
        if emptied == text:  # prices not in a table: drop every line that shows one
            emptied = "".join(x for x in text.splitlines(keepends=True) if not DOLLARS.search(x))
        return emptied.encode()
    # markdown / text: keep headers and table rules, drop every table data row
    kept, in_table = [], False
    for line in text.splitlines(keepends=True):
        if _MD_ROW.match(line):
            if _MD_RULE.match(line):
                in_table = True
                kept.append(line)
            elif not in_table:
                kept.append(line)  # the header row
            continue
        in_table = False
        kept.append(line)
    return "".join(kept).encode()


_HTML_RENAMES = [
    (re.compile(r"<(/?)table\b", re.I), r"<\1section"),
    (re.compile(r"<(/?)tr\b", re.I), r"<\1ul"),
    (re.compile(r"<(/?)t[dh]\b", re.I), r"<\1li"),
    (re.compile(r"<(/?)thead\b", re.I), r"<\1header"),
    (re.compile(r"<(/?)tbody\b", re.I), r"<\1main"),
    (re.compile(r'\b(class|id)="', re.I), r'\1="v2-'),
    (re.compile(r"\bdata-([a-z-]+)=", re.I), r"data-v2-\1="),
]


def rename_layout_text(body: bytes, kind: str) -> bytes:
    text = body.decode("utf-8", errors="replace")
    if kind == "csv":
        lines, header, headers = csv_layout(body)
        renamed = _join_csv_line([f"{h}_v2" for h in _split_csv_line(header)], header)
        return "".join(renamed if i in headers else x for i, x in enumerate(lines)).encode()
    if kind == "html":
        for pattern, repl in _HTML_RENAMES:
            text = pattern.sub(repl, text)
        return text.encode()
    # markdown: a table turned into a bullet list, the way a docs rewrite would
    return text.replace(" | ", " / ").replace("|", "").encode()


# --- the transforms by fault ----------------------------------------------------------------


def _json_or(body: bytes, on_json: Callable[[Any], Any], on_text: Callable[[bytes, str], bytes],
             kind: str) -> bytes:
    if kind == "json":
        return orjson.dumps(on_json(orjson.loads(body)), option=orjson.OPT_INDENT_2)
    if kind == "jsonp":  # callback({...}); as AWS's spot feed: transform the JSON inside
        match = _JSONP.match(body)
        assert match
        inner = orjson.dumps(on_json(orjson.loads(match.group(2))), option=orjson.OPT_INDENT_2)
        return match.group(1) + inner + match.group(3)
    return on_text(body, kind)


def healthy(body: bytes, kind: str) -> bytes:
    """The example with a trailing newline: the same prices as a new capture (new sha256)."""
    return body + b"\n"


def empty(body: bytes, kind: str) -> bytes:
    return _json_or(body, empty_json, empty_text, kind)


def layout(body: bytes, kind: str) -> bytes:
    return _json_or(body, rename_keys_json, rename_layout_text, kind)


def prices_x100(body: bytes, kind: str) -> bytes:
    if kind == "csv":
        return scale_prices_csv(body, 100)
    return _json_or(body, lambda v: scale_prices_json(v, 100),
                    lambda b, _k: scale_prices_text(b, 100), kind)


def garbage(body: bytes, kind: str) -> tuple[bytes, str]:
    """HTML where JSON was expected, JSON where a page or a CSV was expected."""
    if kind in ("json", "jsonp"):
        return GARBAGE_HTML, "text/html; charset=utf-8"
    return GARBAGE_JSON, "application/json"


BODY_TRANSFORMS: dict[str, Callable[[bytes, str], bytes]] = {
    "empty": empty, "layout": layout, "prices_x100": prices_x100,
}
