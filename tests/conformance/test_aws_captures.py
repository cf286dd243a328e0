"""ec2instances.info captures in ../shared/captures/aws (real generated JSON; AWS's own bulk CSV
and spot.js have no real capture, see tests/unit/test_aws*.py for their documented-format tests).

Figures checked by hand in the files: the 2017 subset has 12 objects; 93 (instance, region)
pairs have a linux on-demand price (cg1.4xlarge included via the repo table, since the file
says GPU: 0 for it and for g2). The 2026 China subset is priced in CNY: every region is cn-*,
so nothing is stored.
"""

from __future__ import annotations

from contract import RawCapture, now_utc
from schemas.observation import to_observations, validate
from scrapers import ec2instances
from tests.conftest import shared_file


def _parse(name: str):
    path = shared_file("captures", "aws", name)
    raw = RawCapture(source="ec2instances", url=ec2instances.URL, fetched_at=now_utc(),
                     body=path.read_bytes())
    return raw, ec2instances.parse(raw)


def test_2017_subset_rows_prices_and_models() -> None:
    raw, frame = _parse("ec2instances_info_instances_gpu_subset_2017-11-12.json")
    assert frame.height == 93
    prices = {(r["offering"], r["region"]): r["price_usd_per_hour"]
              for r in frame.iter_rows(named=True)}
    assert prices[("p3.2xlarge", "us-east-1")] == 3.06
    assert prices[("p3.2xlarge", "ap-northeast-1")] == 5.243
    assert prices[("p2.16xlarge", "us-gov-west-1")] == 17.28
    assert prices[("g2.2xlarge", "us-east-1")] == 0.65
    assert prices[("cg1.4xlarge", "eu-west-1")] == 2.36
    batch = validate(to_observations(frame, raw, "run"))
    assert batch.quarantined.height == 0
    assert set(batch.good["gpu_model"]) == {"K520", "K80", "M60", "Tesla M2050", "V100 16GB"}
    per_gpu = batch.good.filter(batch.good["offering"] == "p3.16xlarge")
    assert set(per_gpu.filter(per_gpu["region"] == "us-east-1")["price_usd_per_gpu_hour"]) == {3.06}


def test_china_subset_in_cny_yields_no_usd_rows() -> None:
    _, frame = _parse("ec2instances_info_instances_cn_gpu_subset_2026-01-21.json")
    assert frame.height == 0
