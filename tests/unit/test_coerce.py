"""gpuprices.coerce: option values converted directly are exactly what typer's pydantic
coercion makes of them; anything else is declined (and typer's coercion decides)."""

from __future__ import annotations

from datetime import datetime
from pathlib import Path

import pytest
import typer
from typer._adapters import build_adapter
from typer.models import ArgumentInfo, OptionInfo
from typer.testing import CliRunner

from gpuprices.coerce import _Declined, direct_value
from gpuprices.output import Format

DAY = OptionInfo(formats=["%Y-%m-%d"])
CASES: list[tuple[object, OptionInfo | ArgumentInfo, list[object]]] = [
    (str, OptionInfo(), ["abc", "", "ü h100", "  spaced  ", "-1", b"bytes"]),
    (int, OptionInfo(), ["0", "42", "-7", "007", "+3", " 5", "1_000", "1e3", "x", 12, True,
                         "99999999999999999999", 2.0]),
    (float, OptionInfo(), ["1.5", "2", ".5", "-0.25", "3.", "1e3", "inf", "nan", " 1", "x",
                           2.5, 2, True]),
    (bool, OptionInfo(), [True, False, "true", "no", ""]),
    (Format, OptionInfo(), ["table", "csv", "json", "JSON", "xml", Format.csv]),
    (datetime, DAY, ["2024-01-02", "2024-13-01", "02/01/2024", datetime(2024, 1, 2)]),
    (Path, OptionInfo(), ["some/file.duckdb", ".", "", Path("x.duckdb")]),
    (Path, ArgumentInfo(exists=True, dir_okay=False), ["pyproject.toml", "no-such-file",
                                                       "tests"]),
    (list[str], OptionInfo(), [["a", "b"], ("a",), "a", []]),
    (list[int], OptionInfo(), [["1", "2"], ["1", "x"]]),
]


@pytest.mark.parametrize(("annotation", "info", "values"), CASES,
                         ids=[f"{i}-{getattr(a, '__name__', a)}" for i, (a, _, _) in
                              enumerate(CASES)])
def test_a_direct_value_is_typers_value(annotation: object, info: OptionInfo,
                                        values: list[object]) -> None:
    adapter = build_adapter(annotation, info)
    taken = 0
    for value in values:
        try:
            direct = direct_value(annotation, info, value)
        except _Declined:
            continue
        taken += 1
        expected = adapter.validate_python(value)  # raises if typer would refuse it
        assert (type(direct), direct) == (type(expected), expected), value
    assert taken, "every case has values the direct conversion takes"


def test_a_declined_value_gets_typers_own_error() -> None:
    from gpuprices.coerce import install

    install()
    app = typer.Typer()

    @app.command()
    def run(limit: int = 5, fmt: Format = Format.table) -> None:
        typer.echo(f"{limit} {fmt.value}")

    runner = CliRunner()
    assert runner.invoke(app, ["--limit", "12", "--fmt", "csv"]).output == "12 csv\n"
    refused = runner.invoke(app, ["--limit", "twelve"])
    assert refused.exit_code == 2
    assert "Input should be a valid integer" in refused.output
    assert runner.invoke(app, ["--fmt", "xml"]).exit_code == 2


def test_a_run_that_names_its_command_builds_the_same_command() -> None:
    """cli.only: the one-command app a run builds answers --help and a usage error as the
    whole app does, for every command and command group."""
    import typer.main

    from gpuprices.cli import app, only

    runner = CliRunner()
    names = sorted(typer.main.get_command(app).commands)  # type: ignore[attr-defined]
    assert {"query", "cheapest", "market", "index", "backfill"} <= set(names)
    for name in names:
        for args in ([name, "--help"], [name, "--no-such-option"]):
            whole, lean = runner.invoke(app, args), runner.invoke(only(name), args)
            assert (lean.exit_code, lean.output) == (whole.exit_code, whole.output), args
    assert only("no-such-command") is app and only(None) is app
