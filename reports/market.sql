-- The market price tables (reports/market_store.py keeps them; reports/market.py says how each
-- value is made). Rows are written in day order per refresh, so a date range reads few row
-- groups; the index serves one GPU model's history (a year of one model: ~5 x 365 rows).

CREATE TABLE IF NOT EXISTS market_price (
    day               DATE NOT NULL,
    gpu_model         VARCHAR NOT NULL,
    segment           VARCHAR NOT NULL,   -- 'all', or hyperscaler | neocloud | marketplace ...
    usd_per_gpu_hour  DOUBLE,             -- the market price; NULL when withheld
    median_usd        DOUBLE NOT NULL,    -- the cross-provider median, withheld or not
    min_usd           DOUBLE NOT NULL,
    p25_usd           DOUBLE NOT NULL,
    p75_usd           DOUBLE NOT NULL,
    max_usd           DOUBLE NOT NULL,
    providers         INTEGER NOT NULL,
    offers            INTEGER NOT NULL,
    dispersion        DOUBLE,             -- (p75 - p25) / median of the per-provider medians
    carried_providers VARCHAR[],          -- providers whose prices are carried forward
    withheld_reason   VARCHAR,            -- NULL when published
    pricing           VARCHAR NOT NULL,   -- the pricing kinds that counted
    computed_at       TIMESTAMPTZ NOT NULL
);
CREATE INDEX IF NOT EXISTS market_price_model ON market_price (gpu_model);

-- Stage one: each provider's median $/GPU-hour per model and day.
CREATE TABLE IF NOT EXISTS market_provider_price (
    day               DATE NOT NULL,
    gpu_model         VARCHAR NOT NULL,
    provider          VARCHAR NOT NULL,
    segment           VARCHAR NOT NULL,
    usd_per_gpu_hour  DOUBLE NOT NULL,
    offers            INTEGER NOT NULL,
    offerings         INTEGER NOT NULL,
    carried_days      INTEGER NOT NULL,   -- 0: prices seen that day; 1..3: carried forward
    sources           VARCHAR NOT NULL
);
CREATE INDEX IF NOT EXISTS market_provider_price_model ON market_provider_price (gpu_model);
