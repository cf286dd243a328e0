"""Server-rendered SVG charts: step lines of price history and a dot plot of current prices.

Pure functions from numbers to SVG text. Colours come from CSS classes (`s-<segment>`,
`g-<pricing group>`) so the page's light and dark themes restyle the charts; axes carry units.
Amounts are drawn as given, named in `currency` (USD: $1.23; another: EUR 1.23, the axis
titled "EUR per GPU-hour"); the caller converts them.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass
from datetime import date, timedelta
from html import escape

from reports.axes import nice_ticks

__all__ = ["BandPoint", "Dot", "LinePoint", "Series", "band_chart", "dot_plot", "nice_ticks",
           "slug", "spread_ticks", "step_chart"]

WIDTH = 640
# The y-axis title sits above the plot (not rotated at its side), so tick labels can grow on
# phones (board.css) without colliding with it.
PLOT_LEFT, PLOT_RIGHT, PLOT_TOP, PLOT_BOTTOM = 58, 16, 30, 44


@dataclass(frozen=True, slots=True)
class LinePoint:
    day: date
    usd: float
    label: str  # shown on hover: where the point comes from
    gap_before: bool = False


@dataclass(frozen=True, slots=True)
class Series:
    name: str
    points: Sequence[LinePoint]


@dataclass(frozen=True, slots=True)
class BandPoint:
    """One day of an index series: its value and band, or (value None) why it was withheld."""
    day: date
    usd: float | None
    low: float | None
    high: float | None
    note: str


@dataclass(frozen=True, slots=True)
class Dot:
    row: str       # provider
    group: str     # pricing group
    usd: float
    label: str


def slug(text: str) -> str:
    return "".join(c if c.isalnum() else "-" for c in text.lower()).strip("-")


def _num(value: float) -> str:
    return f"{value:.1f}".rstrip("0").rstrip(".")


def spread_ticks(low: float, high: float, count: int = 5) -> list[float]:
    """Round ticks over [low, high]: from 0 unless every price sits well above it (a dot plot
    shows spread by position, so it need not start at zero)."""
    if low < 0.4 * high:
        return nice_ticks(high, count)
    step = nice_ticks(high - low, count)[1]
    start = math.floor(low / step) * step
    # at least two ticks: every price on one tick (a lone $2.00) still needs a scale
    return [round(start + i * step, 10)
            for i in range(max(1, math.ceil((high - start) / step - 1e-9)) + 1)]


def _money_tick(value: float, currency: str = "USD") -> str:
    """An axis tick: $0.5 in USD; a bare number in another currency (the axis names it)."""
    sign = "$" if currency == "USD" else ""
    if value == 0:
        return f"{sign}0"
    if value >= 10 and value == int(value):
        return f"{sign}{value:,.0f}"
    return f"{sign}{value:,.2f}".rstrip("0").rstrip(".")


def _amount(value: float, currency: str, places: int = 2) -> str:
    """A hover text's amount: $1.23 or EUR 1.23."""
    return f"${value:,.{places}f}" if currency == "USD" else f"{currency} {value:,.{places}f}"


def _per_gpu_hour(currency: str) -> str:
    return f"{'$' if currency == 'USD' else currency} per GPU-hour"


def _date_ticks(start: date, end: date) -> list[tuple[date, str]]:
    span = (end - start).days
    if span > 3 * 365:
        step = max(1, math.ceil(span / 365 / 7))
        return [(date(y, 1, 1), str(y)) for y in range(start.year + 1, end.year + 1)
                if (y - start.year - 1) % step == 0]
    if span > 75:
        months = []
        months_step = max(1, math.ceil(span / 30 / 7))
        y, m = start.year, start.month
        i = 0
        while True:
            m += 1
            if m > 12:
                y, m = y + 1, 1
            first = date(y, m, 1)
            if first > end:
                return months
            if i % months_step == 0:
                months.append((first, first.strftime("%b %Y" if m == 1 or not months
                                                     else "%b")))
            i += 1
    step = max(1, math.ceil(span / 7))
    return [(start + timedelta(days=d), (start + timedelta(days=d)).strftime("%d %b"))
            for d in range(0, span + 1, step)]


