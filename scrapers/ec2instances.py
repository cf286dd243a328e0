"""AWS EC2 GPU prices as published by ec2instances.info (instances.vantage.sh): a derived catalog.

The site's generated JSON is a list of instance objects. Facts (../shared/captures/
MORE_SOURCES.md, AWS section, and the two real files there):
- `pricing[region][os]` holds `ondemand` (a string, per instance-hour) and a `reserved` map; the
  2017 layout also has a bare number under `ebs`. Only `linux` on-demand is kept here.
- Modern objects carry `GPU` (count), `GPU_model` and `GPU_memory` (total GB of the instance);
  the 2017 layout has only `GPU` (and 0 for g2/cg1). The repo's aws_instance_gpus.csv wins where it
  knows the type, so this source and `aws` describe an instance the same way.
- The China file (`instances-cn.json`, regions cn-*) is priced in CNY with nothing in the payload
  saying so: cn-* regions are skipped, never stored as USD.

It re-publishes AWS's own prices, so the SourceDef is marked `aggregator=True`: the direct `aws`
source wins in latest_price and the disagreement view cross-checks the two.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from contract import HttpSettings, ParseError, RawCapture, rows_frame
from scrapers._json import as_float, load_json
from scrapers.aws import InstanceGpus, instance_gpus
from scrapers.base import EXAMPLES_DIR, SourceDef
from scrapers.http import request

if TYPE_CHECKING:
    import httpx
    import polars as pl

URL = "https://instances.vantage.sh/instances.json"
NON_USD_REGION_PREFIXES = ("cn-",)  # China regions are priced in CNY


def fetch(client: httpx.Client, settings: HttpSettings) -> RawCapture:
    url = settings.base_url("ec2instances", "https://instances.vantage.sh") + "/instances.json"
    return request(client, settings, "ec2instances", "GET", url,
                   headers={"Accept": "application/json"})


def _instances(payload: Any) -> list[dict[str, Any]]:
    if isinstance(payload, dict):
        payload = payload.get("instances")
    if not isinstance(payload, list) or not all(isinstance(i, dict) for i in payload):
        raise ParseError("ec2instances: expected a JSON list of instance objects")
    if payload and not any("instance_type" in i and "pricing" in i for i in payload):
        raise ParseError("ec2instances: objects lack instance_type/pricing (layout changed?)")
    return payload


def _specs(instance: dict[str, Any]) -> InstanceGpus | None:
    instance_type = str(instance.get("instance_type") or "")
    known = instance_gpus().get(instance_type)
    if known:
        return known
    count = as_float(instance.get("GPU"))
    model = instance.get("GPU_model")
    if not count or count <= 0 or not isinstance(model, str) or not model:
        return None
    total = as_float(instance.get("GPU_memory"))
    return InstanceGpus(gpu_name=model, gpu_count=count,
                        gpu_memory_gb=total / count if total else 0.0,
                        vcpus=as_float(instance.get("vCPU")) or 0.0,
                        ram_gb=as_float(instance.get("memory")) or 0.0)


def parse(raw: RawCapture) -> pl.DataFrame:
    rows: list[dict[str, Any]] = []
    for instance in _instances(load_json(raw.body, what="ec2instances")):
        specs = _specs(instance)
        pricing = instance.get("pricing")
        if specs is None or not isinstance(pricing, dict):
            continue
        for region, by_os in pricing.items():
            if str(region).startswith(NON_USD_REGION_PREFIXES) or not isinstance(by_os, dict):
                continue
            linux = by_os.get("linux")
            price = as_float(linux.get("ondemand")) if isinstance(linux, dict) else None
            if not price or price <= 0:
                continue
            rows.append({
                "provider": "aws", "offering": str(instance["instance_type"]),
                "gpu_name": specs.gpu_name, "gpu_count": specs.gpu_count,
                "gpu_memory_gb": specs.gpu_memory_gb or None, "vcpus": specs.vcpus or None,
                "ram_gb": specs.ram_gb or None, "region": str(region), "pricing": "on_demand",
                "price_usd_per_hour": price, "billing_increment_s": 1, "available": None,
                "gpu_only": False, "monthly_fee_usd": None,
            })
    return rows_frame(rows)


SOURCE = SourceDef(
    name="ec2instances",
    provider="aws",
    kind="catalog",
    url=URL,
    example=EXAMPLES_DIR / "ec2instances" / "instances_gpu_2025-06-16.json",
    example_as_of="2025-06-16",
    fetch_fn=fetch,
    parse_fn=parse,
    aggregator=True,
)
