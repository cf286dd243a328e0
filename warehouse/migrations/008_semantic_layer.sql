-- Schema version 8: the semantic layer's derived tables, DDL only. Each is a function of
-- observation + scrape_run (+ warehouse/market.toml), kept up by ONE step, warehouse.summaries
-- .after_append, inside every append's transaction; warehouse.semantic holds the rules.
-- The tables are dropped and created again, not altered: an existing warehouse is refilled
-- from its observations by warehouse.summaries.rebuild right after this migration.
-- - term_months joins an offering's identity (a 1-year and a 3-year reserved price are two
--   offerings): daily_price, price_change and price_state key on it (0 = no term).
-- - daily_cheapest_segment: the cheapest comparable offer per GPU model, provider segment and
--   observed day, in the default pricing set, with the offer's provenance (the view
--   daily_cheapest, views.sql, is its cheapest per GPU model and day). It replaces the table
--   daily_cheapest (one row per pricing kind, unavailable offers counted).
-- - daily_source: which source spoke for each provider x GPU model x pricing at the end of
--   each observed day (source precedence), so a price move is read from that source only.
-- - market_price, market_provider_price: moved here from reports/market.sql; min_usd and
--   max_usd are now the lowest and highest counted offer (p25/p75 stay over provider medians).

DROP TABLE IF EXISTS daily_price;
CREATE TABLE daily_price (
    day                    DATE NOT NULL,
    source                 VARCHAR NOT NULL,
    provider               VARCHAR NOT NULL,
    offering               VARCHAR NOT NULL,
    region                 VARCHAR NOT NULL,
    pricing                VARCHAR NOT NULL,
    term_months            DOUBLE NOT NULL,
    gpu_model              VARCHAR NOT NULL,
    gpu_count              DOUBLE NOT NULL,
    price_usd_per_hour     DOUBLE NOT NULL,
    price_usd_per_gpu_hour DOUBLE NOT NULL,
    gpu_only               BOOLEAN NOT NULL
);

DROP TABLE IF EXISTS price_change;
CREATE TABLE price_change (
    changed_on             DATE NOT NULL,
    previous_day           DATE NOT NULL,
    source                 VARCHAR NOT NULL,
    provider               VARCHAR NOT NULL,
    offering               VARCHAR NOT NULL,
    region                 VARCHAR NOT NULL,
    pricing                VARCHAR NOT NULL,
    term_months            DOUBLE NOT NULL,
    gpu_model              VARCHAR NOT NULL,
    gpu_count              DOUBLE NOT NULL,
    gpu_only               BOOLEAN NOT NULL,
    old_price_usd_per_hour DOUBLE NOT NULL,
    new_price_usd_per_hour DOUBLE NOT NULL,
    pct_change             DOUBLE
);

DROP TABLE IF EXISTS price_state;
CREATE TABLE price_state (
    source             VARCHAR NOT NULL,
    provider           VARCHAR NOT NULL,
    offering           VARCHAR NOT NULL,
    region             VARCHAR NOT NULL,
    pricing            VARCHAR NOT NULL,
    term_months        DOUBLE NOT NULL,
    last_day           DATE NOT NULL,
    gpu_model          VARCHAR NOT NULL,
    gpu_count          DOUBLE NOT NULL,
    gpu_only           BOOLEAN NOT NULL,
    price_usd_per_hour DOUBLE NOT NULL,
    PRIMARY KEY (source, provider, offering, region, pricing, term_months)
);

DROP TABLE IF EXISTS daily_cheapest;
DROP TABLE IF EXISTS daily_cheapest_segment;
CREATE TABLE daily_cheapest_segment (
    day              DATE NOT NULL,
    gpu_model        VARCHAR NOT NULL,
    segment          VARCHAR NOT NULL,
    usd_per_gpu_hour DOUBLE NOT NULL,
    provider         VARCHAR NOT NULL,
    offering         VARCHAR NOT NULL,
    region           VARCHAR NOT NULL,
    pricing          VARCHAR NOT NULL,
    gpu_count        DOUBLE NOT NULL,
    usd_per_hour     DOUBLE NOT NULL,
    source           VARCHAR NOT NULL,
    capture_id       VARCHAR NOT NULL,
    observed_at      TIMESTAMPTZ NOT NULL,
    offers           INTEGER NOT NULL     -- comparable offers of the model in the segment
);

DROP TABLE IF EXISTS daily_source;
CREATE TABLE daily_source (
    day       DATE NOT NULL,
    provider  VARCHAR NOT NULL,
    gpu_model VARCHAR NOT NULL,
    pricing   VARCHAR NOT NULL,
    source    VARCHAR NOT NULL
);

DROP TABLE IF EXISTS market_price;
CREATE TABLE market_price (
    day               DATE NOT NULL,
    gpu_model         VARCHAR NOT NULL,
    segment           VARCHAR NOT NULL,   -- 'all', or hyperscaler | neocloud | marketplace ...
    usd_per_gpu_hour  DOUBLE,             -- the market price; NULL when withheld
    median_usd        DOUBLE NOT NULL,    -- the cross-provider median, withheld or not
    min_usd           DOUBLE NOT NULL,    -- the lowest counted offer
    p25_usd           DOUBLE NOT NULL,    -- of the provider medians
    p75_usd           DOUBLE NOT NULL,
    max_usd           DOUBLE NOT NULL,    -- the highest counted offer
    providers         INTEGER NOT NULL,
    offers            INTEGER NOT NULL,
    dispersion        DOUBLE,             -- (p75 - p25) / median of the per-provider medians
    carried_providers VARCHAR[],          -- providers whose prices are carried forward
    withheld_reason   VARCHAR,            -- NULL when published
    pricing           VARCHAR NOT NULL,   -- the pricing kinds that counted
    computed_at       TIMESTAMPTZ NOT NULL
);
CREATE INDEX market_price_model ON market_price (gpu_model);

-- Stage one: each provider's median $/GPU-hour per model and day.
DROP TABLE IF EXISTS market_provider_price;
CREATE TABLE market_provider_price (
    day               DATE NOT NULL,
    gpu_model         VARCHAR NOT NULL,
    provider          VARCHAR NOT NULL,
    segment           VARCHAR NOT NULL,
    usd_per_gpu_hour  DOUBLE NOT NULL,
    offers            INTEGER NOT NULL,
    offerings         INTEGER NOT NULL,
    carried_days      INTEGER NOT NULL,   -- 0: prices seen that day; 1, 2: carried forward
    sources           VARCHAR NOT NULL,
    min_usd           DOUBLE NOT NULL,    -- the provider's lowest counted offer
    max_usd           DOUBLE NOT NULL     -- and its highest
);
CREATE INDEX market_provider_price_model ON market_provider_price (gpu_model);
