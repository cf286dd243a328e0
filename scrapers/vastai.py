"""Vast.ai marketplace offers: POST https://console.vast.ai/api/v0/bundles/ (no key needed).

Facts (../shared/captures/SOURCES.md §1): the API wraps offers as {"offers": [...]}, the CLI's
`--raw` output is the bare list; `dph_total` is USD/hour for the whole offer including the
default disk, `min_bid` the interruptible floor for the whole offer, `gpu_ram` MB per GPU,
`cpu_ram` MB for this offer's share. One machine shows up as several GPU-count slices, each
with its own offer id: every id is kept once.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from contract import HttpSettings, ParseError, RawCapture, conform
from scrapers._json import as_float, load_json
from scrapers.base import EXAMPLES_DIR, SourceDef
from scrapers.http import request

if TYPE_CHECKING:
    import httpx
    import polars as pl

URL = "https://console.vast.ai/api/v0/bundles/"
# Everything rentable or rented, largest first; 3000 is the page gpuhunt uses for "all".
QUERY: dict[str, Any] = {
    "num_gpus": {"gte": 1},
    "rentable": {"eq": True},
    "order": [["score", "desc"]],
    "type": "on-demand",
    "limit": 3000,
}


def fetch(client: httpx.Client, settings: HttpSettings) -> RawCapture:
    headers = {"Accept": "application/json"}
    key = settings.secret("VAST_API_KEY")
    if key:
        headers["Authorization"] = f"Bearer {key}"
    url = settings.base_url("vastai", "https://console.vast.ai") + "/api/v0/bundles/"
    return request(client, settings, "vastai", "POST", url, headers=headers, json=QUERY)


def _offers(payload: Any) -> list[dict[str, Any]]:
    if isinstance(payload, dict):
        payload = payload.get("offers")
    if not isinstance(payload, list):
        raise ParseError("vastai: expected a list of offers or {'offers': [...]}")
    return [offer for offer in payload if isinstance(offer, dict)]


def _columns(body: bytes) -> dict[str, list[Any]]:
    """Each field the parser reads, as one list over the offers (`id`: id, else contract id).

    Typed decoding of just those fields is much faster than building every offer's dict of
    ~100 keys; a payload it does not fit (an offer that is not an object, `offers` missing
    or not a list, bad JSON) takes the general path, which accepts or rejects it as before.
    """
    import msgspec

    from scrapers._vastai_offers import DECODER, FIELDS, GET_FIELDS, Envelope

    try:
        decoded = DECODER.decode(body)
    except (msgspec.ValidationError, msgspec.DecodeError):
        dicts = _offers(load_json(body, what="vastai"))
        columns = {key: [o.get(key) for o in dicts] for key in FIELDS}
        columns["id"] = [o.get("id", o.get("ask_contract_id")) for o in dicts]
        return columns
    offers = decoded.offers if isinstance(decoded, Envelope) else decoded
    # One C-level pass per offer, then a transpose: ~3x faster than one getattr per cell.
    columns = dict(zip(FIELDS, map(list, zip(*map(GET_FIELDS, offers), strict=True)),
                       strict=True)) if offers else {key: [] for key in FIELDS}
    unset = msgspec.UNSET
    columns["id"] = [c if i is unset else i
                     for i, c in zip(columns["id"], columns["ask_contract_id"], strict=True)]
    return columns


_NUMBER_TYPES = frozenset({int, float, type(None)})


def _floats(values: list[Any]) -> pl.Series:
    """`as_float` over a column: the fast path when every value is a JSON number or null."""
    import polars as pl

    if set(map(type, values)) <= _NUMBER_TYPES:
        series = pl.Series(values, dtype=pl.Float64, strict=False)
        return series.fill_nan(None).replace([float("inf"), float("-inf")], None)
    return pl.Series([as_float(v) for v in values], dtype=pl.Float64)


def parse(raw: RawCapture) -> pl.DataFrame:
    """Columnar: pull each needed field once per column, then let polars build the rows.

    Same rows, in the same order, as one on-demand row per offer followed by its interruptible
    row; a 10k-offer scan parses in a few tens of ms (bench/vs_gpuhunt.py).
    """
    import polars as pl

    col = _columns(raw.body)
    frame = pl.DataFrame({
        "offering": [None if i is None else str(i) for i in col["id"]],
        "gpu_name": [n if isinstance(n, str) else None for n in col["gpu_name"]],
        "region": [g or "unknown" for g in col["geolocation"]],
        "available": [bool(r) and not bool(d) for r, d in zip(col["rentable"], col["rented"],
                                                              strict=True)],
        **{key: _floats(col[key]) for key in (
            "num_gpus", "dph_total", "dph_base", "gpu_ram", "cpu_ram",
            "cpu_cores_effective", "min_bid")},
    }, strict=False)
    # Keep each offer id once (first seen), as the API lists one slice per GPU count.
    frame = (frame.with_row_index("_offer").filter(pl.col("offering").is_not_null())
             .unique("offering", keep="first", maintain_order=True))
    common = [
        pl.lit("vastai").alias("provider"), "offering", "gpu_name",
        pl.col("num_gpus").alias("gpu_count"),
        pl.when(pl.col("gpu_ram") != 0).then(pl.col("gpu_ram") / 1024).alias("gpu_memory_gb"),
        pl.col("cpu_cores_effective").alias("vcpus"),
        pl.when(pl.col("cpu_ram") != 0).then(pl.col("cpu_ram") / 1024).alias("ram_gb"),
        "region", pl.lit(1, pl.Int64).alias("billing_increment_s"), "available", "_offer",
    ]
    disk = (pl.col("dph_total") - pl.col("dph_base")).fill_null(0.0).clip(lower_bound=0.0)
    on_demand = frame.select(*common, pl.lit("on_demand").alias("pricing"),
                             pl.col("dph_total").alias("price_usd_per_hour"),
                             pl.lit(0, pl.UInt8).alias("_slot"))
    bids = frame.filter(pl.col("min_bid") > 0).select(
        *common, pl.lit("interruptible").alias("pricing"),
        (pl.col("min_bid") + disk).alias("price_usd_per_hour"), pl.lit(1, pl.UInt8).alias("_slot"))
    rows = pl.concat([on_demand, bids]).sort("_offer", "_slot").drop("_offer", "_slot")
    return conform(rows)


SOURCE = SourceDef(
    name="vastai",
    provider="vastai",
    kind="api",
    url=URL,
    example=EXAMPLES_DIR / "vastai" / "bundles_2025-06-12.json",
    example_as_of="2025-06-12",
    fetch_fn=fetch,
    parse_fn=parse,
    secret_names=("VAST_API_KEY",),
)
