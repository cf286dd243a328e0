"""Issue 22.4: a 200 MB page must not eat the machine.

Page sources read at most GPUPRICES_MAX_PAGE_BYTES (default 8 MiB; APIs keep the larger
GPUPRICES_MAX_BYTES): the body is read in chunks and dropped at the cap, so memory stays near
the cap whatever the server sends, the parser never sees more, and the refresh records the
source `failed` with one line.
"""

from __future__ import annotations

import tracemalloc
import zlib
from collections.abc import Iterator
from pathlib import Path

import duckdb
import httpx
import pytest
from typer.testing import CliRunner

from contract import FetchError
from contract.settings import load_settings
from flows.refresh_work import run_refresh
from gpuprices.cli import app
from scrapers.registry import get_source
from tests.faults.hostile_http import Received, repeat, scripted

MiB = 1024 * 1024
HUGE = 200 * MiB
PAGE_CAP = 8 * MiB  # the documented default of GPUPRICES_MAX_PAGE_BYTES
ROW = b"<tr><td>1x H100 (80 GB SXM5)</td><td>$2.49 / hr</td></tr>\n" * 1000


def huge_page(_: Received) -> tuple[int, dict[str, str], Iterator[bytes]]:
    """200 MB of pricing-table rows, streamed without a Content-Length."""
    return 200, {"Content-Type": "text/html"}, repeat(ROW, HUGE)


def gzip_bomb(_: Received) -> tuple[int, dict[str, str], Iterator[bytes]]:
    """~200 KB on the wire that inflate to 200 MB."""
    def chunks() -> Iterator[bytes]:
        packer = zlib.compressobj(9, zlib.DEFLATED, 31)  # gzip framing
        block = b" " * MiB
        for _ in range(HUGE // MiB):
            if out := packer.compress(block):
                yield out
        yield packer.flush()
    return 200, {"Content-Type": "text/html", "Content-Encoding": "gzip"}, chunks()


def settings_for(base: str) -> object:
    return load_settings({"GPUPRICES_BASE_URL_LAMBDA_PAGE": base})


@pytest.mark.timeout(120)
@pytest.mark.parametrize("answer", [huge_page, gzip_bomb], ids=["plain", "gzip-bomb"])
def test_a_200_mb_page_stops_at_the_page_cap_in_bounded_memory(answer: object) -> None:
    source = get_source("lambda-page")
    with scripted(answer) as server, httpx.Client() as client:  # type: ignore[arg-type]
        settings = settings_for(server.base)
        assert settings.http.max_page_bytes == PAGE_CAP  # type: ignore[attr-defined]
        tracemalloc.start()
        try:
            with pytest.raises(FetchError) as caught:
                source.fetch(client, settings.http)  # type: ignore[attr-defined]
            _, peak = tracemalloc.get_traced_memory()
        finally:
            tracemalloc.stop()
    message = str(caught.value)
    assert f"exceeds the {PAGE_CAP}-byte cap" in message and "\n" not in message
    # What was held: the chunks up to the cap, their join, one inflated chunk; not 200 MB.
    assert peak < 4 * PAGE_CAP, f"peak {peak / MiB:.0f} MiB while reading"
    if answer is huge_page:
        assert server.sent_bytes < HUGE // 4, "the client stopped reading at the cap"


def test_a_declared_200_mb_page_is_refused_before_its_body() -> None:
    def declared(_: Received) -> tuple[int, dict[str, str], list[bytes]]:
        return 200, {"Content-Type": "text/html", "Content-Length": str(HUGE)}, [ROW]

    refused = f"response of {HUGE} bytes exceeds the {PAGE_CAP}-byte cap"
    with scripted(declared) as server, httpx.Client() as client, \
            pytest.raises(FetchError, match=refused):
        get_source("lambda-page").fetch(client, settings_for(server.base).http)


def test_an_api_keeps_the_larger_cap() -> None:
    """The page cap is for HTML: a 12 MiB API answer still arrives whole."""
    body = b'{"offers": [' + b'{"x": 1},' * (12 * MiB // 9) + b'{"x": 1}]}'

    def big_json(_: Received) -> tuple[int, dict[str, str], list[bytes]]:
        return 200, {"Content-Type": "application/json"}, [body]

    with scripted(big_json) as server, httpx.Client() as client:
        settings = load_settings({"GPUPRICES_BASE_URL_VASTAI": server.base})
        raw = get_source("vastai").fetch(client, settings.http)
    assert len(raw.body) == len(body) > PAGE_CAP


@pytest.mark.timeout(180)
def test_a_refresh_of_a_200_mb_page_ends_failed_with_one_line(tmp_path: Path,
                                                              monkeypatch: pytest.MonkeyPatch,
                                                              ) -> None:
    warehouse = tmp_path / "w.duckdb"
    with scripted(huge_page) as server:
        settings = load_settings({"GPUPRICES_BASE_URL_LAMBDA_PAGE": server.base,
                                  "GPUPRICES_RETRIES": "1"}, warehouse=warehouse)
        [outcome] = run_refresh(settings, source_names=["lambda-page"], run_id="huge")
    assert outcome.status == "failed"
    assert outcome.error and "cap" in outcome.error and "\n" not in outcome.error
    con = duckdb.connect(str(warehouse), read_only=True)
    try:
        run = con.execute("SELECT status, finished_at FROM refresh_run WHERE run_id = 'huge'"
                          ).fetchone()
        stored = con.execute("SELECT status, error FROM scrape_run WHERE run_id = 'huge'"
                             ).fetchall()
    finally:
        con.close()
    assert run is not None and run[0] == "failed" and run[1] is not None, "never left running"
    assert stored == [("failed", outcome.error)]


def test_parse_of_a_200_mb_file_is_refused_with_one_line(tmp_path: Path) -> None:
    page = tmp_path / "huge.html"
    with page.open("wb") as handle:  # sparse: 200 MB long, no disk used
        handle.write(ROW)
        handle.truncate(HUGE)
    result = CliRunner().invoke(app, ["parse", "lambda-page", str(page)])
    assert result.exit_code == 1
    lines = [line for line in result.output.splitlines() if line.strip()]
    assert len(lines) == 1 and lines[0].startswith("error: "), result.output
    assert "GPUPRICES_MAX_PAGE_BYTES" in lines[0] and f"{PAGE_CAP:,}" in lines[0]
