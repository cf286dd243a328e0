"""Repo tables that give an instance type its GPUs and size (providers' price lists lack them)."""

from __future__ import annotations

import csv
from dataclasses import dataclass
from pathlib import Path


@dataclass(frozen=True, slots=True)
class HostSpec:
    gpu_name: str
    gpu_count: float
    gpu_memory_gb: float  # per GPU
    vcpus: float
    ram_gb: float


def load_host_specs(path: Path, key_column: str, *, lower_keys: bool = False
                    ) -> dict[str, HostSpec]:
    """`key_column` value -> HostSpec, from a CSV with gpu_name, gpu_count, gpu_memory_gb,
    vcpus and ram_gb columns."""
    with path.open(newline="", encoding="utf-8") as handle:
        return {
            (row[key_column].lower() if lower_keys else row[key_column]): HostSpec(
                gpu_name=row["gpu_name"], gpu_count=float(row["gpu_count"]),
                gpu_memory_gb=float(row["gpu_memory_gb"]), vcpus=float(row["vcpus"]),
                ram_gb=float(row["ram_gb"]),
            )
            for row in csv.DictReader(handle)
        }
