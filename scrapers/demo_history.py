"""The dated snapshots bundled for the demo (scrapers/examples/HISTORY.toml), as captures.

Each entry names its source, its file (ours, in the layout the source's parser reads), the
date its prices are from (`as_of`) and where they come from (`values_from`). `replay_dates`
places them before today, one week apart per source (newest first), so a report on any day
has a week-ago state and a chart with lines; the real date travels with every capture note.
"""

from __future__ import annotations

import tomllib
from dataclasses import dataclass
from datetime import UTC, date, datetime, time, timedelta
from pathlib import Path

from contract import RawCapture
from scrapers.base import EXAMPLES_DIR, Source, _content_type

__all__ = ["MANIFEST", "DemoSnapshot", "load_snapshots", "replay_dates", "snapshot_capture"]

MANIFEST = EXAMPLES_DIR / "HISTORY.toml"


@dataclass(frozen=True, slots=True)
class DemoSnapshot:
    source: str
    file: Path
    as_of: date
    values_from: str


def load_snapshots(manifest: Path = MANIFEST) -> list[DemoSnapshot]:
    data = tomllib.loads(manifest.read_text(encoding="utf-8"))
    return [DemoSnapshot(str(e["source"]), manifest.parent / str(e["file"]),
                         date.fromisoformat(str(e["as_of"])), str(e["values_from"]))
            for e in data.get("snapshot", [])]


def replay_dates(snapshots: list[DemoSnapshot], today: date) -> dict[DemoSnapshot, datetime]:
    """Per source, the newest snapshot at 00:00 UTC a week before `today`, the next two weeks
    before, and so on (the bundled example itself is the source's state today)."""
    placed: dict[DemoSnapshot, datetime] = {}
    by_source: dict[str, list[DemoSnapshot]] = {}
    for snapshot in snapshots:
        by_source.setdefault(snapshot.source, []).append(snapshot)
    start = datetime.combine(today, time(), UTC)
    for group in by_source.values():
        for weeks, snapshot in enumerate(sorted(group, key=lambda s: s.as_of, reverse=True), 1):
            placed[snapshot] = start - timedelta(weeks=weeks)
    return placed


def snapshot_capture(snapshot: DemoSnapshot, source: Source, at: datetime) -> RawCapture:
    return RawCapture(source=source.name, url=source.url, fetched_at=at,
                      body=snapshot.file.read_bytes(), content_type=_content_type(snapshot.file))
