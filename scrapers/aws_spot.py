"""AWS EC2 spot prices from the public feed behind the spot pricing page (no key).

Facts (../shared/captures/SOURCES.md §5): `https://spot-price.s3.amazonaws.com/spot.js` is JSONP,
`callback({...})`, with `config.regions[].instanceTypes[].sizes[].valueColumns[]`, each column
`{"name": "linux"|"mswin", "prices": {"USD": "0.1234"}}` in USD per instance-hour. Older regions
carry legacy names ("us-east" is us-east-1, "apac-tokyo" is ap-northeast-1); newer ones their
code. Unavailable prices read "N/A*" and are skipped. Only GPU instance types (the families of
aws_instance_gpus.csv) and only Linux prices are kept. Whether the feed is still current was not
verified (no real capture exists); when it is gone, fetch fails and the on-demand `aws` source
stands alone.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from contract import HttpSettings, ParseError, RawCapture, rows_frame
from scrapers._json import as_float, load_json
from scrapers.aws import InstanceGpus, gpu_families, instance_gpus
from scrapers.base import EXAMPLES_DIR, SourceDef
from scrapers.http import request

if TYPE_CHECKING:
    import httpx
    import polars as pl

URL = "https://spot-price.s3.amazonaws.com/spot.js"

LEGACY_REGIONS: dict[str, str] = {
    "us-east": "us-east-1",
    "us-west": "us-west-1",
    "eu-ireland": "eu-west-1",
    "apac-sin": "ap-southeast-1",
    "apac-syd": "ap-southeast-2",
    "apac-tokyo": "ap-northeast-1",
}


def fetch(client: httpx.Client, settings: HttpSettings) -> RawCapture:
    url = settings.base_url("aws-spot", "https://spot-price.s3.amazonaws.com") + "/spot.js"
    return request(client, settings, "aws-spot", "GET", url,
                   headers={"Accept": "application/javascript, application/json"})


def _unwrap_jsonp(body: bytes) -> bytes:
    """`callback({...});` -> `{...}`; a plain JSON body passes through."""
    text = body.strip()
    if text[:1] in (b"{", b"["):
        return text
    start, end = text.find(b"("), text.rfind(b")")
    if start < 0 or end <= start:
        raise ParseError("aws-spot: expected JSONP callback({...}) or JSON")
    return text[start + 1:end]


def _specs(size: str) -> InstanceGpus | None:
    return instance_gpus().get(size)


def parse(raw: RawCapture) -> pl.DataFrame:
    payload = load_json(_unwrap_jsonp(raw.body), what="aws-spot")
    config = payload.get("config") if isinstance(payload, dict) else None
    regions = config.get("regions") if isinstance(config, dict) else None
    if not isinstance(regions, list):
        raise ParseError("aws-spot: expected config.regions[] in the spot feed")
    families = gpu_families()
    rows: list[dict[str, Any]] = []
    for region in regions:
        if not isinstance(region, dict):
            continue
        name = str(region.get("region") or "unknown")
        region_code = LEGACY_REGIONS.get(name, name)
        for group in region.get("instanceTypes") or []:
            for size in (group or {}).get("sizes") or []:
                instance_type = str((size or {}).get("size") or "")
                if instance_type.split(".", 1)[0] not in families:
                    continue
                specs = _specs(instance_type)
                linux = next((c for c in size.get("valueColumns") or []
                              if isinstance(c, dict) and c.get("name") == "linux"), None)
                price = as_float(((linux or {}).get("prices") or {}).get("USD"))
                if specs is None or not price or price <= 0:
                    continue  # "N/A*" (not offered) or a size without GPU specs
                rows.append({
                    "provider": "aws", "offering": instance_type, "gpu_name": specs.gpu_name,
                    "gpu_count": specs.gpu_count, "gpu_memory_gb": specs.gpu_memory_gb,
                    "vcpus": specs.vcpus, "ram_gb": specs.ram_gb, "region": region_code,
                    "pricing": "spot", "price_usd_per_hour": price, "billing_increment_s": 1,
                    "available": None, "gpu_only": False, "monthly_fee_usd": None,
                })
    return rows_frame(rows)


SOURCE = SourceDef(
    name="aws-spot",
    provider="aws",
    kind="api",
    url=URL,
    example=EXAMPLES_DIR / "aws-spot" / "spot_2025-06-16.js",
    example_as_of="2025-06-16",
    fetch_fn=fetch,
    parse_fn=parse,
)
