"""Small SkyPilot catalog snapshot folders, written by the tests in the real vms.csv format."""

from __future__ import annotations

import hashlib
from pathlib import Path

# Column orders differ per cloud (README of the shared history): lambda, then runpod.
LAMBDA_HEADER = ("InstanceType,AcceleratorName,AcceleratorCount,vCPUs,MemoryGiB,Price,Region,"
                 "GpuInfo,SpotPrice")
RUNPOD_HEADER = ("InstanceType,AcceleratorName,AcceleratorCount,vCPUs,MemoryGiB,GpuInfo,Region,"
                 "SpotPrice,Price")
LAMBDA_REGIONS = ("us-east-1", "us-west-1")
RUNPOD_REGIONS = ("CA", "US")


def _gpu_info(name: str, count: float, mib: int) -> str:
    return (f"\"{{'Gpus': [{{'Name': '{name}', 'Manufacturer': 'NVIDIA', 'Count': {count}, "
            f"'MemoryInfo': {{'SizeInMiB': {mib}}}}}], 'TotalGpuMemoryInMiB': {mib}}}\"")


def lambda_csv(h100: float = 2.49, a100_8x: float = 14.32) -> str:
    lines = [LAMBDA_HEADER]
    for region in LAMBDA_REGIONS:
        lines.append(f"gpu_1x_h100_pcie,H100,1.0,26.0,200.0,{h100},{region},"
                     f"{_gpu_info('H100', 1.0, 81920)},")
        lines.append(f"gpu_8x_a100_80gb_sxm4,A100-80GB,8.0,240.0,1800.0,{a100_8x},{region},"
                     f"{_gpu_info('A100-80GB', 8.0, 81920)},")
    return "\n".join(lines) + "\n"


def runpod_csv(a100: float = 1.99, rtx4090: float = 0.74) -> str:
    lines = [RUNPOD_HEADER]
    for region in RUNPOD_REGIONS:
        lines.append(f"1x_A100-80GB_SECURE,A100-80GB,1.0,8.0,80.0,A100-80GB,{region},,{a100}")
        lines.append(f"1x_RTX4090_SECURE,RTX4090,1.0,16.0,62.0,RTX4090,{region},,{rtx4090}")
    return "\n".join(lines) + "\n"


def write_snapshot(root: Path, cloud: str, day: str, text: str,
                   commit_time: str | None = None) -> Path:
    path = root / cloud / f"{day}_vms.csv"
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(text, encoding="utf-8")
    if commit_time:
        manifest = root / "MANIFEST.csv"
        if not manifest.exists():
            manifest.write_text("cloud,snapshot_date,commit,path_in_repo,rows,commit_time_utc,"
                                "file_last_changed_commit,file_last_changed_date,"
                                "rows_in_full_file\n", encoding="utf-8")
        rows = text.count("\n") - 1
        commit = hashlib.sha1(f"{cloud}{day}".encode()).hexdigest()
        with manifest.open("a", encoding="utf-8") as handle:
            handle.write(f"{cloud},{day},{commit},catalogs/v5/{cloud}/vms.csv,{rows},"
                         f"{commit_time},{commit},{day},{rows}\n")
    return path


def moving_history(root: Path) -> Path:
    """Three catalog states: lambda's H100 drops on 02-01, runpod's A100 80GB on 03-01.

    runpod has no file on 02-01 and lambda none on 03-01: their earlier files carry forward.
    """
    write_snapshot(root, "lambda", "2024-01-01", lambda_csv(), "2024-01-01T21:00:00Z")
    write_snapshot(root, "runpod", "2024-01-01", runpod_csv(), "2024-01-01T21:00:00Z")
    write_snapshot(root, "lambda", "2024-02-01", lambda_csv(h100=1.99), "2024-02-01T21:00:00Z")
    write_snapshot(root, "runpod", "2024-03-01", runpod_csv(a100=1.79), "2024-03-01T21:00:00Z")
    return root
