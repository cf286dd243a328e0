"""Skipped rows counted by reason: the one mechanism (contract.Skips in a Parsed), how
SourceDef normalises a parser's answer, the parsers that count now (lambda-page, runpod-page,
paperspace, modal) on pages written for these tests, and `gpuprices parse` printing them."""

from __future__ import annotations

import json
from datetime import UTC, datetime
from pathlib import Path

import pytest

from contract import Parsed, ParseError, RawCapture, Skips, rows_frame
from scrapers import lambda_page, modal, paperspace, runpod_page
from scrapers.base import SourceDef
from scrapers.pagekit import no_price_reason

FETCHED = datetime(2026, 3, 2, tzinfo=UTC)


def report(source: SourceDef, body: str) -> Parsed:
    return source.parse_report(RawCapture(source.name, source.url, FETCHED, body.encode()))


def test_skips_describe_most_first_then_by_reason() -> None:
    skips = Skips()
    skips.skip("hidden row")
    skips.skip("contact sales", 12)
    skips.skip("non-USD price", 1)
    skips.skip("never seen", 0)  # a zero count is not a reason
    assert skips.describe() == "12 contact sales, 1 hidden row, 1 non-USD price"
    assert "never seen" not in skips and Skips().describe() == ""


@pytest.mark.parametrize(("text", "reason"), [
    ("Contact sales", "contact sales"), ("Talk to us", "contact sales"),
    ("Sold out", "sold out"), ("Coming soon", "coming soon"), ("N/A", "no price (n/a)"),
    ("-", "no price (n/a)"), ("$0.00/hr", "no price (zero)"), ("ask", "no price (unreadable)"),
])
def test_no_price_reason_names_what_the_cell_says(text: str, reason: str) -> None:
    assert no_price_reason(text) == reason


def _source(parse_fn: object, kind: str = "api") -> SourceDef:
    return SourceDef(name="t", provider="p", kind=kind, url="u",  # type: ignore[arg-type]
                     example=Path("x"), example_as_of="2026-01-01", fetch_fn=None,
                     parse_fn=parse_fn)


def test_parse_report_takes_a_plain_frame_or_a_parsed() -> None:
    rows = [{"offering": "o", "gpu_name": "H100", "price_usd_per_hour": 2.0}]
    plain = _source(lambda raw: rows_frame(rows)).parse_report(
        RawCapture("t", "u", FETCHED, b""))
    assert (plain.strategy, plain.skips, plain.frame["provider"].to_list()) == ("api", {}, ["p"])
    counted = _source(lambda raw: Parsed(rows_frame(rows), Skips({"contact sales": 2})),
                      kind="page")
    got = counted.parse_report(RawCapture("t", "u", FETCHED, b""))
    assert (got.strategy, dict(got.skips)) == ("page", {"contact sales": 2})
    assert counted.parse(RawCapture("t", "u", FETCHED, b"")).equals(got.frame)


# --- lambda-page ----------------------------------------------------------------------------

LAMBDA_ROWS = (
    "<table><tr><th>Instance</th><th>GPU memory</th><th>vCPUs</th><th>Price</th></tr>"
    "<tr><td>On-demand 1x NVIDIA A10</td><td>24 GB</td><td>30</td><td>$0.75 / GPU / hr</td></tr>"
    "<tr><td>On-demand 8x NVIDIA H100 SXM</td><td>80 GB</td><td>208</td><td>Sold out</td></tr>"
    "<tr><td>Reserved 8x NVIDIA H100 SXM</td><td>80 GB</td><td>208</td>"
    "<td>CONTACT SALES</td></tr>"
    "<tr><td>Reserved 1x NVIDIA A10</td><td>24 GB</td><td>30</td><td>$0.50 / GPU / hr</td></tr>"
    "<tr><td>On-demand 1x NVIDIA A6000</td><td>48 GB</td><td>14</td><td>$0.00 / GPU / hr</td>"
    "</tr></table>")


def test_lambda_rows_counts_sold_out_contact_sales_zero_and_termless_reserved() -> None:
    got = report(lambda_page.SOURCE, LAMBDA_ROWS)
    assert got.strategy == "table/rows"
    assert got.frame.select("offering", "price_usd_per_hour").rows() == [("gpu_1x_a10", 0.75)]
    assert dict(got.skips) == {"sold out": 1, "contact sales": 1, "no price (zero)": 1,
                               "reserved price without a stated term": 1}


def test_lambda_tabs_count_unpriced_cells() -> None:
    page = ('<div role="tablist"><button role="tab" id="t1">1x</button></div>'
            '<div role="tabpanel" aria-labelledby="t1"><table>'
            '<tr><th>NVIDIA A10</th><td data-label="VRAM/GPU">24 GB</td>'
            '<td data-label="PRICE/GPU/HR*">$0.75</td></tr>'
            '<tr><th>NVIDIA B200</th><td data-label="VRAM/GPU">180 GB</td>'
            '<td data-label="PRICE/GPU/HR*">Coming soon</td></tr></table></div>')
    got = report(lambda_page.SOURCE, page)
    assert (got.strategy, got.frame.height, dict(got.skips)) == (
        "table/tabs", 1, {"coming soon": 1})


