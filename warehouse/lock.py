"""One refresh at a time per warehouse: an advisory lock file beside the DuckDB file."""

from __future__ import annotations

import fcntl
import os
import time
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

from warehouse.connection import WarehouseBusy


@contextmanager
def refresh_lock(warehouse: str | Path, *, wait_s: float = 0.0) -> Iterator[None]:
    """Hold `<warehouse>.lock` for the duration; wait up to `wait_s`, then raise WarehouseBusy."""
    path = Path(f"{warehouse}.lock")
    path.parent.mkdir(parents=True, exist_ok=True)
    handle = path.open("a+")
    deadline = time.monotonic() + wait_s
    try:
        while True:
            try:
                fcntl.flock(handle, fcntl.LOCK_EX | fcntl.LOCK_NB)
                break
            except BlockingIOError:
                if time.monotonic() >= deadline:
                    handle.seek(0)
                    holder = handle.read().strip() or "another process"
                    raise WarehouseBusy(
                        f"another refresh ({holder}) is writing to {warehouse}; "
                        "this one stops without touching it"
                    ) from None
                time.sleep(0.2)
        handle.seek(0)
        handle.truncate()
        handle.write(f"pid {os.getpid()}")
        handle.flush()
        yield
    finally:
        handle.close()  # closing releases the flock
