"""The read path: snapshots the writer publishes, so that readers never block the writer.

DuckDB lets one process write a file or many processes read it, never both at once. So
readers do not open the warehouse file itself. Every write session ends by publishing a read
snapshot (warehouse.connection.open_warehouse calls `publish`): CHECKPOINT, copy the file to
`<warehouse>.read/g000042.duckdb` (read-only; the copy also holds its current prices:
warehouse.held_prices), then swap the `current.duckdb` symlink to it with os.replace, which
is atomic. Read commands open the newest snapshot; outside tools open
`<warehouse>.read/current.duckdb` read-only. A reader keeps its generation as long as it
likes: old generations are deleted only when no process holds them (DuckDB's read lock, seen
in /proc/locks), and the newest two are always kept (a reader may have just resolved the
link). A snapshot records which state of the warehouse file it copies (device, inode, size,
mtime): a warehouse written since without a new snapshot (a crash, a write by another tool)
is read directly while nobody writes it (warehouse.connection.connect_read_only).

A snapshot is also sealed: its sidecar records the generation file's own identity (device,
inode, size, mtime and ctime, taken once the file is in place). The writer that publishes it
checked the warehouse's catalog when it opened it (warehouse.schema.check_objects) and wrote
only its own views since, so a reader that finds the seal intact skips the catalog check that
costs every other read ~18 ms (issue 23). A file put in the generation's place, or changed
since, has another inode or ctime (the kernel sets ctime; no copy or archive can restore it),
so its seal does not hold and it is checked like any other file. A seal is believed only when
no other user could have written it: the read folder and the record are this user's and not
writable by group or others; a folder shared for writing is checked on every read.

The copy is made by a child process: opening and closing the warehouse file in the writer's
own process would release the writer's own DuckDB lock on it (POSIX record locks belong to
the process and go with any close of the file).
"""

from __future__ import annotations

import fcntl
import json
import logging
import os
import re
import subprocess
import sys
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from datetime import UTC, datetime
from pathlib import Path

import duckdb

from contract.files import link_target, write_text_atomic
from warehouse.engine import NO_FILES, open_duckdb
from warehouse.errors import WarehouseError
from warehouse.held_prices import TABLE as HELD_PRICES
from warehouse.held_prices import store_current_prices
from warehouse.lock import posix_locks

__all__ = ["CURRENT", "Snapshot", "SnapshotError", "current", "identity", "prune", "publish",
           "read_dir", "read_path", "seal_of"]

log = logging.getLogger("gpuprices.warehouse")

CURRENT = "current.duckdb"
KEEP = 2  # generations always kept: the current one and the one before it
_GENERATION = re.compile(r"g(\d{6,})\.duckdb")
# Runs in a child process (see the module docstring); copy_file_range copies in the kernel
# (and shares blocks on file systems that can), a plain copy where it cannot.
_COPY = """
import os, shutil, sys
with open(sys.argv[1], 'rb') as src, open(sys.argv[2], 'wb') as dst:
    left = os.fstat(src.fileno()).st_size
    try:
        while left > 0:
            done = os.copy_file_range(src.fileno(), dst.fileno(), min(left, 1 << 30))
            if done == 0:
                break
            left -= done
    except (OSError, AttributeError):
        src.seek(0)
        dst.seek(0)
        dst.truncate()
        shutil.copyfileobj(src, dst, 1 << 20)
    dst.flush()
    os.fsync(dst.fileno())
"""

Identity = tuple[int, int, int, int]
Seal = tuple[int, int, int, int, int]


class SnapshotError(WarehouseError):
    """A snapshot could not be published (the previous one stays current)."""


@dataclass(frozen=True, slots=True)
class Snapshot:
    path: Path  # the generation file
    generation: int
    source: Identity  # the warehouse file's identity() when it was copied
    published_at: str
    seal: Seal | None = None  # the generation file's seal_of() when published (None: older)

    def matches(self, warehouse: str | Path) -> bool:
        """Does the warehouse file still hold exactly what this snapshot copied?"""
        target = link_target(warehouse)
        try:
            same = identity(target) == self.source
        except OSError:
            return False
        return same and not _wal_pending(target)

    def sealed(self) -> bool:
        """Is the generation file still the one its publisher wrote and checked? Only when
        no one but this user could have written the seal: the folder and the record belong to
        this user and neither is writable by others (a shared folder is checked every time)."""
        try:
            return (self.seal is not None and seal_of(self.path) == self.seal
                    and _private(self.path.parent) and _private(self.path.with_suffix(".json")))
        except OSError:
            return False


def read_dir(warehouse: str | Path) -> Path:
    target = link_target(warehouse)
    return target.with_name(target.name + ".read")


def read_path(warehouse: str | Path) -> Path:
    """The path outside readers open (read-only): always the newest snapshot."""
    return read_dir(warehouse) / CURRENT


def identity(path: str | Path) -> Identity:
    st = os.stat(path)
    return (st.st_dev, st.st_ino, st.st_size, st.st_mtime_ns)


def seal_of(path: str | Path) -> Seal:
    """identity() and the inode's change time, which only the kernel sets."""
    st = os.stat(path)
    return (st.st_dev, st.st_ino, st.st_size, st.st_mtime_ns, st.st_ctime_ns)


def _private(path: Path) -> bool:
    st = os.stat(path)
    return st.st_uid == os.getuid() and not st.st_mode & 0o022


def _wal_pending(target: Path) -> bool:
    try:
        return target.with_name(target.name + ".wal").stat().st_size > 0
    except OSError:
        return False


def _generation_path(folder: Path, generation: int) -> Path:
    return folder / f"g{generation:06d}.duckdb"


