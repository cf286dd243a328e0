"""The price board opened in headless Chromium (Debian's `chromium`, driven over DevTools).

Skipped, with the reason, only where chromium is not installed (`.ci/run` installs it).
Screenshots are saved in the test's temporary directory.
"""

from __future__ import annotations

from datetime import timedelta
from pathlib import Path

import duckdb
import pytest

from reports.board import build_board
from reports.markdown import money
from tests.cdp import Browser, Page, find_chromium
from tests.reports.conftest import NOW, Builder
from warehouse.semantic import Prices

pytestmark = [
    pytest.mark.timeout(180),
    pytest.mark.skipif(find_chromium() is None, reason="chromium is not installed (apt-get "
                       "install chromium; .ci/run installs it when apt-get works)"),
]


def luminance(css_rgb: str) -> float:
    r, g, b = (int(v) for v in css_rgb[css_rgb.index("(") + 1:-1].split(",")[:3])
    return (0.2126 * r + 0.7152 * g + 0.0722 * b) / 255


def matrix(page: Page) -> dict[tuple[str, str], str]:
    """(GPU, provider) -> the text of the comparison matrix cell, as rendered."""
    rows = page.evaluate("""(() => {
        const t = document.querySelector('#matrix table');
        const heads = [...t.tHead.rows[0].cells].map(c => c.textContent);
        return [heads, [...t.tBodies[0].rows].map(r => [...r.cells].map(c => c.textContent))];
    })()""")
    heads, body = rows
    return {(r[0], heads[i]): r[i] for r in body for i in range(1, len(heads)) if r[i] != "–"}


@pytest.fixture
def site(market: duckdb.DuckDBPyConnection, tmp_path: Path) -> Path:
    Builder(market).failure("runpod", NOW - timedelta(hours=1), "run-failed", "HTTP 503")
    build_board(market, tmp_path / "site", week="2026-W46", as_of=NOW - timedelta(days=7))
    return build_board(market, tmp_path / "site", week="2026-W47", as_of=NOW).index  # type: ignore[return-value]


def test_board_in_headless_chromium(market: duckdb.DuckDBPyConnection, site: Path,
                                    tmp_path: Path) -> None:
    # the comparable offers at NOW, cheapest first (aws, 72 h old, is stale: not among them)
    comparable = Prices(market, NOW).comparable()
    cheapest_cell = comparable.group_by("gpu_model", "provider", maintain_order=True).first()
    with Browser(tmp_path / "profile") as browser:
        page = browser.new_page()
        page.viewport(1400, 900)
        page.color_scheme("light")
        page.goto(site.as_uri())
        page.screenshot(tmp_path / "board-1400-light.png")

        tiles = dict(page.evaluate(
            "[...document.querySelectorAll('.tile')].map(t => "
            "[t.dataset.gpu, t.querySelector('.price').firstChild.textContent])"))
        # each tile is the GPU's cheapest offer where the index is withheld; the index
        # publishes A100 40GB alone here, at $1.10 (worked out in test_board.py)
        cheapest = comparable.group_by("gpu_model", maintain_order=True).first()
        expected = {r["gpu_model"]: money(r["price_usd_per_gpu_hour"])
                    for r in cheapest.to_dicts()}
        assert tiles == {**expected, "A100 40GB": money(1.10)}

        cells = matrix(page)
        assert cells == {(r["gpu_model"], r["provider"]):
                         f"{money(r['price_usd_per_gpu_hour'])} {r['pricing']}"
                         for r in cheapest_cell.to_dicts()}

        banner = page.evaluate("document.getElementById('failed-sources').textContent")
        assert "runpod" in banner and "HTTP 503" in banner
        assert "2026-11-20 12:00 UTC" in page.evaluate("document.querySelector('time').textContent")

        # Sorting: click the tiers table's $/GPU-h header twice (ascending, descending).
        sort = """(() => { const t = document.getElementById('tiers-table');
            const i = [...t.tHead.rows[0].cells].findIndex(c => c.textContent === '$/GPU-h');
            t.tHead.rows[0].cells[i].click();
            return [...t.tBodies[0].rows].map(r => Number(r.cells[i].dataset.v)); })()"""
        ascending = page.evaluate(sort)
        assert len(ascending) > 3 and ascending == sorted(ascending)
        assert page.evaluate(sort) == sorted(ascending, reverse=True)

        # The dot plot picker shows one GPU's plot at a time.
        shown = page.evaluate("""(() => { const s = document.querySelector('select.picker');
            s.value = 'RTX 4090'; s.dispatchEvent(new Event('change'));
            return [...document.querySelectorAll('.dotplot')]
                .filter(f => getComputedStyle(f).display !== 'none').map(f => f.dataset.gpu);
            })()""")
        assert shown == ["RTX 4090"]

        light = page.evaluate("getComputedStyle(document.body).backgroundColor")
        assert luminance(light) > 0.8

        page.color_scheme("dark")
        page.goto(site.as_uri())
        page.screenshot(tmp_path / "board-1400-dark.png")
        dark = page.evaluate("getComputedStyle(document.body).backgroundColor")
        assert luminance(dark) < 0.2
        text = page.evaluate("getComputedStyle(document.querySelector('.tile .price')).color")
        assert luminance(text) > 0.7  # light text on the dark background
        page.evaluate("document.getElementById('theme').click()")  # the toggle: back to light
        assert luminance(page.evaluate("getComputedStyle(document.body).backgroundColor")) > 0.8

        page.viewport(375, 800, mobile=True)
        page.color_scheme("light")
        page.goto(site.as_uri())
        page.screenshot(tmp_path / "board-375.png")
        width, inner = page.evaluate("[document.documentElement.scrollWidth, innerWidth]")
        assert width <= inner == 375
        widest = page.evaluate("Math.max(...[...document.querySelectorAll('main > *, .tile, "
                               "figure')].map(e => e.getBoundingClientRect().right))")
        assert widest <= 375

        page.goto(site.with_name("2026-W46.html").as_uri())  # an archived week opens too
        assert page.evaluate("document.title") == "GPU price board · week 2026-W46"
        assert page.problems() == []
    for name in ("board-1400-light.png", "board-1400-dark.png", "board-375.png"):
        assert (tmp_path / name).read_bytes()[:4] == b"\x89PNG"
