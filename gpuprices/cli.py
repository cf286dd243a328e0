"""`gpuprices`: a thin command line over the same functions the flows use.

Commands that only read (parse, query, sources, ...) never import Prefect, so they start fast;
`refresh` and `report` run their flow's work directly unless a Prefect run is asked for
(--prefect, GPUPRICES_PREFECT=1) or a Prefect API is configured (PREFECT_API_URL).
Each group of commands is a module with a `register(app)`; shared options are in options.py.
"""

from __future__ import annotations

import errno
import re
import sys

import click
import typer
from typer.core import TyperGroup

from gpuprices import (
    commands_board,
    commands_data,
    commands_history,
    commands_market,
    commands_ops,
    commands_reports,
    commands_stock,
)
from gpuprices.options import fail

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


class Commands(TyperGroup):
    """Every command's door for one-line errors: a setting out of range (exit 2), a file that
    cannot be written, or a write the file system refused (full disk, read-only: exit 1)
    prints `error: ...`, no traceback."""

    def invoke(self, ctx: click.Context) -> object:
        from contract.files import FileWriteError
        from contract.settings import SettingsError

        try:
            return super().invoke(ctx)
        except SettingsError as exc:
            raise fail(str(exc), 2) from None
        except FileWriteError as exc:
            raise fail(str(exc)) from None
        except Exception as exc:
            message = _io_failure(exc)
            if message is None:
                raise
            raise fail(message) from None


app = typer.Typer(
    cls=Commands,
    name="gpuprices",
    help="Where GPU compute is cheapest today: scrape, store, compare.",
    no_args_is_help=True,
    pretty_exceptions_enable=False,
    add_completion=False,
)

for commands in (commands_data, commands_reports, commands_stock, commands_ops, commands_market,
                 commands_history, commands_board):
    commands.register(app)


def main() -> None:
    try:
        app()
    except BrokenPipeError:  # `gpuprices query ... | head`
        sys.stderr.close()
        sys.exit(0)


if __name__ == "__main__":
    main()