def _generations(folder: Path) -> list[tuple[int, Path]]:
    found = []
    for path in folder.glob("g*.duckdb"):
        match = _GENERATION.fullmatch(path.name)
        if match:
            found.append((int(match.group(1)), path))
    return sorted(found)


def current(warehouse: str | Path) -> Snapshot | None:
    """The snapshot `current.duckdb` points at, or None (none published, or unreadable)."""
    link = read_path(warehouse)
    try:
        name = os.readlink(link)
    except OSError:
        return None
    match = _GENERATION.fullmatch(name)
    if not match:
        return None
    path = link.parent / name
    try:
        data = json.loads(path.with_suffix(".json").read_text(encoding="utf-8"))
        source = tuple(int(v) for v in data["source"])
        sealed = tuple(int(v) for v in data.get("seal") or ())
        if len(source) != 4 or int(data["generation"]) != int(match.group(1)):
            return None
        return Snapshot(path, int(match.group(1)), source,  # type: ignore[arg-type]
                        str(data["published_at"]),
                        sealed if len(sealed) == 5 else None)  # type: ignore[arg-type]
    except (OSError, ValueError, KeyError, TypeError):
        return None


@contextmanager
def _publishing(folder: Path) -> Iterator[None]:
    """One publisher at a time per read folder."""
    with (folder / ".publish.lock").open("a") as handle:
        fcntl.flock(handle, fcntl.LOCK_EX)
        yield


def _copy(source: Path, target: Path) -> None:
    done = subprocess.run([sys.executable, "-I", "-S", "-c", _COPY, str(source), str(target)],
                          capture_output=True, text=True, check=False)
    if done.returncode != 0:
        lines = done.stderr.strip().splitlines() or [f"exit {done.returncode}"]
        raise SnapshotError(f"cannot copy {source} to {target}: {lines[-1]}")


def _hold_current_prices(copy: Path, name: str) -> None:
    """Store the copy's current prices in it (warehouse.held_prices), before it is sealed. A
    copy that cannot hold them is published as copied: its readers ask the macro."""
    try:
        con = open_duckdb(str(copy), config=NO_FILES)
        try:
            store_current_prices(con)
        finally:
            con.close()
    except duckdb.Error as exc:
        log.warning("the snapshot %s holds no current prices: %s", name,
                    str(exc).splitlines()[0])
    Path(f"{copy}.wal").unlink(missing_ok=True)  # a close that failed: the table is not held


def _fsync_dir(folder: Path) -> None:
    fd = os.open(folder, os.O_RDONLY)
    try:
        os.fsync(fd)
    finally:
        os.close(fd)


def publish(con: duckdb.DuckDBPyConnection, warehouse: str | Path) -> Snapshot:
    """Publish the warehouse as it stands as the newest read snapshot.

    `con` is the writer's connection, still open (so no other process can write meanwhile)
    and with no transaction in flight: CHECKPOINT puts every commit into the file itself.
    """
    target = link_target(warehouse)
    # A warehouse made from a copy of a snapshot holds that snapshot's current prices, not its
    # own: never copied on (a copy that cannot hold its own is then published without any).
    con.execute(f"DROP TABLE IF EXISTS main.{HELD_PRICES}")
    con.execute("CHECKPOINT")
    if _wal_pending(target):
        raise SnapshotError(f"{target}.wal still holds commits after CHECKPOINT (another "
                            "connection to it is in a transaction)")
    before = identity(target)
    folder = read_dir(target)
    try:
        folder.mkdir(exist_ok=True)
        with _publishing(folder):
            generations = _generations(folder)
            generation = (generations[-1][0] if generations else 0) + 1
            final = _generation_path(folder, generation)
            partial = folder / f".{final.name}.partial"
            _copy(target, partial)
            if identity(target) != before:
                partial.unlink(missing_ok=True)
                raise SnapshotError(f"{target} changed while it was copied")
            _hold_current_prices(partial, final.name)
            os.chmod(partial, 0o444)  # a reader that forgets read_only=True cannot write it
            os.replace(partial, final)
            sealed = seal_of(final)  # after the rename, which sets the inode's ctime
            published_at = datetime.now(UTC).strftime("%Y-%m-%dT%H:%M:%S.%fZ")
            write_text_atomic(final.with_suffix(".json"), json.dumps(
                {"generation": generation, "source": list(before),
                 "published_at": published_at, "warehouse": str(target),
                 "seal": list(sealed)}) + "\n")
            swap = folder / f".{CURRENT}.{os.getpid()}"
            swap.unlink(missing_ok=True)
            os.symlink(final.name, swap)
            os.replace(swap, folder / CURRENT)
            _fsync_dir(folder)
            prune(folder)
    except OSError as exc:
        raise SnapshotError(f"cannot publish a read snapshot in {folder}: "
                            f"{exc.strerror or exc}") from None
    return Snapshot(final, generation, before, published_at, sealed)


def prune(folder: Path) -> list[Path]:
    """Delete generations older than the newest KEEP that no process holds; returns them.

    Called under the publish lock, so a leftover partial copy belongs to a dead publisher."""
    for partial in folder.glob(".g*.duckdb.partial"):
        partial.unlink(missing_ok=True)
    deleted = []
    for _, path in _generations(folder)[:-KEEP]:
        holders = posix_locks(path)
        if holders:  # a reader has it open; None (unknown): deleting an open file is safe
            continue
        for leftover in (path, path.with_suffix(".json"), Path(f"{path}.wal")):
            leftover.unlink(missing_ok=True)
        deleted.append(path)
    return deleted
