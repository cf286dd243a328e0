"""Per-source serve adapters: how the fault server cuts a source's example into responses.

Most sources fetch one document: the default serves the example whole, for any path. A source
whose fetch makes several requests (AWS per region, SkyPilot per cloud, paged APIs) and bundles
them into one capture ships a bundled example; its adapter splits that back into the parts the
requests ask for. Faults are applied to each part, so every request sees the same fault.
"""

from __future__ import annotations

import re
from collections.abc import Callable
from dataclasses import dataclass
from urllib.parse import parse_qs, urlsplit

import orjson


@dataclass(frozen=True, slots=True)
class Request:
    method: str
    path: str  # after the /<source> prefix
    query: dict[str, list[str]]
    body: bytes
    base: str  # this source's prefix on the fault server, for absolute next-page links
    hit: int  # 1-based request number for this source in this test


def _whole(body: bytes) -> dict[str, bytes]:
    return {"": body}


def _any(request: Request) -> str | None:
    return ""


def _as_is(body: bytes, request: Request) -> bytes:
    return body


@dataclass(frozen=True, slots=True)
class Serve:
    split: Callable[[bytes], dict[str, bytes]] = _whole  # example -> parts by route key
    route: Callable[[Request], str | None] = _any  # request -> part key (None / unknown: 404)
    finish: Callable[[bytes, Request], bytes] = _as_is  # last touch (e.g. next-page links)


# --- AWS: one offer CSV per region, concatenated in the example (each with its preamble) -----

_AWS_REGION = re.compile(r"/current/([a-z0-9-]+)/index\.csv$")


def _aws_split(body: bytes) -> dict[str, bytes]:
    text = body.decode("utf-8", errors="replace")
    blocks = [b for b in re.split(r'(?m)^(?="FormatVersion")', text) if b.strip()]
    parts: dict[str, bytes] = {}
    for block in blocks:
        codes = re.findall(r'"((?:us|eu|ap|ca|sa|me|af|il|mx)-[a-z]+-\d)"', block)
        key = max(set(codes), key=codes.count) if codes else ""
        parts[key] = parts.get(key, b"") + block.encode()
    if blocks:  # a region the example lacks gets a valid file with no rows
        head = blocks[0].splitlines(keepends=True)
        header = next((i for i, line in enumerate(head) if line.startswith('"SKU"')), None)
        if header is not None:
            parts["*"] = "".join(head[: header + 1]).encode()
    return parts


def _aws_route(request: Request) -> str | None:
    match = _AWS_REGION.search(request.path)
    return match.group(1) if match else None


# --- SkyPilot: one vms.csv per cloud, bundled as {"clouds": {cloud: csv text}} ---------------

_CLOUD = re.compile(r"/([a-z0-9_-]+)/vms\.csv$")


def _skypilot_split(body: bytes) -> dict[str, bytes]:
    try:
        container = orjson.loads(body)
    except orjson.JSONDecodeError:
        return _whole(body)
    clouds = container.get("clouds") if isinstance(container, dict) else None
    if not isinstance(clouds, dict):
        return _whole(body)
    return {cloud: str(text).encode() for cloud, text in clouds.items()}


def _skypilot_route(request: Request) -> str | None:
    match = _CLOUD.search(request.path)
    return match.group(1) if match else None


# --- paged JSON APIs: the example is the list of pages fetch bundles --------------------------


def _pages(body: bytes, link_of: Callable[[dict[str, object]], str]) -> dict[str, bytes]:
    """Key page 0 by "" and page i by what page i-1 tells the client to ask for next."""
    try:
        pages = orjson.loads(body)
    except orjson.JSONDecodeError:
        return _whole(body)
    if not isinstance(pages, list) or not all(isinstance(p, dict) for p in pages):
        return _whole(body)
    parts, key = {}, ""
    for page in pages:
        parts[key] = orjson.dumps(page, option=orjson.OPT_INDENT_2)
        key = link_of(page)
    return parts


def _azure_next(page: dict[str, object]) -> str:
    link = page.get("NextPageLink")
    return parse_qs(urlsplit(link).query).get("$skip", ["?"])[0] if isinstance(link, str) else "?"


def _gcp_next(page: dict[str, object]) -> str:
    return str(page.get("nextPageToken") or "?")


def _query_key(name: str) -> Callable[[Request], str | None]:
    return lambda request: request.query.get(name, [""])[0]


# --- Scaleway: per zone, the products and availability lists, each paged ---------------------
# The example bundles {"zones": {zone: {"products": [page ...], "availability": [page ...]}}};
# a zone the example lacks answers an empty page.

_SCALEWAY = re.compile(r"/zones/([a-z0-9-]+)/products/servers(/availability)?$")


def _scaleway_split(body: bytes) -> dict[str, bytes]:
    try:
        container = orjson.loads(body)
    except orjson.JSONDecodeError:
        return _whole(body)
    zones = container.get("zones") if isinstance(container, dict) else None
    if not isinstance(zones, dict):
        return _whole(body)
    parts = {"*": b'{"servers": {}}'}
    for zone, lists in zones.items():
        for kind in ("products", "availability"):
            for number, page in enumerate(lists.get(kind) or [], start=1):
                parts[f"{zone}/{kind}/{number}"] = orjson.dumps(page, option=orjson.OPT_INDENT_2)
    return parts


def _scaleway_route(request: Request) -> str | None:
    match = _SCALEWAY.search(request.path)
    if match is None:
        return None
    kind = "availability" if match.group(2) else "products"
    return f"{match.group(1)}/{kind}/{request.query.get('page', ['1'])[0]}"


ADAPTERS: dict[str, Serve] = {
    "azure": Serve(split=lambda b: _pages(b, _azure_next), route=_query_key("$skip")),
    "gcp": Serve(split=lambda b: _pages(b, _gcp_next), route=_query_key("pageToken")),
    "aws": Serve(split=_aws_split, route=_aws_route),
    "skypilot-catalog": Serve(split=_skypilot_split, route=_skypilot_route),
    "scaleway": Serve(split=_scaleway_split, route=_scaleway_route),
}
DEFAULT = Serve()
