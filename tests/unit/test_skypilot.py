"""SkyPilot catalog parser: the bundled multi-cloud example, plain vms.csv files, quirks, fetch."""

from __future__ import annotations

from datetime import UTC, datetime

import httpx
import orjson
import polars as pl
import pytest
import respx

from contract import FetchError, HttpSettings, ParseError, RawCapture
from schemas.observation import to_observations, validate
from scrapers.skypilot import CLOUDS, SOURCE, fetch, infer_cloud, parse, parse_vms_csv

WHEN = datetime(2025, 6, 12, 3, 0, tzinfo=UTC)
LAMBDA_HEADER = ("InstanceType,AcceleratorName,AcceleratorCount,vCPUs,MemoryGiB,Price,Region,"
                 "GpuInfo,SpotPrice")
RUNPOD_HEADER = ("InstanceType,AcceleratorName,AcceleratorCount,vCPUs,MemoryGiB,GpuInfo,Region,"
                 "SpotPrice,Price")
GCP_HEADER = ("InstanceType,vCPUs,MemoryGiB,AcceleratorName,AcceleratorCount,GpuInfo,Region,"
              "AvailabilityZone,Price,SpotPrice")
AWS_HEADER = ("InstanceType,AcceleratorName,AcceleratorCount,vCPUs,MemoryGiB,GpuInfo,Price,"
              "SpotPrice,Region,AvailabilityZone")


def capture(body: bytes) -> RawCapture:
    return RawCapture(source="skypilot", url=SOURCE.url, fetched_at=WHEN, body=body)


def lambda_gpu_info(name: str, count: float, mib: int) -> str:
    return (f"\"{{'Gpus': [{{'Name': '{name}', 'Manufacturer': 'NVIDIA', 'Count': {count}, "
            f"'MemoryInfo': {{'SizeInMiB': {mib}}}}}], 'TotalGpuMemoryInMiB': {mib}}}\"")


@pytest.fixture(scope="module")
def example() -> pl.DataFrame:
    return SOURCE.parse(SOURCE.example_capture(WHEN))


def row(frame: pl.DataFrame, offering: str, pricing: str = "on_demand",
        region: str | None = None) -> dict[str, object]:
    hit = frame.filter((pl.col("offering") == offering) & (pl.col("pricing") == pricing))
    if region:
        hit = hit.filter(pl.col("region") == region)
    assert hit.height == 1, f"{offering}/{pricing}/{region}: {hit.height} rows"
    return hit.row(0, named=True)


def test_example_covers_six_clouds_attributed_to_real_providers(example: pl.DataFrame) -> None:
    counts = dict(example.group_by("provider").len().iter_rows())
    assert counts == {"lambda": 7, "runpod": 10, "aws": 16, "azure": 10, "gcp": 12,
                      "paperspace": 8}
    assert set(CLOUDS) == set(counts)


def test_example_validates_with_no_unknown_gpu(example: pl.DataFrame) -> None:
    batch = validate(to_observations(example, SOURCE.example_capture(WHEN), "t"))
    assert batch.quarantined.height == 0 and batch.good.height == 63
    assert "unknown" not in batch.good["gpu_model"].to_list()
    models = {(r["provider"], r["offering"]): r["gpu_model"]
              for r in batch.good.iter_rows(named=True)}
    assert models[("lambda", "gpu_8x_h100_sxm5")] == "H100 SXM"  # SXM from the instance name
    assert models[("lambda", "gpu_1x_h100_pcie")] == "H100 PCIe"
    assert models[("aws", "p5.48xlarge")] == "H100 SXM"  # p5/a3/ND H100 are SXM parts
    assert models[("gcp", "a3-highgpu-8g")] == "H100 SXM"
    assert models[("aws", "g5g.xlarge")] == "T4"  # T4g
    assert models[("paperspace", "RTX4000")] == "Quadro RTX 4000"
    assert models[("runpod", "1x_RTX6000-Ada_COMMUNITY")] == "RTX 6000 Ada"


def test_whole_instance_price_and_per_gpu_memory(example: pl.DataFrame) -> None:
    a100 = row(example, "gpu_8x_a100_80gb_sxm4")
    assert a100["price_usd_per_hour"] == 14.32 and a100["gpu_count"] == 8
    assert a100["gpu_memory_gb"] == 80.0
    p4d = row(example, "p4d.24xlarge")  # aws GpuInfo: SizeInMiB per GPU, Total = 8x
    assert p4d["gpu_memory_gb"] == 40.0 and p4d["vcpus"] == 96 and p4d["ram_gb"] == 1152
    assert row(example, "1x_H100_SECURE")["gpu_memory_gb"] is None  # runpod GpuInfo = a name


