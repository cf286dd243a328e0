"""The MCP server through the SDK's own client: the tool list, calls answered from the demo
warehouse (the same numbers as the Python API), bad inputs as tool errors, the methodology
resource, and a stdio session whose stdout carries the protocol only."""

from __future__ import annotations

import os
import sys
from pathlib import Path
from typing import Any

import anyio
import pytest
from mcp import Client, StdioServerParameters

import gpuprices
from gpuprices.mcp_server import TOOLS, build_server

REPO = Path(__file__).resolve().parents[2]


def session(demo: Path, steps: Any) -> Any:
    async def run() -> Any:
        async with Client(build_server(demo)) as client:
            return await steps(client)
    return anyio.run(run)


def call(demo: Path, tool: str, arguments: dict[str, Any]) -> Any:
    async def steps(client: Client) -> Any:
        return await client.call_tool(tool, arguments)
    return session(demo, steps)


def test_the_tools_are_listed_read_only_with_their_ranges(demo: Path) -> None:
    async def steps(client: Client) -> Any:
        return (await client.list_tools()).tools
    tools = {t.name: t for t in session(demo, steps)}
    assert set(tools) == set(TOOLS)
    assert all(t.annotations and t.annotations.read_only_hint for t in tools.values())
    limit = tools["cheapest"].input_schema["properties"]["limit"]
    assert (limit["minimum"], limit["maximum"]) == (1, 10_000)
    gpus = tools["cluster_quote"].input_schema["properties"]["gpus"]
    assert (gpus["minimum"], gpus["maximum"]) == (1, 1_000_000)
    assert tools["explain"].input_schema["properties"]["what"]["enum"] == [
        "market", "cheapest", "scenario"]


def test_cheapest_answers_what_the_api_answers(demo: Path) -> None:
    result = call(demo, "cheapest", {"gpu": "h100 sxm", "limit": 3})
    assert not result.is_error
    rows = result.structured_content["rows"]
    expected = gpuprices.cheapest(gpu="H100 SXM", limit=3, warehouse=demo)
    assert [r["provider"] for r in rows] == expected["provider"].to_list()
    assert [r["price_usd_per_gpu_hour"] for r in rows] == \
        expected["price_usd_per_gpu_hour"].to_list()
    assert rows[0]["source"] and rows[0]["gpu_model"] == "H100 SXM"


@pytest.mark.parametrize(("tool", "arguments"), [
    ("market_price", {"gpu": "A100 80GB"}),
    ("history", {"gpu": "H100 SXM", "days": 30}),
    ("changes", {"since": "2020-01-01", "limit": 5}),
    ("cluster_quote", {"gpu": "H100", "gpus": 64, "days": 30}),
    ("vram_fit", {"params": "70B", "method": "qlora", "limit": 3}),
    ("source_freshness", {}),
])
def test_every_question_tool_answers_from_the_demo(demo: Path, tool: str,
                                                   arguments: dict[str, Any]) -> None:
    result = call(demo, tool, arguments)
    assert not result.is_error, result.content
    assert result.structured_content["count"] == len(result.structured_content["rows"]) > 0


def test_rent_vs_buy_and_explain(demo: Path) -> None:
    costs = call(demo, "rent_vs_buy", {"gpu": "H100 SXM", "utilization": 0.5})
    assert not costs.is_error and costs.structured_content["servers"]
    text = call(demo, "explain", {"what": "cheapest", "name": "H100 SXM"})
    assert not text.is_error
    assert text.content[0].text == gpuprices.explain("cheapest", "H100 SXM", warehouse=demo)


@pytest.mark.parametrize(("tool", "arguments", "says"), [
    ("cheapest", {"gpu": "H999"}, "unknown GPU 'H999'"),
    ("cheapest", {"limit": 0}, "limit 0 is out of range: allowed 1 to 10,000"),
    ("cheapest", {"min_vram_gb": 5000}, "min_vram 5000 is out of range"),
    ("cheapest", {"pricing": ["cheap"]}, "unknown pricing cheap"),
    ("history", {"gpu": "H100", "days": 0}, "days 0 is out of range: allowed 1 to 3,660"),
    ("cluster_quote", {"gpu": "H100", "gpus": 2_000_000}, "gpus 2e+06 is out of range"),
    ("changes", {"since": "last week"}, "since 'last week' is not a day"),
    ("market_price", {"segment": "cheap"}, "segment is one of all"),
    ("rent_vs_buy", {"utilization": 2.0}, "utilization"),
    ("vram_fit", {"params": "lots"}, "cannot read a parameter count from 'lots'"),
    ("explain", {"what": "everything", "name": "H100"}, "what"),
    ("cheapest", {"limit": "many"}, "limit"),
])
def test_bad_inputs_are_tool_errors_with_the_reason(demo: Path, tool: str,
                                                    arguments: dict[str, Any],
                                                    says: str) -> None:
    result = call(demo, tool, arguments)
    assert result.is_error
    assert says in result.content[0].text


def test_a_missing_warehouse_is_a_tool_error(tmp_path: Path) -> None:
    result = call(tmp_path / "none.duckdb", "cheapest", {})
    assert result.is_error and "no warehouse at" in result.content[0].text


def test_the_methodology_is_a_resource(demo: Path) -> None:
    async def steps(client: Client) -> Any:
        listed = [str(r.uri) for r in (await client.list_resources()).resources]
        read = await client.read_resource("gpuprices://methodology")
        return listed, read.contents[0].text
    listed, text = session(demo, steps)
    assert {"gpuprices://methodology", "gpuprices://export-schema"} <= set(listed)
    assert text == (REPO / "docs" / "market.md").read_text(encoding="utf-8")


def _files(folder: Path) -> dict[str, float]:
    return {str(p): p.stat().st_mtime for p in folder.rglob("*") if p.is_file()}


def test_stdio_session_reads_the_snapshot_and_writes_nothing(demo: Path) -> None:
    before = _files(demo.parent)
    params = StdioServerParameters(
        command=sys.executable, args=["-m", "gpuprices", "mcp", "-w", str(demo)],
        env={**os.environ, "PYTHONPATH": str(REPO)}, cwd=str(REPO))

    async def run() -> Any:
        async with Client(params) as client:
            names = [t.name for t in (await client.list_tools()).tools]
            answer = await client.call_tool("market_price", {"gpu": "A100 80GB",
                                                             "segment": "all"})
            return names, answer
    names, answer = anyio.run(run)
    assert set(names) == set(TOOLS)
    assert not answer.is_error
    [row] = answer.structured_content["rows"]
    expected = gpuprices.market("A100 80GB", segment="all", warehouse=demo)
    assert row["providers"] == expected["providers"][0]
    assert _files(demo.parent) == before  # no file written or touched
