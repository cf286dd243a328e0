"""Axis ticks shared by the board's SVG charts (reports.board.svg) and the report's PNG chart
(reports.linechart)."""

from __future__ import annotations

import math

__all__ = ["nice_ticks"]


def nice_ticks(high: float, count: int = 5) -> list[float]:
    """0 .. a round number >= high, in count-ish round steps (1, 2, 2.5, 5 x 10^k); [0, 1]
    when `high` is not a positive number."""
    if not math.isfinite(high) or high <= 0:
        return [0.0, 1.0]
    raw = high / count
    power = 10 ** math.floor(math.log10(raw))
    step = next(m * power for m in (1, 2, 2.5, 5, 10) if m * power >= raw)
    top = math.ceil(high / step - 1e-9) * step
    return [round(i * step, 10) for i in range(round(top / step) + 1)]
