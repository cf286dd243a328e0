"""SkyPilot catalog history: a folder of dated snapshots read as captures of the live source.

Layout (as in the shared sample): `<cloud>/<YYYY-MM-DD>_vms.csv` plus an optional
`MANIFEST.csv` (cloud, snapshot_date, commit, commit_time_utc, ...).

- One capture per snapshot date holding every cloud, in the live fetch's own container format
  ({"clouds": {"<cloud>": "<vms.csv>"}}), because the warehouse takes a source's current
  prices from its newest capture. A cloud with no file on that date carries its newest earlier
  snapshot forward (that file was still the catalog then), so each capture is the whole
  catalog as it stood that day.
- Dated at the manifest's `commit_time_utc` (the moment the catalog was read in that state);
  without a manifest row, at 00:00 UTC of the snapshot date.

Pure file reading: landing the captures is flows.backfill's (the one backfill engine).
"""

from __future__ import annotations

import csv
import re
from dataclasses import dataclass
from datetime import UTC, date, datetime, time
from pathlib import Path

import orjson

from contract import RawCapture
from scrapers.base import Source
from scrapers.skypilot import CONTAINER_FORMAT

__all__ = ["Snapshot", "find_snapshots", "snapshot_capture"]

SNAPSHOT_NAME = re.compile(r"^(\d{4}-\d{2}-\d{2})_vms\.csv$")
CATALOG_TREE = "https://github.com/skypilot-org/skypilot-catalog/tree/{commit}/catalogs/v5/"


@dataclass(frozen=True, slots=True)
class Snapshot:
    """One catalog state: every cloud's vms.csv as it stood on `day`."""

    day: date
    observed_at: datetime
    files: dict[str, Path]  # cloud -> file (this day's, or the newest earlier one)
    commit: str | None


def _parse_time(text: str) -> datetime | None:
    text = text.strip()
    if not text:
        return None
    parsed = datetime.fromisoformat(text.replace("Z", "+00:00"))
    return parsed.astimezone(UTC) if parsed.tzinfo else parsed.replace(tzinfo=UTC)


def read_manifest(root: Path) -> dict[tuple[str, date], dict[str, str]]:
    path = root / "MANIFEST.csv"
    if not path.exists():
        return {}
    with path.open(newline="", encoding="utf-8") as handle:
        return {(row["cloud"].strip(), date.fromisoformat(row["snapshot_date"].strip())): row
                for row in csv.DictReader(handle)}


def snapshot_root(directory: Path) -> Path:
    """Accept the skypilot folder itself or a history folder that holds `skypilot/`."""
    nested = directory / "skypilot"
    return nested if nested.is_dir() and not any(directory.glob("*/*_vms.csv")) else directory


def find_snapshots(directory: Path) -> list[Snapshot]:
    """Every snapshot date in the folder, oldest first, each with the whole catalog of that day."""
    root = snapshot_root(directory)
    by_cloud: dict[str, dict[date, Path]] = {}
    for path in sorted(root.glob("*/*_vms.csv")):
        match = SNAPSHOT_NAME.match(path.name)
        if match:
            cloud = path.parent.name.lower()
            by_cloud.setdefault(cloud, {})[date.fromisoformat(match.group(1))] = path
    if not by_cloud:
        raise FileNotFoundError(f"no <cloud>/<YYYY-MM-DD>_vms.csv files under {root}")
    manifest = read_manifest(root)
    days = sorted({d for files in by_cloud.values() for d in files})
    snapshots = []
    for day in days:
        files: dict[str, Path] = {}
        times: list[datetime] = []
        commits: set[str] = set()
        for cloud, dated in sorted(by_cloud.items()):
            earlier = [d for d in dated if d <= day]
            if not earlier:
                continue  # this cloud's history starts later
            files[cloud] = dated[max(earlier)]
            row = manifest.get((cloud, day)) if max(earlier) == day else None
            if row:
                when = _parse_time(row.get("commit_time_utc", ""))
                if when:
                    times.append(when)
                if row.get("commit"):
                    commits.add(row["commit"].strip())
        observed = max(times) if times else datetime.combine(day, time(0), tzinfo=UTC)
        snapshots.append(Snapshot(day, observed, files,
                                  commits.pop() if len(commits) == 1 else None))
    return snapshots


def snapshot_capture(snapshot: Snapshot, source: Source) -> RawCapture:
    """The snapshot as the live source would have captured it that day."""
    clouds = {cloud: path.read_text(encoding="utf-8") for cloud, path in snapshot.files.items()}
    body = orjson.dumps(
        {"format": CONTAINER_FORMAT, "catalog": "v5", "clouds": clouds, "missing": {}},
        option=orjson.OPT_SORT_KEYS,
    )
    url = CATALOG_TREE.format(commit=snapshot.commit) if snapshot.commit else source.url
    return RawCapture(source=source.name, url=url, fetched_at=snapshot.observed_at, body=body,
                      content_type="application/json")
