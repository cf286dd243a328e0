"""OpenComputePrices aggregator: the example CSV (their 31-column header, rows written by hand
in the shapes the real collectors produce), the release tarball, provider attribution, skips,
slices, and the fetch URL."""

from __future__ import annotations

import io
import tarfile
from datetime import UTC, datetime

import httpx
import polars as pl
import pytest
import respx

from contract import HttpSettings, ParseError, RawCapture
from schemas.observation import to_observations, validate
from scrapers.opencomputeprices import SOURCE, provider_id

HEADER = SOURCE.example.read_text(encoding="utf-8").splitlines()[0]


def _raw(body: bytes) -> RawCapture:
    return RawCapture(source="opencomputeprices", url=SOURCE.url,
                      fetched_at=datetime.now(UTC), body=body)


def _observations(raw: RawCapture) -> pl.DataFrame:
    return to_observations(SOURCE.parse(raw), raw, "run")


def test_example_rows_attributed_and_priced() -> None:
    obs = _observations(SOURCE.example_capture())
    assert sorted(set(obs["provider"])) == [
        "akash", "jarvislabs", "lambda", "linode", "massedcompute", "runpod", "tensordock",
        "vultr"]
    rows = {(r["provider"], r["offering"]): r for r in obs.to_dicts()}
    # tensordock holds two snapshots: only the newest (2026-03-22, $0.39) is current.
    assert rows["tensordock", "geforcertx4090-pcie-24gb"]["price_usd_per_hour"] == 0.39
    assert obs.filter(provider="tensordock").height == 2
    lam = rows["lambda", "lambda_labs_H100"]
    assert (lam["pricing"], lam["price_usd_per_hour"]) == ("reserved", 2.29)
    linode = rows["linode", "g1-gpu-rtx6000-2"]
    assert (linode["gpu_model"], linode["gpu_count"]) == ("Quadro RTX 6000", 2.0)
    assert linode["price_usd_per_gpu_hour"] == 1.5
    mc = rows["massedcompute", "H100x2"]  # their memory is the 2-GPU total (160 GB)
    assert (mc["gpu_count"], mc["gpu_memory_gb"]) == (2.0, 80.0)
    assert rows["jarvislabs", "A100-40GB"]["gpu_model"] == "A100 40GB"
    assert rows["vultr", "vcg-l40s-32c-375g-96vram_preemptible"]["pricing"] == "spot"


def test_vultr_slices_become_fractional_gpus() -> None:
    obs = _observations(SOURCE.example_capture())
    row = obs.filter(offering="vcg-a100-3c-30g-20vram").row(0, named=True)
    assert row["gpu_count"] == 0.25  # 20 GB of an 80 GB A100
    assert row["gpu_model"] == "A100 80GB"
    assert row["price_usd_per_gpu_hour"] == pytest.approx(2.48)


def test_skipped_rows_never_become_prices() -> None:
    obs = _observations(SOURCE.example_capture())
    assert "ovh" not in set(obs["provider"])  # EUR
    assert "oracle" not in set(obs["provider"])  # gpu_count 0
    assert "novita" not in set(obs["provider"])  # per-token inference
    assert "gpu_x1" not in set(obs["offering"])  # no GPU name
    batch = validate(obs)
    assert batch.quarantined.height == 0 and batch.good.height == obs.height
    assert "unknown" not in set(batch.good["gpu_model"])


def test_release_tarball_reads_collector_files_not_the_master() -> None:
    example = SOURCE.example.read_bytes()
    buffer = io.BytesIO()
    with tarfile.open(fileobj=buffer, mode="w:gz") as archive:
        for name, data in (("./example.csv", example), ("./_master.csv", example)):
            info = tarfile.TarInfo(name)
            info.size = len(data)
            archive.addfile(info, io.BytesIO(data))
    from_tar = SOURCE.parse(_raw(buffer.getvalue()))
    assert from_tar.equals(SOURCE.parse(SOURCE.example_capture()))


def test_wrong_header_is_a_parse_error() -> None:
    with pytest.raises(ParseError, match="lacks columns"):
        SOURCE.parse(_raw(b"provider,price\nvultr,1\n"))
    with pytest.raises(ParseError, match=r"tar\.gz"):
        SOURCE.parse(_raw(b"\x1f\x8bnot really gzip"))


def test_unknown_pricing_type_is_skipped() -> None:
    row = ("2026-03-22,t,x,acme,i1,,H100,,80,1,,,,,,,,,,bid,,2.0,2.0,USD,hour,True,,,,,")
    assert SOURCE.parse(_raw(f"{HEADER}\n{row}\n".encode())).height == 0


@pytest.mark.parametrize(("name", "expected"), [
    ("lambda_labs", "lambda"), ("lambdalabs", "lambda"), ("google_cloud", "gcp"),
    ("oracle_cloud", "oracle"), ("runpod_sponsored", "runpod"), ("packet·ai", "packetai"),
    ("thunder_compute", "thundercompute"), ("do", "digitalocean"), ("Vultr", "vultr"),
])
def test_provider_ids(name: str, expected: str) -> None:
    assert provider_id(name) == expected


@respx.mock
def test_fetch_downloads_the_release_asset() -> None:
    route = respx.get(
        "http://127.0.0.1:9/thatkavish/OpenComputePrices/releases/download/latest-data/"
        "data.tar.gz").mock(return_value=httpx.Response(200, content=b"\x1f\x8b"))
    settings = HttpSettings(base_urls={"opencomputeprices": "http://127.0.0.1:9"})
    with httpx.Client() as client:
        raw = SOURCE.fetch(client, settings)
    assert route.called and raw.body == b"\x1f\x8b"
    assert SOURCE.aggregator and SOURCE.kind == "catalog"
