"""`gpuprices mcp`: serve the price questions to agents over MCP (gpuprices.mcp_server)."""

from __future__ import annotations

from typing import Annotated

import typer

from gpuprices.inputs import MCP_PORT
from gpuprices.options import WarehouseOpt, in_range

__all__ = ["mcp", "register"]


def mcp(
    http: Annotated[bool, typer.Option(help="streamable HTTP on 127.0.0.1:PORT/mcp instead "
                                       "of stdio")] = False,
    port: Annotated[int, typer.Option(help="HTTP port (1024 to 65535)",
                                      callback=in_range(*MCP_PORT))] = 8765,
    warehouse: WarehouseOpt = None,
) -> None:
    """An MCP server with read-only tools: cheapest, market_price, history, changes, explain,
    cluster_quote, rent_vs_buy, vram_fit, source_freshness; the methodology as a resource.
    It reads the warehouse's read snapshot and never writes. Stdio by default (for an agent
    that starts it), or streamable HTTP on 127.0.0.1 with --http."""
    from gpuprices.mcp_server import serve

    if http:
        typer.echo(f"MCP over streamable HTTP at http://127.0.0.1:{port}/mcp (Ctrl-C stops)",
                   err=True)
    serve(warehouse, http=http, port=port)


def register(app: typer.Typer) -> None:
    app.command()(mcp)