def test_availability_zones_collapse_to_one_row_per_region(example: pl.DataFrame) -> None:
    assert row(example, "p5.48xlarge", "on_demand")["price_usd_per_hour"] == 55.04
    assert row(example, "p5.48xlarge", "spot")["price_usd_per_hour"] == 29.8  # cheaper zone
    assert row(example, "g5.xlarge", "spot", "us-east-1")["price_usd_per_hour"] == 0.4012
    assert row(example, "g5.xlarge", "spot", "us-west-2")["price_usd_per_hour"] == 0.3846
    t4 = example.filter(pl.col("offering") == "T4 x1 (GPU only)")
    assert t4.height == 2  # two zones x (on_demand, spot) -> one row each


def test_gcp_gpu_rows_are_gpu_only_and_host_rows_skipped(example: pl.DataFrame) -> None:
    gcp = example.filter(pl.col("provider") == "gcp")
    gpu_only = gcp.filter(pl.col("gpu_only"))
    assert sorted(set(gpu_only["offering"])) == [
        "A100 x1 (GPU only)", "L4 x1 (GPU only)", "T4 x1 (GPU only)", "T4 x4 (GPU only)",
        "V100 x1 (GPU only)"]
    assert row(example, "T4 x4 (GPU only)")["price_usd_per_hour"] == 1.4
    assert not row(example, "a3-highgpu-8g")["gpu_only"]
    assert "n1-standard-8" not in gcp["offering"].to_list()
    assert not gcp.filter(pl.col("offering").str.contains("tpu")).height  # TPUs skipped


def test_runpod_tiers_and_spot(example: pl.DataFrame) -> None:
    assert row(example, "1x_RTX4090_SECURE", "on_demand")["price_usd_per_hour"] == 0.69
    assert row(example, "1x_RTX4090_SECURE", "spot")["price_usd_per_hour"] == 0.49
    assert row(example, "1x_RTX4090_COMMUNITY", "community")["price_usd_per_hour"] == 0.34
    assert row(example, "1x_RTX4090_COMMUNITY", "community_spot")["price_usd_per_hour"] == 0.2
    community = example.filter(pl.col("offering").str.ends_with("_COMMUNITY"))
    assert set(community["pricing"]) == {"community", "community_spot"}


def test_azure_quirks(example: pl.DataFrame) -> None:
    azure = example.filter(pl.col("provider") == "azure")
    assert "Standard_NC48ads_A100_v4" not in azure["offering"].to_list()  # empty Price
    assert "Standard_D2s_v3" not in azure["offering"].to_list()  # no accelerator
    slice_ = row(example, "Standard_NV6ads_A10_v5")  # a sixth of an A10, listed as 1
    assert slice_["gpu_count"] == pytest.approx(1 / 6)
    assert not azure.filter(pl.col("offering") == "Standard_ND96asr_v4")["pricing"].str.contains(
        "spot").any()  # empty SpotPrice -> no spot row


def test_plain_csv_cloud_is_recognised_from_content() -> None:
    lam = (f"{LAMBDA_HEADER}\ngpu_1x_a10,A10,1.0,30.0,200.0,0.75,us-west-1,"
           f"{lambda_gpu_info('A10', 1.0, 24576)},\n")
    run = f"{RUNPOD_HEADER}\n1x_L4_SECURE,L4,1.0,12.0,50.0,L4,US,,0.44\n"
    gcp = f"{GCP_HEADER}\n,,,T4,1.0,T4,us-central1,us-central1-a,0.35,0.14\n"
    gcp_old_order = f"{AWS_HEADER}\n,T4,1.0,,,T4,0.35,0.14,us-central1,us-central1-a\n"
    aws = f"{AWS_HEADER}\ng4dn.xlarge,T4,1.0,4.0,16.0,,0.526,0.2211,us-east-1,use1-az1\n"
    for text, cloud in ((lam, "lambda"), (run, "runpod"), (gcp, "gcp"),
                        (gcp_old_order, "gcp"), (aws, "aws")):
        frame = parse(capture(text.encode()))
        assert set(frame["provider"]) == {cloud}, text
    # Same rows whichever column order the file uses.
    assert parse(capture(gcp.encode())).equals(parse(capture(gcp_old_order.encode())))


def test_parse_vms_csv_takes_the_cloud_from_the_caller() -> None:
    text = f"{RUNPOD_HEADER}\n1x_L4_SECURE,L4,1.0,12.0,50.0,L4,US,,0.44\n"
    assert parse_vms_csv(text, "RunPod")["provider"].to_list() == ["runpod"]


