"""`gpuprices backfill ecb [FILE_OR_URL]`: the ECB history from a file or a (local) URL, run
twice adds nothing, a bad file is one line and exit 1; held prices are pointed at `reparse`."""

from __future__ import annotations

import io
import threading
import zipfile
from collections.abc import Iterator
from contextlib import contextmanager
from datetime import UTC, datetime
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path

from typer.testing import CliRunner

from gpuprices.cli import app
from scrapers import scaleway
from tests.unit.test_fx import HISTORY_CSV, scaleway_capture
from warehouse.connection import connect
from warehouse.ingest import ingest

runner = CliRunner()


@contextmanager
def serve_file(path: str, body: bytes) -> Iterator[str]:
    """One file at http://127.0.0.1:PORT<path> (404 elsewhere); yields the base URL."""
    class Handler(BaseHTTPRequestHandler):
        def log_message(self, format: str, *args: object) -> None:
            pass

        def do_GET(self) -> None:
            found = self.path == path
            self.send_response(200 if found else 404)
            self.send_header("Content-Length", str(len(body) if found else 0))
            self.end_headers()
            if found:
                self.wfile.write(body)

    server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    try:
        yield f"http://127.0.0.1:{server.server_address[1]}"
    finally:
        server.shutdown()
        server.server_close()


def test_backfill_ecb_from_a_file_then_again(warehouse_path: Path) -> None:
    args = ["backfill", "ecb", str(HISTORY_CSV), "-w", str(warehouse_path), "--format", "csv"]
    first = runner.invoke(app, args)
    assert first.exit_code == 0, first.output
    header, row = first.stdout.strip().splitlines()[:2]
    assert header.startswith("file,rates_in_file,rates_added,first_day,last_day")
    in_file, added, first_day, last_day = row.split(",")[1:5]
    assert in_file == added and (first_day, last_day) == ("2026-11-02", "2026-11-20")
    second = runner.invoke(app, args)
    assert second.exit_code == 0 and second.stdout.strip().splitlines()[1].split(",")[2] == "0"


def test_backfill_ecb_from_a_url_and_the_reparse_hint(warehouse_path: Path) -> None:
    con = connect(warehouse_path)  # a euro price seen before any rate: held out
    try:
        ingest(con, scaleway.SOURCE, scaleway_capture(datetime(2026, 11, 19, tzinfo=UTC)),
               run_id="r1", archive_root=warehouse_path.parent / "raw")
    finally:
        con.close()
    buffer = io.BytesIO()
    with zipfile.ZipFile(buffer, "w") as archive:
        archive.writestr("eurofxref-hist.csv", HISTORY_CSV.read_bytes())
    with serve_file("/eurofxref-hist.zip", buffer.getvalue()) as base:
        result = runner.invoke(app, ["backfill", "ecb", f"{base}/eurofxref-hist.zip",
                                     "-w", str(warehouse_path)])
    assert result.exit_code == 0, result.output
    assert "2 price rows wait in quarantine for a rate: `gpuprices reparse`" in result.output


def test_a_file_that_is_not_rates_is_one_line_and_exit_1(warehouse_path: Path,
                                                         tmp_path: Path) -> None:
    page = tmp_path / "rates.html"
    page.write_text("<html><body>moved</body></html>")
    result = runner.invoke(app, ["backfill", "ecb", str(page), "-w", str(warehouse_path)])
    assert result.exit_code == 1
    assert result.output.strip().count("\n") == 0 and "no <Cube time" in result.output
    missing = runner.invoke(app, ["backfill", "ecb", str(tmp_path / "none.zip"),
                                  "-w", str(warehouse_path)])
    assert missing.exit_code == 1 and "no such file" in missing.output
