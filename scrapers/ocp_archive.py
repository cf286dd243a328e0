"""OpenComputePrices archive files (CSV, optionally gzip or a tar.gz of CSVs) split by date.

The dataset keeps history: each row has its `snapshot_date` (and `snapshot_ts`). A monthly
archive therefore holds many days; the live parser (scrapers.opencomputeprices) reads only
each collector's newest day. To backfill, the rows are split into one CSV per snapshot_date
(same header, rows unchanged), each a capture observed on that day, which the live parser
then reads whole. Rows are spooled to one temporary file per day, so a large archive is
never held in memory at once.
"""

from __future__ import annotations

import csv
import gzip
import io
import tarfile
import tempfile
from collections.abc import Iterator
from datetime import UTC, date, datetime, time
from pathlib import PurePosixPath
from typing import IO

from contract import ParseError, RawCapture

__all__ = ["split_by_day"]

SPOOL_BYTES = 8 * 1024 * 1024


def _csv_streams(payload: IO[bytes], name: str) -> Iterator[tuple[str, IO[str]]]:
    head = payload.read(2)
    payload.seek(0)
    if head != b"\x1f\x8b":
        yield name, io.TextIOWrapper(payload, encoding="utf-8-sig", errors="replace",
                                     newline="")
        return
    try:
        with tarfile.open(fileobj=payload, mode="r:gz") as archive:
            for member in archive:
                base = PurePosixPath(member.name).name
                if member.isfile() and base.endswith(".csv") and not base.startswith("_"):
                    handle = archive.extractfile(member)
                    if handle is not None:
                        yield base, io.TextIOWrapper(handle, encoding="utf-8-sig",
                                                     errors="replace", newline="")
            return
    except tarfile.ReadError:
        payload.seek(0)  # a gzip-compressed CSV, not a tarball
    yield name, io.TextIOWrapper(gzip.GzipFile(fileobj=payload), encoding="utf-8-sig",
                                 errors="replace", newline="")


def _observed(day: str, stamps: set[str]) -> datetime:
    """The day's latest snapshot_ts, or 00:00 UTC of the day when none is readable."""
    best = datetime.combine(date.fromisoformat(day), time(), UTC)
    for stamp in stamps:
        try:
            moment = datetime.fromisoformat(stamp.replace("Z", "+00:00"))
        except ValueError:
            continue
        moment = moment.astimezone(UTC) if moment.tzinfo else moment.replace(tzinfo=UTC)
        if moment.date() == best.date() and moment > best:
            best = moment
    return best


def split_by_day(payload: IO[bytes], *, name: str, source: str,
                 url: str) -> Iterator[RawCapture]:
    """One RawCapture per snapshot_date in the archive (oldest first), header kept."""
    days: dict[str, tuple[IO[str], csv.DictWriter[str], set[str]]] = {}
    try:
        for member, stream in _csv_streams(payload, name):
            reader = csv.DictReader(stream)
            header = reader.fieldnames or []
            if "snapshot_date" not in header:
                raise ParseError(f"opencomputeprices: {member} has no snapshot_date column")
            for row in reader:
                day = (row.get("snapshot_date") or "").strip()[:10]
                try:
                    date.fromisoformat(day)
                except ValueError:
                    raise ParseError(f"opencomputeprices: {member}: snapshot_date "
                                     f"{day!r} is not a date") from None
                if day not in days:
                    spool: IO[str] = tempfile.SpooledTemporaryFile(  # noqa: SIM115
                        max_size=SPOOL_BYTES, mode="w+", encoding="utf-8", newline="")
                    writer = csv.DictWriter(spool, fieldnames=header, extrasaction="ignore")
                    writer.writeheader()
                    days[day] = (spool, writer, set())
                spool, writer, stamps = days[day]
                writer.writerow(row)
                if row.get("snapshot_ts"):
                    stamps.add(row["snapshot_ts"])
        for day in sorted(days):
            spool, _, stamps = days[day]
            spool.seek(0)
            body = spool.read().encode("utf-8")
            yield RawCapture(source=source, url=url, fetched_at=_observed(day, stamps),
                             body=body, content_type="text/csv")
    finally:
        for spool, _, _ in days.values():
            spool.close()