def step_chart(series: Sequence[Series], *, start: date, end: date, title: str,
               height: int = 280, currency: str = "USD") -> str:
    """Prices as step lines (a price holds until the next change), x = date, y = $/GPU-hour
    (or `currency` per GPU-hour)."""
    if end <= start:
        start = end - timedelta(days=7)
    top = max((p.usd for s in series for p in s.points), default=1.0)
    ticks = nice_ticks(top)
    x0, x1 = PLOT_LEFT, WIDTH - PLOT_RIGHT
    y0, y1 = height - PLOT_BOTTOM, PLOT_TOP
    # A little room right of the as-of date so the last points are not cut by the edge.
    span = max(1, round((end - start).days * 1.02))

    def x(day: date) -> float:
        return round(x0 + (day - start).days / span * (x1 - x0), 1)

    def y(usd: float) -> float:
        return round(y0 - usd / ticks[-1] * (y0 - y1), 1)

    out = [f'<svg viewBox="0 0 {WIDTH} {height}" role="img" aria-label="{escape(title)}" '
           'class="chart">']
    for tick in ticks:
        out.append(f'<line class="grid" x1="{x0}" x2="{x1}" y1="{y(tick)}" y2="{y(tick)}"/>'
                   f'<text class="tick" x="{x0 - 6}" y="{y(tick) + 4}" text-anchor="end">'
                   f"{_money_tick(tick, currency)}</text>")
    for day, text in _date_ticks(start, end):
        out.append(f'<line class="grid" x1="{x(day)}" x2="{x(day)}" y1="{y0}" y2="{y1}"/>'
                   f'<text class="tick" x="{x(day)}" y="{y0 + 16}" text-anchor="middle">'
                   f"{text}</text>")
    out.append(f'<text class="axis" x="{x0}" y="{height - 6}">date (UTC)</text>'
               f'<text class="axis" x="4" y="14">{escape(_per_gpu_hour(currency))}</text>'
               f'<line class="frame" x1="{x0}" x2="{x1}" y1="{y0}" y2="{y0}"/>')
    for s in series:
        if not s.points:
            continue
        css = f"s-{slug(s.name)}"
        path: list[str] = []
        for i, p in enumerate(s.points):
            if i == 0 or p.gap_before:
                path.append(f"M{x(p.day)} {y(p.usd)}")
            else:
                path.append(f"H{x(p.day)}V{y(p.usd)}")
        last = s.points[-1]
        out.append(f'<path class="line {css}" d="{"".join(path)}"><title>{escape(s.name)}'
                   "</title></path>")
        out.append(f'<circle class="dot {css}" cx="{x(last.day)}" cy="{y(last.usd)}" r="3.5">'
                   f"<title>{escape(s.name)}: {_amount(last.usd, currency)}/GPU-h on {last.day} "
                   f"({escape(last.label)})</title></circle>")
    out.append("</svg>")
    return "".join(out)


_SHAPES = ("circle", "triangle", "square", "diamond")


def _marker(shape: str, cx: float, cy: float, css: str, title: str) -> str:
    r = 6.0
    inner = f"<title>{escape(title)}</title>"
    if shape == "circle":
        return f'<circle class="{css}" cx="{cx}" cy="{cy}" r="{r}">{inner}</circle>'
    if shape == "square":
        return (f'<rect class="{css}" x="{cx - r + 0.8:.1f}" y="{cy - r + 0.8:.1f}" '
                f'width="{2 * r - 1.6:.1f}" height="{2 * r - 1.6:.1f}">{inner}</rect>')
    if shape == "triangle":
        corners = [(cx, cy - r - 0.6), (cx - r, cy + r - 1), (cx + r, cy + r - 1)]
    else:
        corners = [(cx, cy - r - 0.8), (cx + r, cy), (cx, cy + r + 0.8), (cx - r, cy)]
    pts = " ".join(f"{px:.1f},{py:.1f}" for px, py in corners)
    return f'<polygon class="{css}" points="{pts}">{inner}</polygon>'


def dot_plot(dots: Sequence[Dot], *, groups: Sequence[str], title: str,
             width: int = 480, currency: str = "USD") -> str:
    """One row per provider (cheapest first), one marker per price; shape and colour = group."""
    rows: list[str] = []
    cheapest: dict[str, float] = {}
    for d in dots:
        cheapest[d.row] = min(cheapest.get(d.row, math.inf), d.usd)
    rows = sorted(cheapest, key=lambda r: (cheapest[r], r))
    left, band = 132, 26
    height = PLOT_TOP + band * max(len(rows), 1) + PLOT_BOTTOM
    low = min((d.usd for d in dots), default=0.0)
    high = max((d.usd for d in dots), default=1.0)
    ticks = spread_ticks(low, high)
    x0, x1 = left, width - PLOT_RIGHT
    y0 = height - PLOT_BOTTOM

    def x(usd: float) -> float:
        return round(x0 + (usd - ticks[0]) / (ticks[-1] - ticks[0]) * (x1 - x0), 1)

    out = [f'<svg viewBox="0 0 {width} {height}" role="img" aria-label="{escape(title)}" '
           'class="chart">']
    for tick in ticks:
        out.append(f'<line class="grid" x1="{x(tick)}" x2="{x(tick)}" y1="{PLOT_TOP}" '
                   f'y2="{y0}"/><text class="tick" x="{x(tick)}" y="{y0 + 16}" '
                   f'text-anchor="middle">{_money_tick(tick, currency)}</text>')
    out.append(f'<text class="axis" x="{(x0 + x1) / 2}" y="{height - 6}" text-anchor="middle">'
               f"{escape(_per_gpu_hour(currency))} (whole offering, per GPU)</text>"
               '<text class="axis" x="4" y="14">provider</text>')
    offsets = {g: (i - (len(groups) - 1) / 2) * 4 for i, g in enumerate(groups)}
    for i, row in enumerate(rows):
        cy = PLOT_TOP + band * i + band / 2
        out.append(f'<line class="grid" x1="{x0}" x2="{x1}" y1="{cy}" y2="{cy}"/>'
                   f'<text class="tick" x="{x0 - 6}" y="{cy + 4}" text-anchor="end">'
                   f"{escape(row[:13])}</text>")
        for d in (d for d in dots if d.row == row):
            index = list(groups).index(d.group) if d.group in groups else 0
            out.append(_marker(_SHAPES[index % len(_SHAPES)], x(d.usd),
                               round(cy + offsets.get(d.group, 0), 1), f"mark g-{slug(d.group)}",
                               f"{row} · {d.group} · {_amount(d.usd, currency)}/GPU-h · {d.label}"))
    out.append("</svg>")
    return "".join(out)


