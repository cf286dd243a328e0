"""Cross-checks as data: where a direct source and an aggregator price the same provider, their
rows line up (provider, canonical GPU, pricing kind), so `source_disagreement` lists only real
differences. Fixtures are ours (invented prices) in each source's format: RunPod GraphQL with
the cloud flags, a SkyPilot v5 catalog with runpod and lambda tables, an OpenComputePrices
CSV with SkyPilot-derived runpod rows; the direct Lambda rows are the bundled API example."""

from __future__ import annotations

import json
from collections.abc import Iterator
from datetime import UTC, datetime
from pathlib import Path

import duckdb
import pytest

from contract import RawCapture
from scrapers.registry import all_sources
from warehouse.append import SourceInfo, register_sources
from warehouse.connection import connect
from warehouse.ingest import ingest

WHEN = datetime(2026, 3, 1, tzinfo=UTC)
SOURCES = all_sources()

RUNPOD = {"data": {"gpuTypes": [
    {"id": "NVIDIA GeForce RTX 4090", "displayName": "RTX 4090", "memoryInGb": 24,
     "secureCloud": True, "communityCloud": True, "securePrice": 0.69, "communityPrice": 0.34,
     "secureSpotPrice": 0.49, "communitySpotPrice": 0.2},
    {"id": "NVIDIA H100 80GB HBM3", "displayName": "H100 SXM", "memoryInGb": 80,
     "secureCloud": True, "communityCloud": False, "securePrice": 2.69, "communityPrice": 0.5},
]}}
_GPU = "\"{'Gpus': [{'Name': '%s', 'Count': %s, 'MemoryInfo': {'SizeInMiB': %d}}]}\""
SKYPILOT = {"catalog": "v5", "clouds": {
    "runpod": "InstanceType,AcceleratorName,AcceleratorCount,vCPUs,MemoryGiB,GpuInfo,Region,"
              "SpotPrice,Price\n"
              "1x_RTX4090_SECURE,RTX4090,1.0,6.0,41.0,RTX4090,US,0.49,0.69\n"
              "1x_RTX4090_COMMUNITY,RTX4090,1.0,5.0,29.0,RTX4090,US,0.2,0.34\n"
              # a real difference: SkyPilot's H100 SXM price is 11 % above RunPod's own
              "1x_H100-SXM_SECURE,H100-SXM,1.0,16.0,125.0,H100-SXM,US,,2.99\n",
    "lambda": "InstanceType,AcceleratorName,AcceleratorCount,vCPUs,MemoryGiB,Price,Region,"
              "GpuInfo,SpotPrice\n"
              f"gpu_8x_h100_sxm5,H100,8.0,208.0,1800.0,23.92,us-east-3,{_GPU % ('H100', 8.0, 81920)},\n"  # noqa: E501
              f"gpu_1x_a10,A10,1.0,30.0,200.0,0.75,us-west-1,{_GPU % ('A10', 1.0, 24576)},\n"
              # a real difference: 2.00 vs 1.79 per GPU-hour
              f"gpu_8x_a100_80gb_sxm4,A100-80GB,8.0,240.0,1800.0,16.00,us-midwest-1,"
              f"{_GPU % ('A100-80GB', 8.0, 81920)},\n",
}}
OCP_HEADER = ("snapshot_date,snapshot_ts,source,provider,instance_type,instance_family,gpu_name,"
              "gpu_variant,gpu_memory_gb,gpu_count,gpu_interconnect,vcpus,ram_gb,storage_desc,"
              "network_desc,region,zone,country,geo_group,pricing_type,commitment_period,"
              "price_per_hour,price_per_gpu_hour,currency,price_unit,available,available_count,"
              "os,tenancy,pre_installed_sw,raw_extra\n")
OCP = OCP_HEADER + "".join(
    f"2026-03-01,2026-03-01T06:00:00Z,skypilot,runpod,{instance},,RTX4090,,24,1,,6,41,,,US,,,,"
    f"{kind},,{price},{price},USD,hour,True,,,,,\n"
    for instance, kind, price in (("1x_RTX4090_COMMUNITY", "on_demand", 0.34),
                                  ("1x_RTX4090_COMMUNITY", "spot", 0.2),
                                  ("1x_RTX4090_SECURE", "on_demand", 0.69)))


@pytest.fixture
def warehouse(tmp_path: Path) -> Iterator[duckdb.DuckDBPyConnection]:
    con = connect(tmp_path / "w.duckdb")
    names = ("runpod", "lambda", "skypilot-catalog", "opencomputeprices")
    register_sources(con, [SourceInfo(n, SOURCES[n].provider, SOURCES[n].kind, SOURCES[n].url,
                                      SOURCES[n].aggregator) for n in names])
    bodies = {"runpod": json.dumps(RUNPOD).encode(),
              "lambda": SOURCES["lambda"].example.read_bytes(),
              "skypilot-catalog": json.dumps(SKYPILOT).encode(),
              "opencomputeprices": OCP.encode()}
    for name, body in bodies.items():
        raw = RawCapture(name, SOURCES[name].url, WHEN, body)
        outcome = ingest(con, SOURCES[name], raw, run_id="n1", archive_root=tmp_path / "raw")
        assert outcome.status == "success", outcome.error
    yield con
    con.close()


def test_direct_and_aggregator_rows_share_names_and_pricing_kinds(
        warehouse: duckdb.DuckDBPyConnection) -> None:
    kinds = warehouse.execute(
        "SELECT source, gpu_model, list(DISTINCT pricing ORDER BY pricing) "
        "FROM latest_price_all_sources WHERE provider = 'runpod' AND gpu_model = 'RTX 4090' "
        "GROUP BY ALL ORDER BY source").fetchall()
    every = ["community", "community_spot", "on_demand", "spot"]
    assert kinds == [("opencomputeprices", "RTX 4090", ["community", "community_spot",
                                                        "on_demand"]),
                     ("runpod", "RTX 4090", every), ("skypilot-catalog", "RTX 4090", every)]


def test_source_disagreement_lists_only_the_real_differences(
        warehouse: duckdb.DuckDBPyConnection) -> None:
    rows = warehouse.execute(
        "SELECT provider, gpu_model, pricing, direct_usd_per_gpu_hour, aggregator_usd_per_gpu_hour "
        "FROM source_disagreement ORDER BY provider, gpu_model").fetchall()
    assert rows == [("lambda", "A100 80GB", "on_demand", 14.32 / 8, 2.0),
                    ("runpod", "H100 SXM", "on_demand", 2.69, 2.99)]
