"""The GPU price index as views show it: tables, the board's index page and files, the
impact report and the backtest (numbers from warehouse/index only)."""
