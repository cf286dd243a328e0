"""Inflate a source's bundled example to a realistic night's size, in the source's own format.

Each inflater takes the example payload and returns a bigger payload of the same shape: the
example's records repeated with fresh ids, other regions/sizes and jittered prices, so that the
parser, the GPU-name normaliser and the validator see realistic variety (not one row 10k times).
Formats whose source has no inflater here are skipped by the benchmark with a note.
"""

from __future__ import annotations

import random
from collections.abc import Callable
from typing import Any

import orjson

# How big one night is for the large sources (issue 7).
REALISTIC_ROWS = {"vastai": 10_000, "azure": 50_000, "aws": 20_000}
DEFAULT_ROWS = 2_000

# Vast.ai names as the API writes them, with a plausible $/GPU-hour (on-demand) and MB per GPU.
_VAST_GPUS: tuple[tuple[str, float, int], ...] = (
    ("RTX 4090", 0.40, 24564), ("RTX 3090", 0.22, 24576), ("RTX 5090", 0.65, 32607),
    ("H100 SXM", 2.10, 81559), ("H100 PCIE", 1.80, 81559), ("H100 NVL", 2.20, 95830),
    ("A100 SXM4", 1.20, 81920), ("A100 PCIE", 0.90, 40960), ("RTX A6000", 0.45, 49140),
    ("RTX 6000Ada", 0.75, 49140), ("L40S", 0.80, 46068), ("A40", 0.40, 46068),
    ("RTX 3080", 0.10, 10240), ("Tesla V100", 0.25, 16384), ("H200", 2.80, 143771),
    ("RTX A5000", 0.22, 24564), ("RTX 4080S", 0.25, 16376), ("Q RTX 8000", 0.30, 49152),
    ("RTX 3060", 0.07, 12288), ("Tesla T4", 0.12, 15360), ("L4", 0.35, 23034),
    ("RTX 4070", 0.12, 12282), ("A10", 0.30, 23028), ("RTX 2080 Ti", 0.10, 11264),
)
_PLACES = ("Quebec, CA", "Texas, US", "California, US", "Oregon, US", "Bavaria, DE",
           "Ontario, CA", "Finland, FI", "Norway, NO", "Sweden, SE", "Taiwan, TW",
           "Japan, JP", "Czechia, CZ", "Poland, PL", "Spain, ES", "Virginia, US", None)


def inflate_vastai(example: bytes, rows: int, seed: int = 7) -> bytes:
    """~`rows` offers in the API's {"offers": [...]} shape, keyed like the example's offers."""
    payload = orjson.loads(example)
    template: dict[str, Any] = (payload["offers"] if isinstance(payload, dict) else payload)[0]
    rng = random.Random(seed)
    offers = []
    for i in range(rows):
        name, per_gpu, ram_mb = rng.choice(_VAST_GPUS)
        count = rng.choice((1, 1, 1, 2, 2, 4, 8))
        base = round(per_gpu * count * rng.uniform(0.7, 1.4), 4)
        storage_cost = round(rng.uniform(0.05, 0.3), 3)
        disk = float(rng.choice((50, 100, 200, 500)))
        disk_hour = round(disk * storage_cost / 30 / 24, 6)
        cores = rng.choice((16, 32, 64, 128))
        offer = dict(template)
        offer.update({
            "id": 20_000_000 + i, "ask_contract_id": 20_000_000 + i,
            "machine_id": 40_000 + i // 3, "host_id": 50_000 + i // 10,
            "gpu_name": name, "num_gpus": count, "gpu_ram": ram_mb,
            "gpu_total_ram": ram_mb * count, "dph_base": base,
            "dph_total": round(base + disk_hour, 6),
            "min_bid": round(base * rng.uniform(0.4, 0.8), 4) if rng.random() < 0.8 else None,
            "storage_cost": storage_cost, "geolocation": rng.choice(_PLACES),
            "rentable": True, "rented": rng.random() < 0.3,
            "cpu_cores": cores, "cpu_cores_effective": cores * count / 8,
            "cpu_ram": 2000 * cores, "disk_space": disk,
            "search": {"gpuCostPerHour": base, "diskHour": disk_hour,
                       "totalHour": round(base + disk_hour, 6)},
        })
        offers.append(offer)
    return orjson.dumps({"offers": offers})


def _largest_record_list(node: Any) -> list[dict[str, Any]] | None:
    """The longest list of dicts anywhere in a JSON document (the records of a payload)."""
    best: list[dict[str, Any]] | None = None
    stack = [node]
    while stack:
        item = stack.pop()
        if isinstance(item, list):
            if item and all(isinstance(x, dict) for x in item) and (
                    best is None or len(item) > len(best)):
                best = item
            stack.extend(item)
        elif isinstance(item, dict):
            stack.extend(item.values())
    return best


