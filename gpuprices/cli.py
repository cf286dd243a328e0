"""`gpuprices`: a thin command line over the same functions the flows use.

Commands that only read (parse, query, sources, ...) never import Prefect, so they start fast;
`refresh` and `report` run their flow's work directly unless a Prefect run is asked for
(--prefect, GPUPRICES_PREFECT=1) or a Prefect API is configured (PREFECT_API_URL).
Each group of commands is a module with a `register(app)`; shared options are in options.py.
"""

from __future__ import annotations

import sys

import typer

from gpuprices import (
    commands_board,
    commands_data,
    commands_history,
    commands_market,
    commands_ops,
    commands_reports,
)

app = typer.Typer(
    name="gpuprices",
    help="Where GPU compute is cheapest today: scrape, store, compare.",
    no_args_is_help=True,
    pretty_exceptions_enable=False,
    add_completion=False,
)

for commands in (commands_data, commands_reports, commands_ops, commands_market,
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
