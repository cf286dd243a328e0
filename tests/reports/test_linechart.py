"""The report's chart (reports.linechart, drawn with Pillow): round axes, lines where the
points are, gaps where they are missing, the same bytes for the same points."""

from __future__ import annotations

import io
import itertools
import math
from datetime import date, timedelta
from pathlib import Path

import polars as pl
import pytest
from PIL import Image

from reports.axes import nice_ticks
from reports.charts import plot_daily
from reports.linechart import (
    COLORS,
    HEIGHT,
    WIDTH,
    Line,
    day_ticks,
    draw_png,
    tick_text,
)

START = date(2026, 11, 1)


def rgb(color: str) -> tuple[int, int, int]:
    return tuple(int(color[i:i + 2], 16) for i in (1, 3, 5))  # type: ignore[return-value]


def pixels_of(png: bytes, color: str, tolerance: int = 40) -> list[tuple[int, int]]:
    """Where the image is (nearly) `color`."""
    image = Image.open(io.BytesIO(png)).convert("RGB")
    want = rgb(color)
    return [(x, y) for y in range(image.height) for x in range(image.width)
            if sum(abs(a - b) for a, b in zip(image.getpixel((x, y)), want, strict=True))
            <= tolerance]


@pytest.mark.parametrize("top", [0.0004, 0.07, 0.49, 1, 2.49, 3.1, 9.99, 10, 47.5, 1234.5])
def test_value_ticks_are_round_steps_from_zero_past_the_top(top: float) -> None:
    ticks = nice_ticks(top)
    step = ticks[1] - ticks[0]
    mantissa = step / 10 ** math.floor(math.log10(step))
    assert ticks[0] == 0 and ticks[-1] >= top > ticks[-2]
    assert 2 <= len(ticks) <= 7
    assert any(math.isclose(mantissa, m) for m in (1, 2, 2.5, 5))
    assert all(math.isclose(b - a, step) for a, b in itertools.pairwise(ticks))


@pytest.mark.parametrize("top", [0.0, -1.0, math.nan, math.inf])
def test_value_ticks_of_nothing_to_scale_are_zero_to_one(top: float) -> None:
    assert nice_ticks(top) == [0.0, 1.0]


def test_tick_labels_have_the_decimals_of_their_step() -> None:
    assert [tick_text(v, 0.25) for v in (0, 0.25, 0.5, 1.25)] == [
        "0.00", "0.25", "0.50", "1.25"]
    assert [tick_text(v, 0.5) for v in nice_ticks(2.6, 6)] == [
        "0.0", "0.5", "1.0", "1.5", "2.0", "2.5", "3.0"]
    assert tick_text(40.0, 10.0) == "40"


def test_a_week_is_labelled_day_by_day() -> None:
    ticks = day_ticks(START, START + timedelta(days=7))
    assert [d for d, _ in ticks] == [START + timedelta(days=k) for k in range(8)]
    assert ticks[0][1] == "Nov 1"


def test_ninety_days_are_labelled_on_mondays_at_most_eight_times() -> None:
    first, last = date(2026, 8, 28), date(2026, 11, 28)
    ticks = day_ticks(first, last)
    assert 4 <= len(ticks) <= 8
    assert all(d.weekday() == 0 and first <= d <= last for d, _ in ticks)
    assert len({(b - a).days for (a, _), (b, _) in itertools.pairwise(ticks)}) == 1


def test_years_are_labelled_by_months_then_by_years() -> None:
    months = day_ticks(date(2025, 6, 15), date(2026, 6, 15))
    assert all(d.day == 1 for d, _ in months) and 3 <= len(months) <= 8
    assert "Jan 2026" in [t for _, t in months]
    decade = day_ticks(date(2016, 11, 27), date(2026, 11, 27))
    assert [t for _, t in decade] == [str(y) for y in range(2018, 2027, 2)]


def lines() -> list[Line]:
    rising = Line("rising", [(START + timedelta(days=k), 1.0 + k) for k in range(10)])
    gappy = Line("gappy", [(START, 0.5), (START + timedelta(days=1), 0.5),
                           (START + timedelta(days=2), None),
                           (START + timedelta(days=8), 0.5), (START + timedelta(days=9), 0.5)])
    return [rising, gappy]


def chart() -> bytes:
    return draw_png(lines(), title="t", ylabel="$ / GPU-hour",
                    first=START - timedelta(days=1), last=START + timedelta(days=10))


def test_the_chart_is_a_png_of_its_size_and_the_same_bytes_each_time() -> None:
    png = chart()
    image = Image.open(io.BytesIO(png))
    assert (image.format, image.size) == ("PNG", (WIDTH, HEIGHT))
    assert png == chart()
    assert b"tIME" not in png and b"Software" not in png  # nothing of when or by what


def test_a_rising_series_is_drawn_rising_in_its_colour() -> None:
    drawn = pixels_of(chart(), COLORS[0])
    assert len(drawn) > 300
    left = [y for x, y in drawn if x < WIDTH * 0.3]
    right = [y for x, y in drawn if x > WIDTH * 0.7]
    assert left and right and min(right) < min(left)  # higher on the right (y grows down)


def test_a_missing_point_leaves_a_gap_in_its_line() -> None:
    plotted = [x for x, y in pixels_of(chart(), COLORS[1]) if y < HEIGHT - 50]  # not the legend
    columns = sorted(set(plotted))
    gaps = [b - a for a, b in itertools.pairwise(columns)]
    assert max(gaps) > WIDTH * 0.4  # from day 1 to day 8, not bridged
    assert [g for g in gaps if g > 3] == [max(gaps)]  # and each run is one unbroken line


def test_plot_daily_writes_the_chart_and_nothing_for_no_points(tmp_path: Path) -> None:
    series = pl.DataFrame({"series": ["a", "a", "b"],
                           "day": [START, START + timedelta(days=1), START],
                           "usd_per_gpu_hour": [2.0, 1.5, 3.0]})
    path = plot_daily(series, tmp_path / "c.png", title="t")
    assert path is not None and path.read_bytes()[:4] == b"\x89PNG"
    assert pixels_of(path.read_bytes(), COLORS[0]) and pixels_of(path.read_bytes(), COLORS[1])
    empty = series.clear()
    assert plot_daily(empty, tmp_path / "none.png", title="t") is None
    assert not (tmp_path / "none.png").exists()


def test_a_window_narrower_than_the_points_cuts_the_lines_at_the_frame(tmp_path: Path) -> None:
    series = pl.DataFrame({"series": ["a"] * 30,
                           "day": [START + timedelta(days=k) for k in range(30)],
                           "usd_per_gpu_hour": [1.0] * 30})
    path = plot_daily(series, tmp_path / "c.png", title="t",
                      since=START + timedelta(days=10), until=START + timedelta(days=19))
    assert path is not None
    inside = [x for x, y in pixels_of(path.read_bytes(), COLORS[0]) if y < HEIGHT - 60]
    assert inside and min(inside) > 30 and max(inside) < WIDTH - 10


def test_a_lone_point_among_dense_days_is_still_drawn() -> None:
    first = date(2024, 1, 1)
    dense = [(first + timedelta(days=k), 1.0) for k in range(700)]
    lone = [(first + timedelta(days=k), None if k != 350 else 3.0) for k in range(349, 352)]
    png = draw_png([Line("dense", dense), Line("lone", lone)], title="t", ylabel="y",
                   first=first, last=first + timedelta(days=700))
    drawn = [(x, y) for x, y in pixels_of(png, COLORS[1]) if y < HEIGHT - 50]
    assert drawn and max(x for x, _ in drawn) - min(x for x, _ in drawn) < 10
