"""The static price board: self-contained HTML pages (inline CSS, server-rendered SVG charts,
a few lines of vanilla JS), one per ISO week, from the same warehouse as the weekly report."""

from reports.board.site import BoardBuild, build_board, render_week, week_pages

__all__ = ["BoardBuild", "build_board", "render_week", "week_pages"]
