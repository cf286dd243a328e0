"""`gpuprices --help` lists each command by its docstring's first paragraph, as running text:
typer's rich help keeps that paragraph's line breaks in a command list, which cut sentences
where the source wraps them ("print the rows that would" / "be stored")."""

from __future__ import annotations

import inspect
import re

import typer.main
from typer.testing import CliRunner

from gpuprices.cli import app

WIDE = {"COLUMNS": "400"}  # one row per command: a sentence is cut only by a line break


def _commands(group: object, path: str = "") -> dict[str, object]:
    found: dict[str, object] = {}
    for name, command in group.commands.items():  # type: ignore[attr-defined]
        found[f"{path}{name}"] = command
        if hasattr(command, "commands"):
            found.update(_commands(command, f"{path}{name} "))
    return found


def _first_paragraph(command: object) -> str:
    return " ".join(inspect.cleandoc(command.help).split("\n\n")[0].split())  # type: ignore[attr-defined]


def test_every_command_is_listed_by_its_first_paragraph_as_one_line() -> None:
    commands = _commands(typer.main.get_command(app))
    assert {"parse", "report", "backfill", "backfill wayback", "index"} <= set(commands)
    for name, command in commands.items():
        if command.help:  # type: ignore[attr-defined]
            assert command.short_help == _first_paragraph(command), name  # type: ignore[attr-defined]


def test_the_command_lists_show_whole_sentences() -> None:
    runner = CliRunner()
    for args in ([], ["backfill"], ["index"]):
        group = typer.main.get_command(app)
        for word in args:
            group = group.commands[word]  # type: ignore[attr-defined]
        shown = runner.invoke(app, [*args, "--help"], env=WIDE).output
        flat = re.sub(r"\s+", " ", shown)
        for name, command in group.commands.items():  # type: ignore[attr-defined]
            line = next(line for line in shown.splitlines()
                        if re.match(rf"\W*{re.escape(name)} ", line))
            assert _first_paragraph(command) in flat, name
            assert _first_paragraph(command)[:60] in line, name
