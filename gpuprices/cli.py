"""`gpuprices`: a thin command line over the same functions the flows use.

Commands that only read (parse, query, sources, ...) never import Prefect, so they start fast;
`refresh` and `report` run their flow's work directly unless a Prefect run is asked for
(--prefect, GPUPRICES_PREFECT=1) or a Prefect API is configured (PREFECT_API_URL).
Each group of commands is a module with a `register(app)`; shared options are in options.py.
"""

from __future__ import annotations

import errno
import inspect
import os
import re
import sys
from typing import Annotated, Any

import typer
from typer.core import TyperGroup
from typer.main import get_command_name

from gpuprices import (
    commands_board,
    commands_data,
    commands_history,
    commands_index,
    commands_market,
    commands_mcp,
    commands_ops,
    commands_reports,
    commands_stock,
)
from gpuprices.coerce import install as direct_coercion
from gpuprices.options import fail
from gpuprices.output import set_wide

direct_coercion()  # option values without pydantic (gpuprices.coerce)

# What a full disk, a read-only file system or a file size limit says (OSError or DuckDB).
_IO_ERRNOS = {errno.ENOSPC, errno.EROFS, errno.EFBIG, errno.EDQUOT, errno.EACCES, errno.EPERM}
_IO_WORDS = re.compile(r"No space left on device|Read-only file system|File too large|"
                       r"Disk quota exceeded|Could not write file")


def _io_failure(exc: BaseException) -> str | None:
    """The first line of the write failure behind `exc` (its cause or context included), if
    the file system refused a write; None for anything else (a bug keeps its traceback)."""
    seen: BaseException | None = exc
    while seen is not None:
        if isinstance(seen, OSError) and seen.errno in _IO_ERRNOS:
            where = f" {seen.filename}" if seen.filename else ""
            return f"cannot write{where}: {seen.strerror}"
        line = str(seen).splitlines()[0] if str(seen) else ""
        if type(seen).__module__.startswith(("duckdb", "_duckdb")) and _IO_WORDS.search(line):
            return f"cannot write: {line}"
        seen = seen.__cause__ or seen.__context__
    return None


def _take_wide(args: list[str]) -> list[str]:
    """`--wide` anywhere before `--` (after any command too): tables show every column
    whole (gpuprices.output); the flag is taken out before the commands parse."""
    cut = args.index("--") if "--" in args else len(args)
    wide = "--wide" in args[:cut]
    set_wide(wide)
    return [a for i, a in enumerate(args) if not (wide and i < cut and a == "--wide")]


class Commands(TyperGroup):
    """Every command's door for one-line errors: a setting or an input out of range (exit 2),
    a file that cannot be written, or a write the file system refused (full disk, read-only:
    exit 1), a warehouse that cannot be read, or a question without an answer (exit 1)
    prints `error: ...`, no traceback."""

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        _one_line_summaries(self)

    def parse_args(self, ctx: typer.Context, args: list[str]) -> list[str]:
        return super().parse_args(ctx, _take_wide(args))  # type: ignore[arg-type]

    def invoke(self, ctx: typer.Context) -> object:
        from contract.files import FileWriteError
        from contract.settings import SettingsError
        from gpuprices.errors import GpupricesError
        from warehouse.errors import WarehouseError

        try:
            return super().invoke(ctx)
        except SettingsError as exc:
            raise fail(str(exc), 2) from None
        except GpupricesError as exc:
            raise fail(str(exc), exc.exit_code) from None
        except (FileWriteError, WarehouseError) as exc:
            raise fail(str(exc)) from None
        except Exception as exc:
            message = _io_failure(exc)
            if message is None:
                raise
            raise fail(message) from None


def _one_line_summaries(group: Any) -> None:
    """Each command of `group` (and of its groups) listed by its docstring's first paragraph
    as one line of text: typer's rich help keeps that paragraph's line breaks in a command
    list, which cut its sentences where the source wraps them."""
    for command in group.commands.values():
        if command.short_help is None and command.help:
            first = inspect.cleandoc(command.help).split("\n\n")[0]
            command.short_help = " ".join(first.split())
        if hasattr(command, "commands"):
            _one_line_summaries(command)


def _new_app() -> typer.Typer:
    return typer.Typer(
        cls=Commands,
        name="gpuprices",
        help="Where GPU compute is cheapest today: scrape, store, compare.",
        no_args_is_help=True,
        pretty_exceptions_enable=False,
        add_completion=False,
    )


app = _new_app()

def _version(value: bool) -> None:
    if value:
        from gpuprices import __version__

        typer.echo(f"gpuprices {__version__}")
        raise typer.Exit()


@app.callback()
def _root(
    version: Annotated[bool, typer.Option("--version", callback=_version, is_eager=True,
                                          help="print the version and exit")] = False,
    wide: Annotated[bool, typer.Option(
        "--wide", help="tables show every column, whole (default: they fit the terminal); "
        "also accepted after any command")] = False,
) -> None:
    """Where GPU compute is cheapest today: scrape, store, compare."""


for commands in (commands_data, commands_reports, commands_stock, commands_ops, commands_market,
                 commands_history, commands_board, commands_index, commands_mcp):
    commands.register(app)


def _command_named(args: list[str]) -> str | None:
    """The command a command line runs: its first word that is not an option (the root
    options, --wide and --version, take no value); None when there is none."""
    for arg in args:
        if arg == "--":
            return None
        if not arg.startswith("-"):
            return arg
    return None


def only(name: str | None) -> typer.Typer:
    """The app with one command (or command group): typer turns every registered command
    into a click command on each run (each signature and its type hints read: about as long as
    DuckDB's own import), so a run that names its command builds only that one; the same
    root options, help and errors. The whole app when `name` is none of its commands."""
    lean = _new_app()
    lean.registered_callback = app.registered_callback
    lean.registered_commands = [
        c for c in app.registered_commands
        if (c.name or get_command_name(c.callback.__name__ if c.callback else "")) == name]
    lean.registered_groups = [g for g in app.registered_groups if g.name == name]
    return lean if lean.registered_commands or lean.registered_groups else app


def main() -> None:
    # DuckDB's client makes an aware datetime through pytz, whose first look-up of a zone not
    # spelled "UTC" (the session's zone is the system's: Etc/UTC, Europe/Berlin ...) opens
    # each of its ~600 zone files to list the zones it has: ~7 ms of a plain table with a
    # time in it. pytz's own switch skips that check; its wheel ships every zone it lists.
    os.environ.setdefault("PYTZ_SKIPEXISTSCHECK", "1")
    try:
        only(_command_named(sys.argv[1:]))()
    except BrokenPipeError:  # `gpuprices query ... | head`
        sys.stderr.close()
        sys.exit(0)


if __name__ == "__main__":
    main()
