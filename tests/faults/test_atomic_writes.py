"""Issue 22.7: every file the project writes appears whole or not at all.

On a full disk `gpuprices board` replaced a good page with one cut off mid-row. Each writer
(report, chart, board pages, exports, raw archive) now writes a temporary file and renames it:
the disk fills during the write, the previous file stays as it was, no temporary file is left,
and the error is one line. Two ways to fill the disk: a write that stops half-way with ENOSPC
(monkeypatched), and a real kernel refusal (a child process under RLIMIT_FSIZE, EFBIG).
"""

from __future__ import annotations

import errno
import functools
import gzip
import json
import os
import resource
import signal
import subprocess
import sys
from collections.abc import Callable
from datetime import UTC, date, datetime
from pathlib import Path
from typing import Any

import duckdb
import polars as pl
import pytest

from contract import RawCapture
from contract.files import FileWriteError, write_bytes_atomic, write_text_atomic
from reports.board import build_board
from reports.charts import plot_daily
from reports.weekly.report import WeeklyReport, write_report
from tests.reports.conftest import NOW, Builder, build_market
from warehouse.archive import archive, archive_path
from warehouse.connection import connect

OLD = "<html>the good page of last week</html>"


class HalfThenFull:
    """A file object whose write stores half the data, then fails as a full disk does."""

    def __init__(self, real: Any) -> None:
        self.real = real

    def write(self, data: bytes) -> int:
        self.real.write(data[: len(data) // 2])
        self.real.flush()
        raise OSError(errno.ENOSPC, "No space left on device")

    def __getattr__(self, name: str) -> Any:
        return getattr(self.real, name)

    def __enter__(self) -> HalfThenFull:
        return self

    def __exit__(self, *exc: object) -> None:
        self.real.close()


@pytest.fixture
def disk_full(monkeypatch: pytest.MonkeyPatch) -> None:
    real = os.fdopen
    monkeypatch.setattr(os, "fdopen", lambda fd, *a, **k: HalfThenFull(real(fd, *a, **k)))


@pytest.fixture(scope="module")
def market_file(tmp_path_factory: pytest.TempPathFactory) -> Path:
    path = tmp_path_factory.mktemp("atomic") / "w.duckdb"
    con = connect(path)
    try:
        build_market(Builder(con))
    finally:
        con.close()
    return path


def leftovers(folder: Path) -> list[Path]:
    return [p for p in folder.rglob("*") if ".tmp" in p.name or ".old-" in p.name]


def one_line(error: BaseException) -> str:
    text = str(error)
    assert "\n" not in text and text, text
    return text


# ---- each writer, the disk filling half-way through ------------------------------------------

def board_page(folder: Path, market: Path) -> Path:
    con = duckdb.connect(str(market), read_only=True)
    try:
        return build_board(con, folder, week="2026-W47", as_of=NOW).page
    finally:
        con.close()


def report_file(folder: Path, _: Path) -> Path:
    report = WeeklyReport(week="2026-W47", as_of=NOW, markdown="# new report\n" * 1000)
    return write_report(report, folder)


def chart_file(folder: Path, _: Path) -> Path:
    series = pl.DataFrame({"series": ["H100"] * 10,
                           "usd_per_gpu_hour": [2.0 + d / 100 for d in range(10)],
                           "day": [date(2026, 11, d) for d in range(1, 11)]})
    path = plot_daily(series, folder / "2026-W47-cheapest.png", title="t")
    assert path is not None
    return path


WRITERS: dict[str, tuple[str, Callable[[Path, Path], Path]]] = {
    "board": ("2026-W47.html", board_page),
    "report": ("2026-W47.md", report_file),
    "chart": ("2026-W47-cheapest.png", chart_file),
}


@pytest.mark.parametrize("writer", list(WRITERS))
def test_a_full_disk_leaves_the_previous_file_whole(writer: str, market_file: Path,
                                                    tmp_path: Path,
                                                    monkeypatch: pytest.MonkeyPatch) -> None:
    name, write = WRITERS[writer]
    folder = tmp_path / "out"
    folder.mkdir()
    (folder / name).write_text(OLD)
    real = os.fdopen
    monkeypatch.setattr(os, "fdopen", lambda fd, *a, **k: HalfThenFull(real(fd, *a, **k)))
    with pytest.raises(FileWriteError) as caught:
        write(folder, market_file)
    monkeypatch.undo()
    assert "No space left on device" in one_line(caught.value)
    assert (folder / name).read_text() == OLD, "the previous file is untouched"
    assert leftovers(folder) == []
    assert write(folder, market_file).stat().st_size > len(OLD), "the control: it writes"


def test_the_raw_archive_never_holds_half_a_payload(tmp_path: Path, disk_full: None) -> None:
    raw = RawCapture(source="demo", url="https://x.test/", fetched_at=datetime.now(UTC),
                     body=b"payload " * 10_000)
    with pytest.raises(FileWriteError) as caught:
        archive(raw, tmp_path / "raw")
    one_line(caught.value)
    assert not (tmp_path / "raw" / archive_path(raw.capture_id)).exists()
    assert leftovers(tmp_path) == []


@pytest.mark.parametrize("target", ["/dev/full", "/dev/null"])
def test_a_device_is_never_a_target(target: str) -> None:
    if not Path(target).exists():
        pytest.skip(f"no {target} here")
    with pytest.raises(FileWriteError, match="not a regular file") as caught:
        write_text_atomic(target, "x")
    one_line(caught.value)


def test_a_read_only_file_system_is_one_line(tmp_path: Path,
                                             monkeypatch: pytest.MonkeyPatch) -> None:
    """As root a chmod does not stop a write: the file system's refusal is simulated."""
    import tempfile

    def refuse(*args: object, **kwargs: object) -> tuple[int, str]:
        raise OSError(errno.EROFS, "Read-only file system")

    monkeypatch.setattr(tempfile, "mkstemp", refuse)
    with pytest.raises(FileWriteError, match="Read-only file system") as caught:
        write_bytes_atomic(tmp_path / "x.bin", b"data")
    one_line(caught.value)


# ---- a real kernel refusal: a child process that may not write files over 16 KiB ------------

def limited(size: int) -> None:
    resource.setrlimit(resource.RLIMIT_FSIZE, (size, size))
    signal.signal(signal.SIGXFSZ, signal.SIG_IGN)  # EFBIG instead of being killed


def gpuprices(args: list[str], cwd: Path, *,
              limit: int | None = None) -> subprocess.CompletedProcess[str]:
    env = {**os.environ, "PYTHONDONTWRITEBYTECODE": "1"}
    return subprocess.run([sys.executable, "-m", "gpuprices.cli", *args], cwd=cwd, env=env,
                          capture_output=True, text=True, timeout=120,
                          preexec_fn=functools.partial(limited, limit) if limit else None)


def snapshot(folder: Path) -> dict[str, bytes]:
    return {str(p.relative_to(folder)): p.read_bytes() for p in folder.rglob("*") if p.is_file()}


@pytest.mark.timeout(300)
@pytest.mark.parametrize("command", ["board", "export", "report"])
def test_a_full_disk_under_the_cli_is_one_line_and_keeps_the_old_files(
        command: str, tmp_path: Path, market_file: Path) -> None:
    work, warehouse = tmp_path, market_file
    out = work / "out"
    args = {"board": ["board", str(out), "--week", "2026-W47"],
            "export": ["export", str(out)],
            "report": ["report", "--out", str(out), "--week", "2026-W47", "--no-board"]}[command]
    args += ["-w", str(warehouse)]
    good = gpuprices(args, work)
    assert good.returncode == 0, good.stderr
    before = snapshot(out)

    # The disk "fills" at half the largest file: at least that one cannot be written again.
    full = gpuprices(args, work, limit=max(len(b) for b in before.values()) // 2)

    assert full.returncode == 1, full.stdout + full.stderr
    assert "Traceback" not in full.stderr
    lines = [line for line in full.stderr.splitlines() if line.strip()]
    assert len(lines) == 1 and lines[0].startswith("error: "), full.stderr
    assert "File too large" in lines[0]
    assert leftovers(out) == []
    after = snapshot(out)
    for name, data in before.items():  # each earlier file: still there and whole
        assert name in after, f"{name} disappeared"
        if command != "export":
            assert after[name] == data, f"{name} changed"
    if command == "export":  # rewritten files are whole: every one still reads
        con = duckdb.connect()
        try:
            for name in after:
                if name.endswith(".json"):  # the manifest: whole JSON
                    assert json.loads(after[name])
                    continue
                assert con.execute(f"SELECT count(*) FROM read_parquet('{out / name}')"
                                   ).fetchone() is not None
        finally:
            con.close()
    elif command == "board":
        assert after["2026-W47.html"].rstrip().endswith(b"</html>")


def test_the_archive_is_readable_gzip(tmp_path: Path) -> None:
    """The control for the archive test: a normal write lands a whole gzip file."""
    raw = RawCapture(source="demo", url="https://x.test/", fetched_at=datetime.now(UTC),
                     body=b"payload")
    relative = archive(raw, tmp_path)
    assert gzip.decompress((tmp_path / relative).read_bytes()) == b"payload"
