"""Issue 22.8: one line instead of a traceback, for bad targets and bad settings.

`export /dev/full`, `export /dev/null`, `board /dev/full`, `board` onto a file, `report` onto
a file, a read-only file system under `report` and `refresh`; and every environment setting
out of its range (`GPUPRICES_RETRIES=0` used to fail every source with
`AssertionError: unreachable`, `GPUPRICES_MAX_BYTES=abc` broke even `query`): each is one line
`error: ...` naming what is wrong, exit 1 (or 2 for a setting).
"""

from __future__ import annotations

import errno
import re
import tempfile
from pathlib import Path

import pytest
from typer.testing import CliRunner, Result

from contract.settings import NUMBERS, SettingsError, load_settings
from gpuprices.cli import app
from tests.reports.conftest import Builder, build_market
from warehouse.connection import connect

README = Path(__file__).parents[2] / "README.md"


@pytest.fixture(scope="module")
def warehouse(tmp_path_factory: pytest.TempPathFactory) -> str:
    path = tmp_path_factory.mktemp("oneline") / "w.duckdb"
    con = connect(path)
    try:
        build_market(Builder(con))
    finally:
        con.close()
    return str(path)


def run(args: list[str], env: dict[str, str] | None = None) -> Result:
    return CliRunner().invoke(app, args, env=env)


def one_error_line(result: Result, code: int = 1) -> str:
    assert result.exception is None or isinstance(result.exception, SystemExit), \
        repr(result.exception)
    assert result.exit_code == code, result.output
    lines = [line for line in result.output.splitlines() if line.strip()]
    errors = [line for line in lines if line.startswith("error: ")]
    assert len(errors) == 1 and "Traceback" not in result.output, result.output
    return errors[0]


@pytest.mark.parametrize("args", [
    ["export", "/dev/full"], ["export", "/dev/null"], ["board", "/dev/full"],
    ["report", "--out", "/dev/full", "--no-board"],
])
def test_a_device_as_the_output_folder_is_one_line(args: list[str], warehouse: str) -> None:
    if not Path(args[-1] if args[0] != "report" else "/dev/full").exists():
        pytest.skip("no such device here")
    line = one_error_line(run([*args, "-w", warehouse]))
    assert "is not a folder" in line


@pytest.mark.parametrize("command", ["board", "report"])
def test_an_existing_file_as_the_output_folder_is_one_line(command: str, warehouse: str,
                                                           tmp_path: Path) -> None:
    target = tmp_path / "taken"
    target.write_text("keep me")
    args = ["board", str(target)] if command == "board" else \
        ["report", "--out", str(target), "--no-board"]
    line = one_error_line(run([*args, "-w", warehouse]))
    assert str(target) in line and "not a folder" in line
    assert target.read_text() == "keep me"


def read_only(monkeypatch: pytest.MonkeyPatch) -> None:
    """Every temporary file refused as on a read-only mount (chmod does not stop root)."""
    def refuse(*args: object, **kwargs: object) -> tuple[int, str]:
        raise OSError(errno.EROFS, "Read-only file system")

    monkeypatch.setattr(tempfile, "mkstemp", refuse)


def test_report_on_a_read_only_file_system_is_one_line(warehouse: str, tmp_path: Path,
                                                       monkeypatch: pytest.MonkeyPatch) -> None:
    read_only(monkeypatch)
    line = one_error_line(run(["report", "--out", str(tmp_path / "r"), "--week", "2026-W47",
                               "-w", warehouse]))
    assert "Read-only file system" in line


@pytest.mark.timeout(180)
def test_refresh_with_a_read_only_archive_records_each_source_in_one_line(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    read_only(monkeypatch)
    target = tmp_path / "w.duckdb"
    result = run(["refresh", "--offline", "-s", "vastai", "-s", "lambda-page", "-w",
                  str(target), "-f", "csv"])
    assert "Traceback" not in result.output
    line = one_error_line(result)
    assert "2 of 2 sources failed" in line
    summary = [x for x in result.output.splitlines() if re.match(r"(vastai|lambda-page),", x)]
    assert len(summary) == 2, result.output  # one line per source, naming the cause
    assert all(",failed," in x and "Read-only file system" in x for x in summary), summary


# ---- settings: one place, with ranges ------------------------------------------------------

BAD = [
    ("GPUPRICES_MAX_BYTES", "abc"), ("GPUPRICES_MAX_BYTES", "0"), ("GPUPRICES_RETRIES", "x"),
    ("GPUPRICES_RETRIES", "0"), ("GPUPRICES_RETRIES", "11"), ("GPUPRICES_RETRIES", "2.5"),
    ("GPUPRICES_TIMEOUT_S", "nan"), ("GPUPRICES_TIMEOUT_S", "-1"), ("GPUPRICES_TIMEOUT_S", "inf"),
    ("GPUPRICES_BACKOFF_S", "1e9"), ("GPUPRICES_REQUEST_BUDGET_S", "0"),
    ("GPUPRICES_MAX_PAGE_BYTES", "9" * 40),
    ("GPUPRICES_BASE_URL_GCP", "file:///etc/passwd"),
]


@pytest.mark.parametrize("variable,value", BAD)
def test_a_bad_setting_is_one_line_naming_it(variable: str, value: str) -> None:
    with pytest.raises(SettingsError) as caught:
        load_settings({variable: value})
    message = str(caught.value)
    assert variable in message and "\n" not in message
    if variable in NUMBERS:
        assert NUMBERS[variable].allowed in message


@pytest.mark.parametrize("args", [
    ["query", "SELECT 1"], ["cheapest"], ["sources"], ["refresh", "--offline", "-s", "vastai"],
])
@pytest.mark.parametrize("variable,value", [("GPUPRICES_MAX_BYTES", "abc"),
                                            ("GPUPRICES_RETRIES", "x"),
                                            ("GPUPRICES_RETRIES", "0"),
                                            ("GPUPRICES_TIMEOUT_S", "nan")])
def test_every_command_says_which_setting_is_wrong(args: list[str], variable: str, value: str,
                                                   warehouse: str) -> None:
    line = one_error_line(run([*args, "-w", warehouse], env={variable: value}), code=2)
    assert variable in line and "allowed" in line
    assert "unreachable" not in line


def test_an_empty_setting_is_the_default() -> None:
    assert load_settings({"GPUPRICES_RETRIES": "", "GPUPRICES_TIMEOUT_S": " "}).retries == 3


def test_a_key_too_short_to_redact_is_refused() -> None:
    with pytest.raises(SettingsError, match="LAMBDA_API_KEY is 3 characters"):
        load_settings({"LAMBDA_API_KEY": "abc"}, secret_names=["LAMBDA_API_KEY"])
    assert load_settings({"LAMBDA_API_KEY": "abc"}).http.secrets == {}, \
        "read only by the commands that fetch"


def test_the_readme_documents_every_setting_with_its_range() -> None:
    text = README.read_text(encoding="utf-8")
    section = text[text.index("### Settings"):]
    section = section[:section.index("\n## ")]
    for name, number in NUMBERS.items():
        row = next((line for line in section.splitlines() if f"`{name}`" in line), None)
        assert row is not None, f"{name} is not in the README's settings table"
        allowed = number.allowed.removeprefix("allowed ")
        assert re.search(rf"\|\s*{re.escape(allowed)}\s*\|", row), f"{name}: {allowed}"
