"""Who holds the warehouse: the writers' lock file, and the holder every busy message names.

gpuprices writers (refresh, backfill, reparse, alerts, market --rebuild, migrate) hold an
advisory lock on `<warehouse>.lock`, beside the real file when the warehouse path is a
symlink, and write into it who they are: `pid 4242 refresh on host since 2026-...Z`. One
writer at a time; a second one stops at once (or waits `wait_s`) with a message naming the
first. Within one process the lock is re-entrant: the refresh holds it and the connection it
opens takes it again.

DuckDB itself allows one writing process or many reading processes per file; its lock error
names the holder's PID. `busy_message` turns that into one line saying whether the holder is
a gpuprices writer (and which command), a reader, or another program.
"""

from __future__ import annotations

import fcntl
import os
import re
import socket
import threading
import time
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from datetime import UTC, datetime
from pathlib import Path

from contract.files import link_target
from warehouse.dialect import is_lake_url
from warehouse.errors import WarehouseBusy, WarehouseError

__all__ = ["Holder", "busy_message", "current_writer", "lock_path", "posix_locks",
           "refresh_lock", "writer_lock"]

_RECORD = re.compile(r"pid (\d+) (\S+) on (\S+) since (\S+)")
_DUCKDB_HOLDER = re.compile(r"held in (.*?) \(PID (\d+)\)")


@dataclass(frozen=True, slots=True)
class Holder:
    pid: int
    command: str
    host: str
    since: str  # ISO time, UTC

    def record(self) -> str:
        return f"pid {self.pid} {self.command} on {self.host} since {self.since}"

    def describe(self) -> str:
        return f"pid {self.pid} on {self.host}, since {self.since}"


def lock_path(warehouse: str | Path) -> Path:
    target = link_target(warehouse)
    return target.with_name(target.name + ".lock")


# lock file (resolved) -> [open handle, depth]: the re-entrant holds of this process.
_held: dict[str, list[object]] = {}
_guard = threading.Lock()


def _read_record(handle: object) -> Holder | None:
    handle.seek(0)  # type: ignore[attr-defined]
    text = handle.read().strip()  # type: ignore[attr-defined]
    match = _RECORD.search(text)
    if match:
        return Holder(int(match.group(1)), match.group(2), match.group(3), match.group(4))
    pid = re.search(r"pid (\d+)", text)  # a lock file written by an older version
    return Holder(int(pid.group(1)), "refresh", "?", "?") if pid else None


@contextmanager
def writer_lock(warehouse: str | Path, *, command: str = "write",
                wait_s: float = 0.0) -> Iterator[bool]:
    """Hold the writers' lock for the duration; wait up to `wait_s`, then WarehouseBusy naming
    the holder. Yields True when this call took the lock (False: this process had it).
    A lake has no lock file: its writers take turns at commit (warehouse.transaction)."""
    if is_lake_url(warehouse):
        yield True
        return
    path = lock_path(warehouse)
    key = str(path.resolve())
    with _guard:
        entry = _held.get(key)
        if entry is not None:
            entry[1] = int(entry[1]) + 1  # type: ignore[call-overload]
    if entry is not None:
        try:
            yield False
        finally:
            with _guard:
                entry[1] = int(entry[1]) - 1  # type: ignore[call-overload]
        return
    try:
        path.parent.mkdir(parents=True, exist_ok=True)
        handle = path.open("a+")
    except OSError as exc:
        raise WarehouseError(f"cannot write beside the warehouse {warehouse}: cannot open "
                             f"{path}: {exc.strerror or exc}") from None
    deadline = time.monotonic() + wait_s
    try:
        while True:
            try:
                fcntl.flock(handle, fcntl.LOCK_EX | fcntl.LOCK_NB)
                break
            except BlockingIOError:
                if time.monotonic() >= deadline:
                    holder = _read_record(handle)
                    who = (f"another {holder.command} ({holder.describe()})" if holder
                           else "another gpuprices writer")
                    raise WarehouseBusy(f"{who} is writing to {warehouse}; this {command} "
                                        "stops without touching it") from None
                time.sleep(0.2)
        me = Holder(os.getpid(), "-".join(command.split()) or "write",
                    "-".join(socket.gethostname().split()) or "?",
                    datetime.now(UTC).strftime("%Y-%m-%dT%H:%M:%SZ"))
        handle.seek(0)
        handle.truncate()
        handle.write(me.record() + "\n")
        handle.flush()
        with _guard:
            _held[key] = [handle, 1]
        try:
            yield True
        finally:
            with _guard:
                _held.pop(key, None)
    finally:
        handle.close()  # closing releases the flock


