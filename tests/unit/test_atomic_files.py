"""Atomic writes: the old file survives a failed write, and odd targets get one line."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from contract.files import FileWriteError, write_bytes_atomic, write_text_atomic


def test_writes_and_replaces_whole(tmp_path: Path) -> None:
    target = tmp_path / "sub" / "report.md"
    write_text_atomic(target, "first")
    write_text_atomic(target, "second")
    assert target.read_text() == "second"
    assert [p.name for p in target.parent.iterdir()] == ["report.md"]  # no temporary left


def test_a_failed_write_keeps_the_old_file(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    target = tmp_path / "index.html"
    target.write_text("<html>good</html>")

    def full_disk(fd: int) -> None:
        raise OSError(28, "No space left on device")

    monkeypatch.setattr(os, "fsync", full_disk)
    with pytest.raises(FileWriteError, match="No space left on device"):
        write_bytes_atomic(target, b"<html>cut off")
    assert target.read_text() == "<html>good</html>"
    assert [p.name for p in tmp_path.iterdir()] == ["index.html"]


def test_refuses_a_target_that_is_not_a_file(tmp_path: Path) -> None:
    fifo = tmp_path / "pipe"
    os.mkfifo(fifo)
    with pytest.raises(FileWriteError, match="not a regular file"):
        write_text_atomic(fifo, "x")
    with pytest.raises(FileWriteError, match="not a regular file"):
        write_text_atomic(tmp_path, "x")
