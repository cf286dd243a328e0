"""Readable in a terminal: at 100 columns every table fits, every row is one line (a name is
whole or cut with an ellipsis, never broken mid-word), the columns left out are named, and
--wide shows them all. Run as a user would, stdout piped with COLUMNS=100."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from gpuprices.output import TEXT_CAP, fit_widths

REPO = Path(__file__).resolve().parents[2]


def gpuprices(demo: Path, *args: str, columns: int = 100) -> str:
    env = {**os.environ, "COLUMNS": str(columns), "PYTHONPATH": str(REPO)}
    done = subprocess.run([sys.executable, "-m", "gpuprices", *args, "-w", str(demo)],
                          capture_output=True, text=True, env=env, cwd=REPO, check=True)
    return done.stdout


def body(table: str) -> list[str]:
    """The table's data lines (between the header rule and the bottom rule)."""
    lines = table.splitlines()
    start = next(i for i, line in enumerate(lines) if line.startswith("┡"))
    end = next(i for i, line in enumerate(lines) if line.startswith("└"))
    return lines[start + 1:end]


def header(table: str) -> list[str]:
    line = next(line for line in table.splitlines() if line.startswith("┃"))
    return [cell.strip() for cell in line.strip("┃").split("┃")]


@pytest.mark.parametrize(("args", "rows"), [
    (("cheapest", "--gpu", "H100", "--limit", "15"), 15),
    (("sources",), None),
    (("query", "select * from latest_price order by price_usd_per_gpu_hour limit 10"), 10),
    (("market",), None),
    (("changes", "--since", "2020-01-01"), None),
    (("history", "H100 SXM"), None),
    (("rent-vs-buy",), None),
])
def test_every_row_is_one_line_within_100_columns(demo: Path, args: tuple[str, ...],
                                                  rows: int | None) -> None:
    out = gpuprices(demo, *args)
    assert max(len(line) for line in out.splitlines()) <= 100
    expected = rows or len(json.loads(gpuprices(demo, *args, "--format", "json")))
    if args[0] == "rent-vs-buy":
        expected = len(json.loads(gpuprices(demo, *args, "--format", "json"))["servers"])
    assert len(body(out)) == expected  # no row folded onto a second line


def test_names_are_whole_or_cut_never_broken(demo: Path) -> None:
    out = gpuprices(demo, "cheapest", "--gpu", "H100", "--limit", "20")
    offers = json.loads(gpuprices(demo, "cheapest", "--gpu", "H100", "--limit", "20",
                                  "--format", "json"))
    lines = body(out)
    for line, offer in zip(lines, offers, strict=True):
        cells = [c.strip() for c in line.strip("│").split("│")]
        assert offer["provider"] in cells  # "runpod", never "runpo" + "d" on the next line
        shown = cells[header(out).index("offering")]
        assert shown == offer["offering"] or (
            shown.endswith("…") and offer["offering"].startswith(shown[:-1]))
    assert "price_usd_per_gpu_hour" in header(out)  # the price is never the column left out


def test_wide_shows_every_column(demo: Path) -> None:
    narrow = gpuprices(demo, "cheapest", "--gpu", "H100", "--limit", "5")
    wide = gpuprices(demo, "cheapest", "--gpu", "H100", "--limit", "5", "--wide")
    columns = list(json.loads(gpuprices(demo, "cheapest", "--gpu", "H100", "--limit", "1",
                                        "--format", "json"))[0])
    assert header(wide) == columns
    hidden = [c for c in columns if c not in header(narrow)]
    assert hidden and f"more columns: {', '.join(hidden)}" in " ".join(narrow.split())
    assert "--wide" in narrow


def test_rent_vs_buy_is_a_short_table(demo: Path) -> None:
    assert len(header(gpuprices(demo, "rent-vs-buy", columns=200))) <= 10


def test_fit_widths_keeps_priority_and_cuts_text() -> None:
    headers = ["gpu_model", "offering", "region", "price_usd_per_gpu_hour"]
    cells = [["H100 SXM", "h100-sxm5-80gb x8 bare metal, Ethernet @ 5e0c2a71", "us-east-1",
              "1.99"]]
    text = [True, True, True, False]
    assert fit_widths(headers, cells, 200, text=text) == [9, 49, 9, 22]  # natural: it fits
    widths = fit_widths(headers, cells, 60, text=text)
    assert widths[0] == 9 and widths[3] == 22 and widths[1] is not None
    assert widths[1] >= TEXT_CAP or widths[2] is None
    narrow = fit_widths(headers, cells, 40, text=text)
    assert narrow[0] == 9 and narrow[3] == 22  # the first column and the price stay
    assert fit_widths(headers, cells, 40, text=text, wide=True) == [9, 49, 9, 22]