def test_gpu_info_size_that_is_a_total_is_divided_by_the_count() -> None:
    # 8x V100 whose SizeInMiB holds all eight GPUs (131072 MiB = 8 x 16 GiB).
    text = (f"{LAMBDA_HEADER}\n"
            "gpu_8x_v100,V100,8.0,92.0,448.0,4.4,us-east-1,"
            f"{lambda_gpu_info('V100', 8.0, 131072)},\n"
            f"gpu_8x_a100_80gb_sxm4,A100-80GB,8.0,240.0,1800.0,14.32,us-east-1,"
            f"{lambda_gpu_info('A100-80GB', 8.0, 81920)},\n")
    frame = parse_vms_csv(text, "lambda")
    assert frame["gpu_memory_gb"].to_list() == [16.0, 80.0]


def test_non_gpu_accelerators_and_missing_prices_are_skipped() -> None:
    text = (f"{AWS_HEADER}\n"
            "f1.2xlarge,Xilinx VU9P FPGA,1.0,8.0,122.0,,1.65,0.5,us-east-1,use1-az1\n"
            "m5.large,,,2.0,8.0,,0.096,0.03,us-east-1,use1-az1\n"
            "g4dn.xlarge,T4,1.0,4.0,16.0,,,0.2,us-east-1,use1-az1\n"
            "inf2.xlarge,Inferentia2,1.0,4.0,16.0,,0.7582,,us-east-1,use1-az1\n")
    frame = parse_vms_csv(text, "aws")
    assert frame["offering"].to_list() == ["inf2.xlarge"]


def test_an_empty_gpu_catalog_parses_to_zero_rows() -> None:
    assert parse_vms_csv(f"{RUNPOD_HEADER}\n", "runpod").height == 0


@pytest.mark.parametrize("body", [
    b"<html>404: Not Found</html>",
    b"name,price\nfoo,1\n",
    b'{"offers": []}',
    b'{"clouds": {"lambda": 3}}',
])
def test_wrong_payloads_raise_parse_error(body: bytes) -> None:
    with pytest.raises(ParseError):
        parse(capture(body))


def test_unrecognisable_plain_csv_asks_for_the_cloud() -> None:
    text = "InstanceType,AcceleratorName,AcceleratorCount,Price,Region\nbox,T4,1,0.3,xx\n"
    with pytest.raises(ParseError, match="which cloud"):
        parse(capture(text.encode()))
    assert infer_cloud(RUNPOD_HEADER.split(","), []) == "runpod"  # header order as last resort


@respx.mock
def test_fetch_reads_every_cloud_into_one_container() -> None:
    base = "https://raw.githubusercontent.com/skypilot-org/skypilot-catalog/master/catalogs/v5"
    csv_text = f"{RUNPOD_HEADER}\n1x_L4_SECURE,L4,1.0,12.0,50.0,L4,US,,0.44\n"
    routes = {cloud: respx.get(f"{base}/{cloud}/vms.csv").mock(
        return_value=httpx.Response(200, text=csv_text)) for cloud in CLOUDS}
    routes["paperspace"].mock(return_value=httpx.Response(404))
    with httpx.Client() as client:
        raw = fetch(client, HttpSettings())
    assert all(route.call_count == 1 for route in routes.values())
    container = orjson.loads(raw.body)
    assert sorted(container["clouds"]) == sorted(set(CLOUDS) - {"paperspace"})
    assert container["missing"] == {"paperspace": "HTTP 404"}
    frame = parse(raw)
    assert sorted(frame["provider"]) == sorted(set(CLOUDS) - {"paperspace"})
    # Same catalog text -> same bytes -> same capture_id (so a replay is 'unchanged').
    with httpx.Client() as client:
        assert fetch(client, HttpSettings()).capture_id == raw.capture_id


@respx.mock
def test_fetch_fails_on_a_transient_error_so_the_flow_retries() -> None:
    respx.get(url__regex=r".*/vms\.csv").mock(return_value=httpx.Response(503))
    with httpx.Client() as client, pytest.raises(FetchError) as error:
        fetch(client, HttpSettings(base_urls={"skypilot-catalog": "http://127.0.0.1:9"}))
    assert error.value.transient and "127.0.0.1:9" in error.value.url


def test_azure_h100_form_factor_from_the_size_name() -> None:
    z = ("InstanceType,AcceleratorName,AcceleratorCount,vCPUs,MemoryGiB,GpuInfo,Price,SpotPrice,"
         "Region,Generation\n"
         "Standard_NC40ads_H100_v5,H100,1.0,40.0,320.0,H100,6.98,,eastus,V2\n"
         "Standard_ND96isr_H100_v5,H100,8.0,96.0,1900.0,H100,98.32,,eastus,V2\n")
    frame = parse(capture(z.encode()))
    batch = validate(to_observations(frame, capture(z.encode()), "t"))
    assert batch.good["gpu_model"].to_list() == ["H100 NVL", "H100 SXM"]
