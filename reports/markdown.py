"""Markdown building blocks shared by the report sections: tables, money, the stale mark."""

from __future__ import annotations

from collections.abc import Sequence

import polars as pl

from contract import STALE_AFTER_H

STALE_MARK = "†"
STALE_NOTE = (f"{STALE_MARK} = price from a stale source (no successful refresh in "
              f"{STALE_AFTER_H} h).")


def money(value: float | None, stale: bool | None = False, digits: int = 2) -> str:
    """$1.23 (more digits below $0.10 so cheap cards do not all read $0.0x), † when stale."""
    if value is None:
        return "–"
    places = digits if abs(value) >= 0.1 or value == 0 else max(digits, 3)
    text = f"${value:,.{places}f}"
    return text + STALE_MARK if stale else text


def pct(value: float | None) -> str:
    return "–" if value is None else f"{value:+.1f}%"


def number(value: float | None, places: int = 1) -> str:
    if value is None:
        return "–"
    if float(value).is_integer():
        return f"{value:,.0f}"
    return f"{value:,.{places}f}"


def _escape(cell: object) -> str:
    text = "" if cell is None else str(cell)
    return text.replace("|", "\\|").replace("\n", " ")


def table(headers: Sequence[str], rows: Sequence[Sequence[object]],
          align_right: Sequence[bool] | None = None) -> str:
    """A GitHub markdown table; `align_right` per column (numbers read best right-aligned)."""
    align = align_right or [False] * len(headers)
    lines = ["| " + " | ".join(_escape(h) for h in headers) + " |",
             "|" + "|".join("---:" if right else "---" for right in align) + "|"]
    lines += ["| " + " | ".join(_escape(c) for c in row) + " |" for row in rows]
    return "\n".join(lines)


def frame_rows(frame: pl.DataFrame) -> list[dict[str, object]]:
    return frame.to_dicts()
