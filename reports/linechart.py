"""A line chart of daily values as a PNG, drawn with Pillow.

matplotlib took ~0.3 s to import and draw the weekly report's one chart, a third of the
report's time (BENCHMARKS.md §19). This draws the same kind of chart: one line with markers per
series, the x axis over the days asked for, y from 0 to a round value, a light grid, a legend
and a title. The bytes depend only on what is drawn: no time or software name is written.
"""

from __future__ import annotations

import io
import math
from collections.abc import Sequence
from dataclasses import dataclass
from datetime import date, timedelta
from typing import TYPE_CHECKING

from reports.axes import nice_ticks

if TYPE_CHECKING:  # Pillow is imported when a chart is drawn, not with the report's modules
    from PIL.Image import Image
    from PIL.ImageDraw import ImageDraw
    from PIL.ImageFont import FreeTypeFont

__all__ = ["Line", "day_ticks", "draw_png"]

WIDTH, HEIGHT = 800, 400  # the PNG's pixels (matplotlib's 8x4 inches at 100 dpi, as before)
SCALE = 3  # drawn 3x as large, then averaged down: smooth lines without an antialiasing renderer
# matplotlib's default colour cycle, the colours the earlier charts used
COLORS = ("#1f77b4", "#ff7f0e", "#2ca02c", "#d62728", "#9467bd", "#8c564b", "#e377c2",
          "#7f7f7f", "#bcbd22", "#17becf")
INK, GRID = "#222222", "#dcdcdc"
DAY_STEPS = (1, 2, 3, 7, 14)
MONTH_STEPS = (1, 2, 3, 6)


@dataclass(frozen=True)
class Line:
    """One series: its label and its (day, value) points; a None value leaves a gap."""

    label: str
    points: Sequence[tuple[date, float | None]]


def tick_text(value: float, step: float) -> str:
    """`value` with as many decimals as the step needs (0.25 steps: two; 0.5: one)."""
    decimals = 0
    while decimals < 6 and abs(round(step, decimals) - step) > 1e-9:
        decimals += 1
    return f"{value:.{decimals}f}"


def day_ticks(first: date, last: date, most: int = 8) -> list[tuple[date, str]]:
    """At most `most` labelled days between `first` and `last` (both included), on round
    days: every day, every 2nd or 3rd, Mondays, every other Monday; else the first of every
    1, 2, 3 or 6 months; else the first of January of every 1, 2, 5, 10 ... years."""
    days = [first + timedelta(days=k) for k in range((last - first).days + 1)]
    for step in DAY_STEPS:
        on = [d for d in days if (d.toordinal() - 1) % step == 0]  # ordinal 1 is a Monday
        if len(on) <= most:
            return [(d, f"{d:%b} {d.day}") for d in on]
    firsts = [d for d in days if d.day == 1]
    for step in MONTH_STEPS:
        on = [d for d in firsts if (d.month - 1) % step == 0]
        if len(on) <= most:
            return [(d, f"{d:%b %Y}" if d.month == 1 or i == 0 else f"{d:%b}")
                    for i, d in enumerate(on)]
    step = 1
    while True:
        on = [d for d in firsts if d.month == 1 and d.year % step == 0]
        if len(on) <= most:
            return [(d, str(d.year)) for d in on]
        step = step * 5 // 2 if str(step).startswith("2") else step * 2  # 1 2 5 10 20 50 ...


