"""Atomic file writes: every file the project writes appears whole or not at all.

A report, a board page, an export or a published file is written to a temporary file in the
same folder, flushed to disk, then renamed over the target: a full disk, a kill or a crash
leaves the previous file as it was (never a page cut off mid-row). A target that is not a
regular file (a folder, a FIFO, a device such as /dev/full) is refused with one line.
"""

from __future__ import annotations

import os
import tempfile
from pathlib import Path

__all__ = ["FileWriteError", "ensure_folder", "link_target", "write_bytes_atomic",
           "write_text_atomic"]


class FileWriteError(OSError):
    """A file could not be written; the message is one line naming the path and the cause."""


def _check_target(path: Path) -> None:
    if path.is_symlink() or not path.exists():
        return
    if not path.is_file():
        raise FileWriteError(f"cannot write {path}: it exists and is not a regular file")


def ensure_folder(path: str | Path) -> Path:
    """`path` as a folder (created with its parents); one line when it cannot be one (it is
    a file or a device such as /dev/full, or the file system refuses)."""
    folder = Path(path)
    if folder.exists() and not folder.is_dir():
        raise FileWriteError(f"cannot write into {folder}: it exists and is not a folder")
    try:
        folder.mkdir(parents=True, exist_ok=True)
    except OSError as exc:
        raise FileWriteError(f"cannot create folder {folder}: {exc.strerror or exc}") from None
    return folder


def write_bytes_atomic(path: str | Path, data: bytes) -> Path:
    """Write `data` to `path` through a temporary file and a rename; returns the path."""
    target = Path(path)
    _check_target(target)
    folder = ensure_folder(target.parent)
    try:
        handle, temporary = tempfile.mkstemp(prefix=f".{target.name}.", suffix=".tmp",
                                             dir=folder)
    except OSError as exc:
        raise FileWriteError(f"cannot write {target}: {exc.strerror or exc}") from None
    try:
        with os.fdopen(handle, "wb") as out:
            out.write(data)
            out.flush()
            os.fsync(out.fileno())
        os.chmod(temporary, 0o644)
        os.replace(temporary, target.resolve() if target.is_symlink() else target)
    except OSError as exc:
        Path(temporary).unlink(missing_ok=True)
        raise FileWriteError(f"cannot write {target}: {exc.strerror or exc}") from None
    return target


def write_text_atomic(path: str | Path, text: str) -> Path:
    """`write_bytes_atomic` for UTF-8 text."""
    return write_bytes_atomic(path, text.encode("utf-8"))


def link_target(path: str | Path) -> Path:
    """The file a symlink at `path` points at (followed to the end), else `path` itself.

    What is kept beside a file (its lock, its raw archive, its read snapshots) goes beside the
    real file, so every way of naming it finds the same ones."""
    given = Path(path)
    return Path(os.path.realpath(given)) if given.is_symlink() else given