def band_chart(points: Sequence[BandPoint], *, start: date, end: date, title: str,
               height: int = 240, currency: str = "USD") -> str:
    """An index series: its band as a shaded step area, its value as a step line (a day's
    value holds through the day), and each withheld day as a mark under the axis (its reason
    on hover)."""
    if end <= start:
        start = end - timedelta(days=7)
    top = max((p.high or p.usd or 0.0 for p in points), default=1.0)
    ticks = nice_ticks(top)
    x0, x1 = PLOT_LEFT, WIDTH - PLOT_RIGHT
    y0, y1 = height - PLOT_BOTTOM, PLOT_TOP
    span = max(1, (end - start).days + 1)

    def x(day: date, edge: int = 0) -> float:
        return round(x0 + ((day - start).days + edge) / span * (x1 - x0), 1)

    def y(usd: float) -> float:
        return round(y0 - usd / ticks[-1] * (y0 - y1), 1)

    out = [f'<svg viewBox="0 0 {WIDTH} {height}" role="img" aria-label="{escape(title)}" '
           'class="chart">']
    for tick in ticks:
        out.append(f'<line class="grid" x1="{x0}" x2="{x1}" y1="{y(tick)}" y2="{y(tick)}"/>'
                   f'<text class="tick" x="{x0 - 6}" y="{y(tick) + 4}" text-anchor="end">'
                   f"{_money_tick(tick, currency)}</text>")
    for day, text in _date_ticks(start, end):
        out.append(f'<text class="tick" x="{x(day)}" y="{y0 + 16}" text-anchor="middle">'
                   f"{text}</text>")
    out.append(f'<text class="axis" x="{x0}" y="{height - 6}">date (UTC)</text>'
               f'<text class="axis" x="4" y="14">{escape(_per_gpu_hour(currency))}</text>'
               f'<line class="frame" x1="{x0}" x2="{x1}" y1="{y0}" y2="{y0}"/>')
    runs: list[list[BandPoint]] = []
    for p in sorted(points, key=lambda p: p.day):
        if p.usd is None:
            out.append(f'<rect class="withheld" x="{x(p.day)}" y="{y0 + 2}" '
                       f'width="{max(1.0, x(p.day, 1) - x(p.day)):.1f}" height="5">'
                       f"<title>{p.day}: no index ({escape(p.note)})</title></rect>")
            continue
        if runs and (p.day - runs[-1][-1].day).days == 1:
            runs[-1].append(p)
        else:
            runs.append([p])
    for run in runs:
        upper = "".join(f"L{x(p.day)} {y(p.high or p.usd or 0)}H{x(p.day, 1)}" for p in run)
        lower = "".join(f"L{x(p.day, 1)} {y(p.low or p.usd or 0)}H{x(p.day)}"
                        for p in reversed(run))
        out.append(f'<path class="band" d="M{upper[1:]}{lower}Z"/>')
        line = "".join(f"L{x(p.day)} {y(p.usd or 0)}H{x(p.day, 1)}" for p in run)
        out.append(f'<path class="line index" d="M{line[1:]}"/>')
        for p in run:
            out.append(f'<rect class="hover" x="{x(p.day)}" y="{y1}" '
                       f'width="{max(1.0, x(p.day, 1) - x(p.day)):.1f}" height="{y0 - y1}">'
                       f"<title>{p.day}: {_amount(p.usd or 0, currency, 4)}/GPU-h, band "
                       f"{_amount(p.low or 0, currency, 4)}-{_amount(p.high or 0, currency, 4)}"
                       f" ({escape(p.note)})</title></rect>")
    out.append("</svg>")
    return "".join(out)