def draw_png(lines: Sequence[Line], *, title: str, ylabel: str, first: date,
             last: date) -> bytes:
    """The chart's PNG: x from `first` to `last` (both included), y from 0."""
    from PIL import Image, ImageDraw, ImageFont

    def px(value: float) -> int:
        return round(value * SCALE)

    small, large = ImageFont.load_default(px(10)), ImageFont.load_default(px(12))
    canvas = Image.new("RGB", (px(WIDTH), px(HEIGHT)), "white")
    draw = ImageDraw.Draw(canvas)
    values = [v for line in lines for _, v in line.points if v is not None and math.isfinite(v)]
    yticks = nice_ticks(max(values, default=0.0) * 1.05, 6)  # headroom above the top point
    step = yticks[1] - yticks[0]
    ylabels = [tick_text(v, step) for v in yticks]
    xticks = day_ticks(first, last)

    legend_rows = _legend_rows(lines, small, px(WIDTH - 40))
    label_width = max(draw.textlength(t, font=small) for t in ylabels)
    left = px(14 + 16 + 6) + label_width  # the y label, the tick labels, the ticks
    right, top = px(WIDTH - 16), px(34)
    bottom = px(HEIGHT - 38 - 18 * len(legend_rows))

    def x_of(day: date) -> float:
        span = max((last - first).days, 1)
        return left + (day - first).days / span * (right - left)

    def y_of(value: float) -> float:
        return bottom - value / yticks[-1] * (bottom - top)

    draw.text(((left + right) / 2, px(10)), title, font=large, fill=INK, anchor="mt")
    for value, text in zip(yticks, ylabels, strict=True):
        y = y_of(value)
        draw.line([(left, y), (right, y)], fill=GRID, width=px(1))
        draw.line([(left - px(4), y), (left, y)], fill=INK, width=px(1))
        draw.text((left - px(6), y), text, font=small, fill=INK, anchor="rm")
    for day, text in xticks:
        x = x_of(day)
        draw.line([(x, top), (x, bottom)], fill=GRID, width=px(1))
        draw.line([(x, bottom), (x, bottom + px(4))], fill=INK, width=px(1))
        draw.text((x, bottom + px(6)), text, font=small, fill=INK, anchor="mt")
    years = f"{first.year}" if first.year == last.year else f"{first.year}-{last.year}"
    if xticks and all(not t[-4:].isdigit() for _, t in xticks):  # the year, said once
        draw.text((right, bottom + px(20)), years, font=small, fill=INK, anchor="rt")
    _draw_ylabel(canvas, ylabel, small, px(14), (top + bottom) / 2)

    # The lines are drawn on their own layer, cut to the plot's frame, then laid on top.
    layer = Image.new("RGBA", (round(right - left), round(bottom - top)), (0, 0, 0, 0))
    pen = ImageDraw.Draw(layer)
    markers = (last - first).days <= (right - left) / px(6)  # days at least 6 pixels apart
    for i, line in enumerate(lines):
        color = COLORS[i % len(COLORS)]
        for run in _runs(line.points):
            xy = [(x_of(d) - left, y_of(v) - top) for d, v in run]
            if len(xy) > 1:
                pen.line(xy, fill=color, width=px(1.5), joint="curve")
            for x, y in xy if markers or len(xy) == 1 else ():
                pen.ellipse([x - px(2), y - px(2), x + px(2), y + px(2)], fill=color)
    canvas.paste(layer, (round(left), round(top)), layer)
    draw.rectangle([left, top, right, bottom], outline=INK, width=px(1))
    _draw_legend(draw, legend_rows, small, (left + right) / 2, bottom + px(36))

    png = io.BytesIO()
    canvas.reduce(SCALE).save(png, format="PNG")  # each pixel the mean of 3x3 (LANCZOS: 11x)
    return png.getvalue()


def _runs(points: Sequence[tuple[date, float | None]]) -> list[list[tuple[date, float]]]:
    """The points by day, cut where a value is missing (a line never bridges a gap)."""
    runs: list[list[tuple[date, float]]] = [[]]
    for day, value in sorted(points, key=lambda p: p[0]):
        if value is None or not math.isfinite(value):
            runs.append([])
        else:
            runs[-1].append((day, value))
    return [run for run in runs if run]


def _legend_rows(lines: Sequence[Line], font: FreeTypeFont,
                 width: float) -> list[list[tuple[int, str, float]]]:
    """The legend's entries (colour index, label, width), as many to a row as fit in
    `width`."""
    rows: list[list[tuple[int, str, float]]] = []
    used = width
    for i, line in enumerate(lines):
        need = font.getlength(line.label) + font.size * 4
        if not rows or used + need > width:
            rows.append([])
            used = 0.0
        rows[-1].append((i, line.label, need))
        used += need
    return rows


def _draw_legend(draw: ImageDraw, rows: list[list[tuple[int, str, float]]],
                 font: FreeTypeFont, center: float, y: float) -> None:
    """Each row centred under the plot: a short line in the series' colour, then its label."""
    size = font.size
    for row in rows:
        x = center - sum(width for _, _, width in row) / 2
        for i, label, width in row:
            color = COLORS[i % len(COLORS)]
            draw.line([(x, y), (x + size * 2, y)], fill=color, width=max(1, size // 7))
            draw.ellipse([x + size - size // 5, y - size // 5, x + size + size // 5,
                          y + size // 5], fill=color)
            draw.text((x + size * 2.5, y), label, font=font, fill=INK, anchor="lm")
            x += width
        y += size * 1.8


def _draw_ylabel(canvas: Image, text: str, font: FreeTypeFont, x: int, y: float) -> None:
    """`text` turned a quarter to the left, centred on (x, y)."""
    from PIL import Image as Images
    from PIL import ImageDraw as Draw

    width = round(font.getlength(text)) + 2
    height = round(font.size * 2)
    label = Images.new("L", (width, height), 0)
    Draw.Draw(label).text((width / 2, height / 2), text, font=font, fill=255, anchor="mm")
    turned = label.rotate(90, expand=True)
    ink = Images.new("RGB", turned.size, INK)
    canvas.paste(ink, (x - turned.width // 2, round(y - turned.height / 2)), turned)
