"""The shared page toolkit (scrapers/pagekit.py) on small pages written for these tests."""

from __future__ import annotations

from datetime import UTC, datetime

import polars as pl
import pytest

from contract import Parsed, ParseError, RawCapture, Skips, rows_frame
from contract.prices import clean_text, parse_price, price_unit
from scrapers.pagekit import (
    StrategyParser,
    badges_say_unavailable,
    commitment_term,
    count_in_name,
    data_attribute_elements,
    grid_tables,
    is_hidden,
    json_ld_products,
    name_badges,
    next_data,
    offers_of,
    parse_with_strategies,
    read_tables,
    soup_of,
)


def raw(body: str) -> RawCapture:
    return RawCapture(source="t", url="https://example.test/pricing",
                      fetched_at=datetime(2026, 1, 1, tzinfo=UTC), body=body.encode())


# --- price text -----------------------------------------------------------------------------

@pytest.mark.parametrize(("text", "amount", "currency", "period", "per_gpu"), [
    ("$2.99 / GPU / hr", 2.99, "USD", "hour", True),
    ("$20.72 / hr", 20.72, "USD", "hour", None),
    ("$0.000694 / s", 0.000694, "USD", "second", None),
    ("$0.001097 / sec", 0.001097, "USD", "second", None),
    ("$30 / mo", 30.0, "USD", "month", None),
    ("$1.99/GPU-hr", 1.99, "USD", "hour", True),
    ("$1.89 / H100 / hr", 1.89, "USD", "hour", True),
    ("$1.65 per A100 per hour", 1.65, "USD", "hour", True),
    ("$12.00 per instance per hour", 12.0, "USD", "hour", False),
    ("€0.75/h", 0.75, "EUR", "hour", None),
    ("1.20 GBP per hour", 1.2, "GBP", "hour", None),
    ("$2 .0000", 2.0, "USD", None, None),  # a typo seen on a real page: still two dollars
    ("US$ 1,234.50 per month", 1234.5, "USD", "month", None),
    ("8x H100 $20.72 / hr", 20.72, "USD", "hour", None),  # the count is not the price
])
def test_price_text(text: str, amount: float, currency: str, period: str | None,
                    per_gpu: bool | None) -> None:
    price = parse_price(text)
    assert price is not None
    assert (price.amount, price.currency, price.period, price.per_gpu) == (
        pytest.approx(amount), currency, period, per_gpu)


@pytest.mark.parametrize("text", ["Contact sales", "CONTACT SALES", "Coming soon", "—", "",
                                  "n/a", "Sold out", "12 vCPUs"])
def test_text_without_a_price_is_none(text: str) -> None:
    assert parse_price(text) is None


def test_from_prices_are_flagged_and_hourly_converts_periods() -> None:
    price = parse_price("from $1.99/hr")
    assert price is not None and price.starting_from
    assert not parse_price("$1.99/hr").starting_from  # type: ignore[union-attr]
    assert parse_price("$0.001 / sec").hourly() == pytest.approx(3.6)  # type: ignore[union-attr]
    assert parse_price("$730 / month").hourly() == pytest.approx(1.0)  # type: ignore[union-attr]
    with pytest.raises(ParseError, match="names no period"):
        parse_price("$2 .0000").hourly()  # type: ignore[union-attr]


def test_a_bare_number_needs_the_callers_currency() -> None:
    assert parse_price("2.24*") is None
    price = parse_price("2.24*", default_currency="USD", default_period="hour")
    assert price is not None and (price.amount, price.period) == (2.24, "hour")


@pytest.mark.parametrize(("header", "period", "per_gpu"), [
    ("PRICE/GPU/HR*", "hour", True),
    ("PRICE/HR*", "hour", None),
    ("On-Demand Price (/hr)", "hour", None),
    ("Price", None, None),
])
def test_unit_words_of_headers(header: str, period: str | None, per_gpu: bool | None) -> None:
    assert price_unit(header) == (period, per_gpu)


@pytest.mark.parametrize(("text", "term"), [
    ("pricing is for a 3-year commitment", "3y"), ("36 months", "3y"), ("6-month term", "6mo"),
    ("1 year reserved", "1y"), ("three-year contract", "3y"), ("$5 / month", None),
    ("On-demand", None),
])
def test_commitment_terms(text: str, term: str | None) -> None:
    assert commitment_term(text) == term


def test_clean_text_drops_invisible_characters() -> None:
    assert clean_text("H100\u200d\u00a0 SXM\u200b\n") == "H100 SXM"


# --- visibility -----------------------------------------------------------------------------

def test_hidden_elements_and_their_children() -> None:
    soup = soup_of('<div class="hide"><p id="a">x</p></div><p id="b" style="display: none">y</p>'
                   '<template><p id="c">z</p></template><p id="d" hidden>w</p>'
                   '<div class="w-condition-invisible"><p id="e">v</p></div><p id="f">shown</p>')
    hidden = {i: is_hidden(soup.find(id=i)) for i in "abcdef"}
    assert hidden == {"a": True, "b": True, "c": True, "d": True, "e": True, "f": False}


