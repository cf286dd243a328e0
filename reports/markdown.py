"""Markdown building blocks shared by the report sections: tables, money, the stale mark."""

from __future__ import annotations

import re
from collections.abc import Sequence

import polars as pl

from contract import STALE_AFTER_H
from warehouse.fx import USD, Unit

STALE_MARK = "†"
STALE_NOTE = (f"{STALE_MARK} = price from a stale source (no successful refresh in "
              f"{STALE_AFTER_H} h).")


def money(value: float | None, stale: bool | None = False, digits: int = 2,
          unit: Unit = USD) -> str:
    """$1.23 (more digits below $0.10 so cheap cards do not all read $0.0x), † when stale;
    `value` is USD, printed in `unit` (EUR 1.05 at its day's rate; – without a rate)."""
    value = unit.amount(value)
    if value is None:
        return "–"
    places = digits if abs(value) >= 0.1 or value == 0 else max(digits, 3)
    text = (f"{unit.currency} {value:,.{places}f}" if unit.converting
            else f"${value:,.{places}f}")
    return text + STALE_MARK if stale else text


def pct(value: float | None) -> str:
    return "–" if value is None else f"{value:+.1f}%"


def number(value: float | None, places: int = 1) -> str:
    if value is None:
        return "–"
    if float(value).is_integer():
        return f"{value:,.0f}"
    return f"{value:,.{places}f}"


# What a name from a provider page must not do in the report: open raw HTML (<script>, an
# <img onerror>), an entity, a code span, a link, or end a table cell or row. Backslash first,
# so an escape already in the text cannot undo ours ("\\|" would end a cell).
_MARKDOWN_ESCAPES = str.maketrans({
    "\\": "\\\\", "|": "\\|", "`": "\\`", "[": "\\[", "]": "\\]",
    "&": "&amp;", "<": "&lt;", ">": "&gt;",
})
_BREAKS = re.compile(r"[\x00-\x1f\x7f-\x9f\u2028\u2029]+")  # newlines and other controls


def md_text(value: object) -> str:
    """`value` as literal text in markdown (a table cell or a sentence): shown, never read as
    markup; one line. Every piece of data the report prints goes through here."""
    text = "" if value is None else str(value)
    return _BREAKS.sub(" ", text).translate(_MARKDOWN_ESCAPES)


def md_code(value: object) -> str:
    """`value` as an inline code span (shown literally; no backtick can end it early)."""
    text = _BREAKS.sub(" ", "" if value is None else str(value)).replace("`", "'")
    return f"`{text}`"


def table(headers: Sequence[str], rows: Sequence[Sequence[object]],
          align_right: Sequence[bool] | None = None) -> str:
    """A GitHub markdown table; `align_right` per column (numbers read best right-aligned).
    Every cell goes through md_text (emphasis such as `**H100**` still reads as bold)."""
    align = align_right or [False] * len(headers)
    lines = ["| " + " | ".join(md_text(h) for h in headers) + " |",
             "|" + "|".join("---:" if right else "---" for right in align) + "|"]
    lines += ["| " + " | ".join(md_text(c) for c in row) + " |" for row in rows]
    return "\n".join(lines)


def frame_rows(frame: pl.DataFrame) -> list[dict[str, object]]:
    return frame.to_dicts()
