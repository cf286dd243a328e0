"""`gpuprices mcp`: the price questions as MCP tools for agents (the official `mcp` SDK).

Every tool is read-only and calls the same function the CLI and `import gpuprices` call
(gpuprices.api): the warehouse's read path is opened per call (the newest read snapshot, never
the writer's file, never written), inputs are checked with the CLI's ranges (gpuprices.inputs;
the JSON schema of each tool shows them), GPU names resolve through schemas.names, and a
question that cannot be answered comes back as a tool error with one line saying why.

Resources: the market-price methodology (docs/market.md), the semantic layer's map
(docs/semantic.md) and the export schema (docs/export.md).

Transports: stdio (default; stdout carries the protocol only, logs go to stderr) or streamable
HTTP on 127.0.0.1 (`--http`, `--port`), never on another interface.
"""

from __future__ import annotations

import json
from collections.abc import Callable
from functools import wraps
from pathlib import Path
from typing import TYPE_CHECKING, Annotated, Any, Literal, TypeVar

from pydantic import Field

from gpuprices import api, inputs
from gpuprices.errors import GpupricesError

if TYPE_CHECKING:
    import polars as pl
    from mcp.server.mcpserver import MCPServer

__all__ = ["DOCS", "HOST", "TOOLS", "build_server", "rows", "serve"]

HOST = "127.0.0.1"
DEFAULT_PORT = 8765
_REPO_DOCS = Path(__file__).resolve().parents[1] / "docs"
_PACKAGED_DOCS = Path(__file__).resolve().parent / "docs"  # where a wheel puts them
# uri -> (file, name, what it is)
DOCS = {
    "gpuprices://methodology": ("market.md", "market-methodology",
                                "How the market price is made: comparable offers, the "
                                "two-stage median, withheld values, moves."),
    "gpuprices://semantic-layer": ("semantic.md", "semantic-layer",
                                   "Where each concept (current price, comparable offer, "
                                   "cheapest, market price, freshness) is defined once."),
    "gpuprices://export-schema": ("export.md", "export-schema",
                                  "The Parquet history's layout, columns and provenance, and "
                                  "the naming rule of price columns."),
}
F = TypeVar("F", bound=Callable[..., Any])


def _ranged(allowed: inputs.Range, text: str) -> Any:
    """A parameter's description with its range in the JSON schema; the range is enforced by
    gpuprices.inputs (one message for every door), not by pydantic."""
    return Field(description=text, json_schema_extra={"minimum": allowed.low,
                                                      "maximum": allowed.high})


Gpu = Annotated[str | None, Field(description="GPU model or family, e.g. 'H100', 'A100 80GB', "
                                  "'RTX 4090' (a family means every variant); none: all")]
GpuNeeded = Annotated[str, Field(description="GPU model or family, e.g. 'H100 SXM'")]
Pricing = Annotated[list[str] | None, Field(
    description="pricing kinds that count: on_demand, spot, interruptible, community, "
    "community_spot, reserved, serverless, inference, flex, dynamic (default: on_demand, "
    "community, serverless)")]
Providers = Annotated[list[str] | None, Field(description="only these providers, e.g. "
                                              "['lambda', 'runpod']")]
Day = Annotated[str | None, Field(description="UTC day YYYY-MM-DD (default: today)")]
Regions = Annotated[list[str] | None, Field(description="only offers in these regions, as "
                                            "their providers name them, e.g. ['us-east-1']")]
Geos = Annotated[list[str] | None, Field(description="only offers in these geographies: US, "
                                         "Canada, EU, UK, APAC, LATAM, MEA, or global (prices "
                                         "that name no region)")]
Currency = Annotated[str | None, Field(description="amounts in this ISO currency, e.g. 'EUR', "
                                       "at the ECB reference rate of the day shown (default: "
                                       "USD)")]
Limit = Annotated[int, _ranged(inputs.LIMIT, "rows to return")]


def rows(frame: pl.DataFrame) -> list[dict[str, Any]]:
    """A frame as JSON rows (dates and times as ISO text, nulls as null)."""
    return json.loads(frame.write_json()) if frame.height else []


def _answer(frame: pl.DataFrame, **about: Any) -> dict[str, Any]:
    return {**about, "count": frame.height, "rows": rows(frame)}


def _tool_errors(fn: F) -> F:
    """A question without an answer, or a warehouse that cannot be read, is a tool error
    with its one-line reason (not a crash the agent sees as `Error executing tool`)."""
    from mcp.server.mcpserver.exceptions import ToolError

    from warehouse.errors import WarehouseError

    @wraps(fn)
    def guarded(*args: Any, **kwargs: Any) -> Any:
        try:
            return fn(*args, **kwargs)
        except (GpupricesError, WarehouseError) as exc:
            raise ToolError(str(exc)) from None
    return guarded  # type: ignore[return-value]