# --- structured data ------------------------------------------------------------------------

def test_json_ld_products_in_graphs_and_lists_and_their_offers() -> None:
    soup = soup_of(
        '<script type="application/ld+json">{"@graph": [{"@type": "Organization", "name": "X"},'
        ' {"@type": "Product", "name": "G1", "offers": {"@type": "AggregateOffer", "offers": ['
        '{"@type": "Offer", "price": "1.10"}, {"@type": "Offer", "price": "0.90"}]}}]}</script>'
        '<script type="application/ld+json">[{"@type": ["Product"], "name": "G2",'
        ' "offers": {"@type": "Offer", "price": 2}}]</script>'
        '<script type="application/ld+json">{not json</script>')
    products = json_ld_products(soup)
    assert [p["name"] for p in products] == ["G1", "G2"]
    assert [o["price"] for o in offers_of(products[0])] == ["1.10", "0.90"]
    assert [o["price"] for o in offers_of(products[1])] == [2]


def test_next_data_json_and_broken_json() -> None:
    page = '<script id="__NEXT_DATA__" type="application/json">{"props": {"a": [1]}}</script>'
    assert next_data(soup_of(page)) == {"props": {"a": [1]}}
    assert next_data(soup_of("<p>no next</p>")) is None
    with pytest.raises(ParseError, match="__NEXT_DATA__"):
        next_data(soup_of('<script id="__NEXT_DATA__">{"props": </script>'))


def test_data_attribute_elements_skip_hidden_ones() -> None:
    soup = soup_of('<div data-price-a="1">a</div><div class="hide"><span data-price-b="2">b'
                   '</span></div><div data-other="3">c</div>')
    assert [e.get_text() for e in data_attribute_elements(soup, "price-")] == ["a"]


# --- tables ---------------------------------------------------------------------------------

def test_tables_by_header_text_with_colspan_and_hidden_rows() -> None:
    soup = soup_of(
        "<h3>Region: Europe</h3><table><thead><tr><th>GPU</th><th colspan=2>Price</th></tr>"
        "</thead><tbody><tr><td>H100</td><td>$2.00 / hr</td><td>$1.00 / hr</td></tr>"
        '<tr style="display:none"><td>B200</td><td>$9</td><td>$9</td></tr></tbody></table>'
        '<table class="hide"><tr><th>X</th></tr><tr><td>1</td></tr></table>')
    [table] = read_tables(soup)
    assert table.headers == ["GPU", "Price", "Price"]
    assert table.rows == [["H100", "$2.00 / hr", "$1.00 / hr"]]
    assert table.caption == "Region: Europe"
    assert table.column("price") == 1 and table.column("vcpu") is None
    assert list(table.records()) == [{"GPU": "H100", "Price": "$1.00 / hr"}]


def test_cms_tables_with_td_headers_and_rows_cut_out_of_their_table() -> None:
    soup = soup_of("<table><tr><td><b>Instance</b></td><td>Price</td></tr>"
                   "<tr><td>1x A10</td><td>$0.60 / hr</td></tr></table>")
    [table] = read_tables(soup)
    assert (table.headers, table.rows) == (["Instance", "Price"], [["1x A10", "$0.60 / hr"]])
    # An excerpt cut inside a table: the rows still read, as a table without an element.
    orphans = soup_of("<span>PRICE</span></td></tr><tr><td>1x A10</td><td>$0.60 / hr</td></tr>"
                      "</tbody></table>")
    [cut] = read_tables(orphans)
    assert cut.element is None and cut.rows == [["1x A10", "$0.60 / hr"]]


# --- running strategies ---------------------------------------------------------------------

def _declines(raw: RawCapture, soup: object) -> pl.DataFrame | None:
    return None


def _empty(raw: RawCapture, soup: object) -> pl.DataFrame | None:
    return rows_frame([])


def _reads(raw: RawCapture, soup: object) -> pl.DataFrame | None:
    return rows_frame([{"provider": "p", "offering": "o", "price_usd_per_hour": 1.0}])


def _skips_all(raw: RawCapture, soup: object) -> Parsed:
    return Parsed(rows_frame([]), Skips({"contact sales": 2, "hidden row": 1}))


def _reads_and_skips(raw: RawCapture, soup: object) -> Parsed:
    return Parsed(rows_frame([{"offering": "o", "price_usd_per_hour": 1.0}]),
                  Skips({"non-USD price": 3}))


def test_first_strategy_that_reads_rows_wins_and_is_named() -> None:
    parsed = parse_with_strategies(
        "t", raw("<p/>"), [("json-ld", _declines), ("table", _empty), ("cards", _reads)])
    assert (parsed.strategy, parsed.frame.height, parsed.skips) == ("cards", 1, {})


def test_the_winning_strategy_keeps_its_skips_a_losing_one_does_not() -> None:
    parsed = StrategyParser("t", (("table", _skips_all), ("cards", _reads_and_skips)))(
        raw("<p/>"))
    assert (parsed.strategy, dict(parsed.skips)) == ("cards", {"non-USD price": 3})


