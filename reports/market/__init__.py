"""The price questions, one module each, all read from the semantic layer (warehouse.semantic):
the market price and its moves (values, moves), explain, the cheapest offers and tiers
(rankings), the comparison matrix, scenarios, VRAM fit, cluster quotes, rent vs buy and the
cost of ownership (tco), price-performance (value), plans, and price history. Each returns
frames (and, where the weekly report shows it, its markdown section); the weekly report, the
board and the CLI present them."""