def build_server(warehouse: str | Path | None = None) -> MCPServer:
    """The MCP server over the warehouse at `warehouse` (default: $GPUPRICES_WAREHOUSE, else
    data/gpu_prices.duckdb): its tools and resources."""
    from importlib.metadata import version

    from mcp.server.mcpserver import MCPServer
    from mcp.types import ToolAnnotations

    server = MCPServer(
        "gpuprices", version=version("gpuprices"), log_level="WARNING",
        instructions="GPU rental prices with provenance. Start with `cheapest` or "
        "`market_price`; `explain` shows how any number was made; `source_freshness` says how "
        "old each source's prices are. All tools are read-only. Prices are USD per GPU-hour "
        "unless a column says per hour (the whole offering); `currency` (e.g. 'EUR') gives "
        "them at the ECB rate of each row's day, the column names saying so.")
    read_only = ToolAnnotations(read_only_hint=True, destructive_hint=False,
                                idempotent_hint=True, open_world_hint=False)

    def tool(fn: F) -> F:
        server.add_tool(_tool_errors(fn), annotations=read_only)
        return fn

    @tool
    def cheapest(gpu: Gpu = None, min_vram_gb: Annotated[float | None, _ranged(
                     inputs.MIN_VRAM_GB, "per-GPU memory at least, GB")] = None,
                 pricing: Pricing = None, provider: Providers = None, limit: Limit = 20,
                 include_unavailable: bool = False, in_stock: bool = False,
                 region: Regions = None, geo: Geos = None,
                 currency: Currency = None) -> dict[str, Any]:
        """The cheapest comparable offers now, cheapest $/GPU-hour first: available, fresh
        (seen within 48 h), whole GPUs, no outliers. The first row of a GPU model is the
        cheapest every view names. Each row names its provider, offering, region, source and
        stock state; `in_stock`: only offers a source says can be rented now."""
        frame = api.cheapest(gpu, min_vram=min_vram_gb, pricing=pricing, provider=provider,
                             limit=limit, include_unavailable=include_unavailable,
                             in_stock=in_stock, region=region, geo=geo, currency=currency,
                             warehouse=warehouse)
        return _answer(frame)

    @tool
    def market_price(gpu: Gpu = None, day: Day = None,
                     segment: Annotated[str | None, Field(
                         description="all, hyperscaler, neocloud, marketplace, serverless or "
                         "unclassified (default: every segment)")] = None,
                     region: Regions = None, geo: Geos = None,
                     currency: Currency = None) -> dict[str, Any]:
        """The market price of a GPU-hour per GPU model on a day: the median across providers
        of each provider's median over its comparable offers, with min, p25, p75, max, the
        providers and offers counted; `withheld_reason` when it is not published. With
        `region` / `geo`: the market of the offers placed there."""
        frame = api.market(gpu, day=day, segment=segment, region=region, geo=geo,
                           currency=currency, warehouse=warehouse)
        return _answer(frame, day=str(inputs.as_day(day)))

    @tool
    def availability(gpu: GpuNeeded, days: Annotated[int, _ranged(
                         inputs.HISTORY_DAYS, "days back from now")] = 7,
                     region: Regions = None, geo: Geos = None,
                     pricing: Pricing = None) -> dict[str, Any]:
        """Could a GPU be rented? Per provider and region whose source says so: the share of
        the observations in stock, the last time it was in stock, and the stock state now
        (available, low, out_of_stock)."""
        found = api.availability_detail(gpu, days=days, region=region, geo=geo,
                                        pricing=pricing, warehouse=warehouse)
        return _answer(found.stock, quoted_without_stock=found.silent)

    @tool
    def history(gpu: GpuNeeded, days: Annotated[int, _ranged(inputs.HISTORY_DAYS,
                                                             "days back from today")] = 90,
                provider: Providers = None, pricing: Pricing = None, region: Regions = None,
                geo: Geos = None, currency: Currency = None) -> dict[str, Any]:
        """The cheapest comparable offer of a GPU per day, with each point's provenance
        (provider, offering, source, capture id, observed time); with `currency`, each day
        at the ECB rate of that day (a day without a rate: no amount, `fx_note` says why)."""
        frame = api.history(gpu, days=days, provider=provider, pricing=pricing, region=region,
                            geo=geo, currency=currency, warehouse=warehouse)
        return _answer(frame)

    @tool
    def changes(since: Annotated[str, Field(description="moves on or after this UTC day, "
                                            "YYYY-MM-DD")],
                gpu: Gpu = None, provider: Providers = None, pricing: Pricing = None,
                limit: Limit = 50, region: Regions = None, geo: Geos = None,
                currency: Currency = None) -> dict[str, Any]:
        """Price moves of current offerings since a day (old -> new per hour and per
        GPU-hour, %), newest first; only moves of the source that speaks for each offering.
        With `currency`: each move at the ECB rate of its day."""
        frame = api.changes(since, gpu=gpu, provider=provider, pricing=pricing, limit=limit,
                            region=region, geo=geo, currency=currency, warehouse=warehouse)
        return _answer(frame)

    @tool
    def explain(what: Annotated[Literal["market", "cheapest", "scenario"], Field(
                    description="which number: the market price, the cheapest offer, or a "
                    "scenario's cost")],
                name: Annotated[str, Field(description="GPU model or family (market, "
                                           "cheapest) or scenario name")],
                day: Day = None, pricing: Pricing = None, region: Regions = None,
                geo: Geos = None, currency: Currency = None) -> str:
        """How a number was made, step by step: the offers that counted (source, capture,
        time), the ones left out and why, and the arithmetic (with `currency`: every amount
        at the ECB rate of the day explained)."""
        return api.explain(what, name, day=day, pricing=pricing, region=region, geo=geo,
                           currency=currency, warehouse=warehouse)

    @tool
    def cluster_quote(gpu: GpuNeeded,
                      gpus: Annotated[int, _ranged(inputs.CLUSTER_GPUS, "GPUs in the "
                                                   "cluster")] = 512,
                      days: Annotated[int, _ranged(inputs.CLUSTER_DAYS, "days of use")] = 90,
                      pricing: Pricing = None, region: Regions = None, geo: Geos = None,
                      currency: Currency = None) -> dict[str, Any]:
        """What a cluster of GPUS GPUs for DAYS days costs at each provider, in its largest
        nodes, against the market price (list prices: capacity is not checked)."""
        frame = api.cluster(gpu, gpus=gpus, days=days, pricing=pricing, region=region,
                            geo=geo, currency=currency, warehouse=warehouse)
        return _answer(frame, gpus=gpus, days=days)

    @tool
    def rent_vs_buy(gpu: Gpu = None,
                    utilization: Annotated[float | None, Field(
                        description="share of hours used, 0.01 to 1 (default 0.7)")] = None,
                    years: Annotated[float | None, Field(
                        description="depreciation years, 1 to 15 (default 5)")] = None,
                    usd_per_kwh: Annotated[float | None, Field(
                        description="electricity $/kWh, 0 to 2 (default 0.10)")] = None,
                    pricing: Pricing = None, region: Regions = None, geo: Geos = None,
                    currency: Currency = None) -> dict[str, Any]:
        """Build vs rent: each server's full cost of ownership per useful GPU-hour, its
        break-even utilization and payback month against the market price and the cheapest
        rental; and the card alone (purchase / (cheapest rental - power))."""
        found = api.rent_vs_buy_detail(gpu, utilization=utilization, years=years,
                                       usd_per_kwh=usd_per_kwh, pricing=pricing,
                                       region=region, geo=geo, currency=currency,
                                       warehouse=warehouse)
        return {"servers": rows(found.servers),
                "cards": rows(found.cards) if found.cards is not None else []}

    @tool
    def vram_fit(params: Annotated[str, Field(description="model size, e.g. '70B', '7B', "
                                              "'124M' (1M to 100T)")],
                 method: Annotated[Literal["full", "lora", "qlora", "inference"], Field(
                     description="what the model is run for")] = "inference",
                 limit: Limit = 10, pricing: Pricing = None, region: Regions = None,
                 geo: Geos = None, currency: Currency = None) -> dict[str, Any]:
        """Which offers have the VRAM a model needs: the GB needed, and the cheapest
        comparable offers with that much memory in total, cheapest $/hour first."""
        needed = api.needed_vram_gb(params, method)
        frame = api.fit(params, method, limit=limit, pricing=pricing, region=region, geo=geo,
                        currency=currency, warehouse=warehouse)
        return _answer(frame, vram_needed_gb=needed)

    @tool
    def source_freshness() -> dict[str, Any]:
        """Every source: its provider, when its prices were last seen, whether they are stale
        (not seen within 48 h: left out of every comparison), its last run's status and error."""
        frame = api.sources(warehouse)
        keep = [c for c in ("source", "provider", "kind", "last_status", "stale",
                            "last_success_at", "prices_as_of", "latest_rows", "last_error")
                if c in frame.columns]
        return _answer(frame.select(keep))

    for uri, (file, name, text) in DOCS.items():
        server.add_resource(_doc_resource(uri, file, name, text))
    return server


def _doc(file: str) -> str:
    for folder in (_PACKAGED_DOCS, _REPO_DOCS):
        if (folder / file).is_file():
            return (folder / file).read_text(encoding="utf-8")
    raise FileNotFoundError(f"{file} is not installed with this gpuprices")


def _doc_resource(uri: str, file: str, name: str, text: str) -> Any:
    from mcp.server.mcpserver.resources import FunctionResource

    return FunctionResource.from_function(lambda: _doc(file), uri=uri, name=name,
                                          description=text, mime_type="text/markdown")


TOOLS = ("cheapest", "market_price", "availability", "history", "changes", "explain",
         "cluster_quote", "rent_vs_buy", "vram_fit", "source_freshness")


def serve(warehouse: str | Path | None = None, *, http: bool = False,
          port: int = DEFAULT_PORT) -> None:
    """Run the server until interrupted: stdio, or streamable HTTP on HOST:port/mcp."""
    server = build_server(warehouse)
    if http:
        inputs.MCP_PORT.check("port", port)
        server.run("streamable-http", host=HOST, port=port)
    else:
        server.run("stdio")