def test_a_page_whose_every_row_is_skipped_fails_naming_the_skips() -> None:
    parser = StrategyParser("t", (("json-ld", _declines), ("table", _skips_all)))
    with pytest.raises(ParseError, match=r"every row skipped \(2 contact sales, 1 hidden row\)"):
        parser(raw("<p/>"))


def test_unknown_layout_names_every_strategy_tried() -> None:
    parser = StrategyParser(source="t", strategies=(("json-ld", _declines), ("cards", _empty)))
    with pytest.raises(ParseError, match="t: layout not recognised; tried json-ld, cards"):
        parser(raw("<p/>"))


def test_accepts_refuses_before_any_strategy_runs() -> None:
    def refuse(raw: RawCapture) -> None:
        raise ParseError("not a page")

    parser = StrategyParser(source="t", strategies=(("cards", _reads),), accepts=refuse)
    with pytest.raises(ParseError, match="not a page"):
        parser(raw("<p/>"))


# --- visibility, names, counts, grids of divs -----------------------------------------------

def test_responsive_hidden_shown_from_a_breakpoint_is_visible() -> None:
    soup = soup_of('<table class="hidden lg:grid"><tr><td id="a">x</td></tr></table>'
                   '<div class="hidden"><span id="b">y</span></div>'
                   '<div class="hidden md:hidden"><span id="c">z</span></div>')
    assert not is_hidden(soup.find(id="a"))  # shown on a desktop screen
    assert is_hidden(soup.find(id="b")) and is_hidden(soup.find(id="c"))


@pytest.mark.parametrize(("text", "name", "badges"), [
    ("1x NVIDIA H100 PCIe New", "1x NVIDIA H100 PCIe", ("New",)),
    ("B300 GPU on Runpod", "B300", ()),
    ("H100 NVL GPU on Runpod", "H100 NVL", ()),
    ("NVIDIA H100 Cloud GPU", "NVIDIA H100", ()),
    ("Rent an H100 SXM", "H100 SXM", ()),
    ("NVIDIA RTX A6000 (Sold out)", "NVIDIA RTX A6000", ("Sold out",)),
    ("NVIDIA L40S with Intel CPU", "NVIDIA L40S with Intel CPU", ()),  # not a seller
    ("A100 80GB NVLINK", "A100 80GB NVLINK", ()),
    ("New", "New", ()),  # never emptied
])
def test_name_badges_strip_marketing_words_around_a_gpu(text: str, name: str,
                                                        badges: tuple[str, ...]) -> None:
    assert name_badges(text) == (name, badges)


def test_a_sold_out_badge_says_unavailable() -> None:
    assert badges_say_unavailable(("Sold out",)) is False
    assert badges_say_unavailable(("New",)) is None


@pytest.mark.parametrize(("text", "count", "rest"), [
    ("NVIDIA H100 (8x)", 8.0, "NVIDIA H100"),
    ("8x NVIDIA H100", 8.0, "NVIDIA H100"),
    ("8 x H100", 8.0, "H100"),
    ("8× H200 SXM", 8.0, "H200 SXM"),
    ("NVIDIA H100x8", 8.0, "NVIDIA H100"),
    ("AMD Instinct MI300Xx8", 8.0, "AMD Instinct MI300X"),
    ("RTX 4090 x2", 2.0, "RTX 4090"),
    ("AMD MI300X", None, "AMD MI300X"),  # an X ending a model number is no count
    ("RTX 4000", None, "RTX 4000"),
    ("GB200 NVL72", None, "GB200 NVL72"),
])
def test_count_in_name(text: str, count: float | None, rest: str) -> None:
    assert count_in_name(text) == (count, rest)


GRID = ('<h3>GPU pricing</h3><div class="head"><div class="h">Model</div>'
        '<div class="h">VRAM</div><div class="h">Price (/hr)</div></div>'
        '<div class="body"><div class="row"><div>A10</div><div>24</div><div>$0.50</div></div>'
        '<div class="row"><div>L4</div><div>24</div><div><b>$0.40</b> <a>Book</a></div></div>'
        '<div class="row" style="display:none"><div>T4</div><div>16</div><div>$9</div></div>'
        '<div class="row"><div>A6000</div></div></div>'
        '<div class="nav"><a>Home</a><a>Docs</a><a>Pricing</a></div>')


def test_grid_tables_find_rows_by_shape_and_headers_before_them() -> None:
    (table,) = grid_tables(soup_of(GRID))
    assert table.headers == ["Model", "VRAM", "Price (/hr)"]
    assert table.rows == [["A10", "24", "$0.50"], ["L4", "24", "$0.40 Book"]]  # hidden, cut
    assert table.caption == "GPU pricing"


def test_grid_tables_right_align_headers_cut_away_and_ignore_moneyless_grids() -> None:
    cut = GRID[GRID.index('<div class="h">Price'):]
    (table,) = grid_tables(soup_of(cut))
    assert table.headers == ["", "", "Price (/hr)"]
    assert grid_tables(soup_of(GRID.replace("$", ""))) == []