_PRICE_WORDS = ("price", "cost", "dph", "usd", "rate")
_ID_WORDS = ("id", "sku", "name", "offering", "instance", "flavor", "meter", "type")


def _vary(record: dict[str, Any], k: int, rng: random.Random) -> dict[str, Any]:
    """A copy of `record` with ids made unique for copy k and prices jittered by +-10 %."""
    out: dict[str, Any] = {}
    for key, value in record.items():
        low = key.lower()
        if isinstance(value, bool) or value is None:
            out[key] = value
        elif isinstance(value, (int, float)) and any(w in low for w in _PRICE_WORDS):
            out[key] = round(value * rng.uniform(0.9, 1.1), 6) if value else value
        elif isinstance(value, int) and low.endswith("id"):
            out[key] = value + 1_000_000 * k
        elif (isinstance(value, str) and any(w in low for w in _ID_WORDS)
              and "gpu" not in low and "product" not in low and "region" not in low):
            out[key] = f"{value}-x{k}"
        elif isinstance(value, dict):
            out[key] = _vary(value, k, rng)
        else:
            out[key] = value
    return out


def inflate_json_records(example: bytes, rows: int, seed: int = 7) -> bytes:
    """Generic JSON inflater: repeat the largest record list with unique ids, jittered prices."""
    payload = orjson.loads(example)
    records = _largest_record_list(payload)
    if not records:
        raise ValueError("no list of records in this JSON payload")
    rng = random.Random(seed)
    original = list(records)
    copies = max(1, rows // len(original))
    records[:] = [_vary(r, k, rng) if k else r for k in range(copies) for r in original]
    return orjson.dumps(payload)


def inflate_csv_rows(example: bytes, rows: int, seed: int = 7) -> bytes:
    """Generic CSV inflater: keep any preamble and the header, repeat the data lines."""
    text = example.decode("utf-8")
    lines = text.splitlines()
    header_at = next(i for i, line in enumerate(lines) if line.count(",") >= 3)
    head, body = lines[: header_at + 1], [line for line in lines[header_at + 1:] if line]
    copies = max(1, rows // max(1, len(body)))
    return ("\n".join(head + body * copies) + "\n").encode()


def inflate_azure(example: bytes, rows: int, seed: int = 7) -> bytes:
    """Retail Prices pages: the example's meters again in more (made-up) regions, as one page."""
    payload = orjson.loads(example)
    pages = payload if isinstance(payload, list) else [payload]
    items = [item for page in pages for item in page.get("Items", [])]
    rng = random.Random(seed)
    out = []
    for k in range(max(1, rows // len(items))):
        for item in items:
            price = round(item.get("retailPrice", 0.0) * rng.uniform(0.9, 1.1), 6)
            out.append({**item, "armRegionName": f"{item.get('armRegionName')}{k or ''}",
                        "meterId": f"{item.get('meterId')}-{k}", "retailPrice": price,
                        "unitPrice": price})
    return orjson.dumps({"Items": out, "NextPageLink": None, "Count": len(out)})


def inflate_aws(example: bytes, rows: int, seed: int = 7) -> bytes:
    """Bulk price list CSV: the example's rows again in more (made-up) regions."""
    import csv
    import io

    text = example.decode("utf-8-sig")
    lines = text.splitlines()
    at = next(i for i, line in enumerate(lines) if line.startswith('"SKU"'))
    names = next(csv.reader([lines[at]]))
    region_at, price_at = names.index("Region Code"), names.index("PricePerUnit")
    body = [row for row in csv.reader(lines[at + 1:]) if len(row) > region_at
            and row[0] != "SKU"]
    rng = random.Random(seed)
    out = io.StringIO()
    out.write("\n".join(lines[: at + 1]) + "\n")
    writer = csv.writer(out, quoting=csv.QUOTE_ALL, lineterminator="\n")
    for k in range(max(1, rows // len(body))):
        for row in body:
            row = list(row)
            row[region_at] = f"{row[region_at]}{k or ''}"
            if row[price_at]:
                row[price_at] = f"{float(row[price_at]) * rng.uniform(0.9, 1.1):.10f}"
            writer.writerow(row)
    return out.getvalue().encode()


Inflater = Callable[[bytes, int], bytes]
INFLATERS: dict[str, Inflater] = {"vastai": inflate_vastai, "azure": inflate_azure,
                                  "aws": inflate_aws}


def inflater_for(source: str, content_type: str) -> Inflater | None:
    if source in INFLATERS:
        return INFLATERS[source]
    if "json" in content_type:
        return inflate_json_records
    if "csv" in content_type:
        return inflate_csv_rows
    return None
