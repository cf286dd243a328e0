"""The SkyPilot catalog's git history as dated captures (a local clone, read with plain git).

SkyPilot's bots commit every cloud's `catalogs/v<N>/<cloud>/vms.csv` to git several times a
day, so the clone *is* years of price history. This module walks it:

- `git log --reverse --first-parent --raw` lists, commit by commit (oldest first), which
  `vms.csv` blobs changed; the output is read line by line, so memory does not grow with the
  number of commits.
- After each commit that changed a chosen cloud's file, the catalog's state is each chosen
  cloud's current blob: of the schema version the live source reads (v5) while it exists,
  else the newest version present. A state is one capture, dated at the commit time (UTC),
  in the live fetch's own container format, so history and nightly captures parse the same
  way and the warehouse's "newest capture = current prices" rule sees the whole catalog.
- Blob contents come from one `git cat-file --batch` process, one state at a time.

Nothing here writes anywhere; flows/backfill.py lands the captures.
"""

from __future__ import annotations

import re
import subprocess
import tempfile
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from datetime import UTC, datetime
from pathlib import Path

import orjson

from contract import RawCapture
from scrapers.base import Source
from scrapers.skypilot import CLOUDS, CONTAINER_FORMAT

__all__ = ["BlobReader", "CatalogState", "blob_reader", "catalog_states", "state_capture"]

VMS_PATH = re.compile(r"^catalogs/(v\d+)/([^/]+)/vms\.csv$")
PREFERRED_VERSION = "v5"  # what scrapers.skypilot reads live
TREE_URL = "https://github.com/skypilot-org/skypilot-catalog/tree/{commit}/catalogs"
_NULL_BLOB = "0" * 40


@dataclass(frozen=True, slots=True)
class CatalogState:
    commit: str
    committed_at: datetime  # UTC
    files: tuple[tuple[str, str, str], ...]  # (cloud, version, blob), sorted by cloud


def _git(repo: Path, *args: str) -> list[str]:
    return ["git", "-C", str(repo), "-c", "core.quotepath=off", *args]


def _pick(blobs: dict[tuple[str, str], str], clouds: tuple[str, ...]) -> tuple[
        tuple[str, str, str], ...]:
    files = []
    for cloud in clouds:
        versions = {v: b for (v, c), b in blobs.items() if c == cloud}
        if not versions:
            continue
        version = PREFERRED_VERSION if PREFERRED_VERSION in versions else max(
            versions, key=lambda v: int(v[1:]))
        files.append((cloud, version, versions[version]))
    return tuple(files)


def catalog_states(repo: Path, clouds: tuple[str, ...] = CLOUDS) -> Iterator[CatalogState]:
    """Each distinct catalog state on the first-parent history, oldest first (streamed)."""
    command = _git(repo, "log", "--reverse", "--first-parent", "--diff-merges=first-parent",
                   "--raw", "--no-abbrev", "--no-renames", "--format=%x00%H %ct", "--",
                   ":(glob)catalogs/v*/*/vms.csv")
    blobs: dict[tuple[str, str], str] = {}
    shown: tuple[tuple[str, str, str], ...] = ()
    commit: tuple[str, datetime] | None = None

    def state() -> CatalogState | None:
        nonlocal shown
        if commit is None:
            return None
        files = _pick(blobs, clouds)
        if not files or files == shown:
            return None
        shown = files
        return CatalogState(commit[0], commit[1], files)

    with tempfile.TemporaryFile() as errors, subprocess.Popen(
            command, stdout=subprocess.PIPE, stderr=errors, text=True,
            encoding="utf-8") as process:
        assert process.stdout is not None
        for line in process.stdout:
            line = line.rstrip("\n")
            if line.startswith("\x00"):
                done = state()
                if done:
                    yield done
                sha, _, stamp = line[1:].partition(" ")
                commit = (sha, datetime.fromtimestamp(int(stamp), UTC))
            elif line.startswith(":"):
                meta, _, path = line.partition("\t")
                match = VMS_PATH.match(path)
                if not match:
                    continue
                new_blob = meta.split()[3]
                key = (match.group(1), match.group(2).lower())
                if new_blob == _NULL_BLOB:
                    blobs.pop(key, None)  # the file was deleted in this commit
                else:
                    blobs[key] = new_blob
        done = state()
        if done:
            yield done
        if process.wait() != 0:
            errors.seek(0)
            message = errors.read().decode("utf-8", errors="replace").strip()[:300]
            raise RuntimeError(f"git log failed in {repo}: {message}")


class BlobReader:
    """Blob contents by id through one long-lived `git cat-file --batch`."""

    def __init__(self, process: subprocess.Popen[bytes]) -> None:
        self._process = process

    def read(self, blob: str) -> bytes:
        stdin, stdout = self._process.stdin, self._process.stdout
        assert stdin is not None and stdout is not None
        stdin.write(blob.encode() + b"\n")
        stdin.flush()
        header = stdout.readline().split()
        if len(header) != 3 or header[1] != b"blob":
            raise RuntimeError(f"git cat-file: no blob {blob}")
        body = stdout.read(int(header[2]))
        stdout.read(1)  # the newline after the body
        return body


@contextmanager
def blob_reader(repo: Path) -> Iterator[BlobReader]:
    with subprocess.Popen(_git(repo, "cat-file", "--batch"), stdin=subprocess.PIPE,
                          stdout=subprocess.PIPE) as process:
        try:
            yield BlobReader(process)
        finally:
            assert process.stdin is not None
            process.stdin.close()


def state_capture(state: CatalogState, reader: BlobReader, source: Source) -> RawCapture:
    """The catalog state as the live source would have captured it at the commit's time."""
    clouds = {cloud: reader.read(blob).decode("utf-8", errors="replace")
              for cloud, _, blob in state.files}
    versions = sorted({version for _, version, _ in state.files})
    body = orjson.dumps({"format": CONTAINER_FORMAT, "catalog": ",".join(versions),
                         "clouds": clouds, "missing": {}}, option=orjson.OPT_SORT_KEYS)
    return RawCapture(source=source.name, url=TREE_URL.format(commit=state.commit),
                      fetched_at=state.committed_at, body=body, content_type="application/json")