@contextmanager
def refresh_lock(warehouse: str | Path, *, wait_s: float = 0.0) -> Iterator[None]:
    """The writers' lock, held by a refresh for its whole run."""
    with writer_lock(warehouse, command="refresh", wait_s=wait_s):
        yield


def current_writer(warehouse: str | Path) -> Holder | None:
    """The gpuprices writer holding the lock now, or None."""
    if is_lake_url(warehouse):
        return None
    path = lock_path(warehouse)
    with _guard:
        entry = _held.get(str(path.resolve()))
    if entry is not None:
        return _read_record(entry[0])
    try:
        handle = path.open("r")
    except OSError:
        return None
    with handle:
        try:
            fcntl.flock(handle, fcntl.LOCK_SH | fcntl.LOCK_NB)
        except BlockingIOError:
            return _read_record(handle)
        fcntl.flock(handle, fcntl.LOCK_UN)
        return None


def posix_locks(path: str | Path) -> dict[int, str] | None:
    """pid -> READ | WRITE: the POSIX record locks (DuckDB's) held on `path` now, from
    /proc/locks; None where that is not available (not Linux). Read there rather than
    probed: opening the file to ask would drop this process's own locks on it when closed."""
    try:
        inode = str(os.stat(path).st_ino)
        lines = Path("/proc/locks").read_text().splitlines()
    except OSError:
        return None
    found: dict[int, str] = {}
    for line in lines:
        parts = line.split()  # 1: POSIX  ADVISORY  WRITE 4242 fe:00:2148514 0 EOF
        if len(parts) >= 6 and parts[1] in ("POSIX", "OFDLCK") \
                and parts[5].rsplit(":", 1)[-1] == inode and parts[4].lstrip("-").isdigit():
            found[int(parts[4])] = parts[3]
    return found


def busy_message(warehouse: str | Path, error: str, *, writing: bool,
                 read_path: Path | None = None) -> tuple[str, str | None]:
    """(one-line message, 'reader' | 'writer' | None) for DuckDB's lock error `error`."""
    match = _DUCKDB_HOLDER.search(error)
    if not match:
        return (f"the warehouse {warehouse} is locked by another process; try again when it "
                "is closed", None)
    program, pid = match.group(1), int(match.group(2))
    writer = current_writer(warehouse)
    kind = (posix_locks(link_target(warehouse)) or {}).get(pid)
    if writer is not None and writer.pid == pid:
        who, role = f"`{writer.command}` ({writer.describe()})", "writer"
    elif kind == "READ":
        who, role = f"a reader (pid {pid}, {program})", "reader"
    elif kind == "WRITE":
        who, role = f"a writer outside gpuprices (pid {pid}, {program})", "writer"
    else:
        who, role = f"process {pid} ({program})", None
    if role == "reader" and writing:
        where = f"the read snapshot {read_path}" if read_path else "the read snapshot"
        return (f"the warehouse {warehouse} is open read-only by {who}; a write needs the "
                f"file alone: outside readers should open {where} (gpuprices commands do); "
                "try again when it is closed", role)
    if not writing:
        return (f"the warehouse {warehouse} is being written by {who} and has no read "
                "snapshot yet (the first write publishes one); try again when it finishes",
                role)
    return (f"the warehouse {warehouse} is being written by {who}; try again when it "
            "finishes", role)