# --- runpod-page ----------------------------------------------------------------------------

def test_runpod_next_data_counts_false_flags_and_flagless_placeholders() -> None:
    records = [
        {"id": "NVIDIA A40", "displayName": "A40", "memoryInGb": 48, "securePrice": 0.4,
         "communityPrice": 0.5, "secureCloud": True, "communityCloud": False},
        {"id": "NVIDIA L4", "displayName": "L4", "memoryInGb": 24, "securePrice": 0.5,
         "communityPrice": 0.3},
    ]
    page = ('<script id="__NEXT_DATA__" type="application/json">'
            + json.dumps({"props": {"gpuTypes": records}}) + "</script>")
    got = report(runpod_page.SOURCE, page)
    assert got.strategy == "next-data"
    assert sorted(got.frame.select("offering", "pricing").rows()) == [
        ("NVIDIA A40", "on_demand"), ("NVIDIA L4", "community")]
    assert dict(got.skips) == {"price behind a false cloud flag (placeholder)": 1,
                               "placeholder price 0.50 (no cloud flags)": 1}


def test_runpod_data_attributes_count_a_cloud_without_a_price() -> None:
    page = ('<a class="gpu-pricing-row"><div class="gpu-pricing-row__model-wrapper">H100 SXM'
            '</div><div data-secure-cloud-price="$2.69" data-community-cloud-price="">$2.69'
            "</div></a>")
    got = report(runpod_page.SOURCE, page)
    assert (got.frame.height, dict(got.skips)) == (1, {"no price in that cloud (empty or zero)": 1})


# --- paperspace ------------------------------------------------------------------------------

def test_paperspace_table_counts_cpu_only_and_unpriced_machines() -> None:
    page = ("<table><tr><th>Machine</th><th>GPU</th><th>Hourly</th></tr>"
            "<tr><td>C5</td><td>CPU only</td><td>$0.08/hr</td></tr>"
            "<tr><td>A6000</td><td>NVIDIA A6000</td><td>$1.89/hr</td></tr>"
            "<tr><td>H100x8</td><td>8x NVIDIA H100</td><td>Contact sales</td></tr></table>")
    got = report(paperspace.SOURCE, page)
    assert got.frame.select("offering", "price_usd_per_hour").rows() == [("A6000", 1.89)]
    assert dict(got.skips) == {"CPU-only machine": 1, "contact sales": 1}


def test_paperspace_cards_count_hidden_cards_and_termless_marked_prices() -> None:
    def card(name: str, price: str, hidden: bool = False) -> str:
        return (f'<div class="card{" hide" if hidden else ""}"><h1 class="instance-names">{name}'
                f'</h1><div class="wrap">$ <h1 class="instance-price-2">{price}</h1> / hour'
                "</div></div>")

    page = (card("A100-80G", "3.18") + card("A4000", "0.76", hidden=True)
            + card("H100", "2.24*") + "<p>*Pricing shown is an estimate.</p>")
    got = report(paperspace.SOURCE, page)
    assert got.frame.select("offering", "price_usd_per_hour").rows() == [("A100-80G", 3.18)]
    assert dict(got.skips) == {"hidden card": 1, "marked price whose footnote states no term": 1}


# --- modal -----------------------------------------------------------------------------------

def test_modal_counts_cpu_and_memory_line_items() -> None:
    def item(name: str, price: str) -> str:
        return f'<div class="line-item"><p>{name}</p><p class="price">{price}</p></div>'

    page = (item("Nvidia H100", "$0.001097 / sec")
            + item("Physical core", "$0.0000131 / core / sec")
            + item("Memory", "$0.00000222 / GiB / sec"))
    got = report(modal.SOURCE, page)
    assert (got.frame.height, dict(got.skips)) == (1, {"not a per-GPU price (CPU, memory)": 2})


# --- the CLI ---------------------------------------------------------------------------------

def test_parse_command_prints_the_strategy_and_the_skips(tmp_path: Path) -> None:
    from typer.testing import CliRunner

    from gpuprices.cli import app

    page = tmp_path / "lambda.html"
    page.write_text(LAMBDA_ROWS)
    result = CliRunner().invoke(app, ["parse", "lambda-page", str(page), "--format", "csv"])
    assert result.exit_code == 0, result.output
    assert ("read by strategy: table/rows (1 rows); skipped: 1 contact sales, "
            "1 no price (zero), 1 reserved price without a stated term, 1 sold out"
            ) in result.output


def test_a_page_whose_every_row_is_skipped_is_a_parse_error_naming_the_skips() -> None:
    page = LAMBDA_ROWS.replace("$0.75 / GPU / hr", "Sold out")
    with pytest.raises(ParseError, match="instance rows but no price"):
        report(lambda_page.SOURCE, page)  # lambda's own, more specific error comes first
    cards = ('<div class="card"><h1 class="instance-names">A100-80G</h1><div class="wrap">'
             '<h1 class="instance-price-2">Contact sales</h1></div></div>')
    with pytest.raises(ParseError, match=r"every row skipped \(1 contact sales\)"):
        report(paperspace.SOURCE, cards)

