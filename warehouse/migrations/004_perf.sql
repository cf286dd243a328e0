-- Schema version 4: summary tables that keep the views fast at ten years of nightly history
-- (~50M observations). They hold nothing new: each is a function of observation + scrape_run,
-- and warehouse/summaries.py owns every statement that fills them (kept equal inside the same
-- transaction as every append; rebuilt from scratch after a migration). DDL only here.
-- bench/warehouse_scale.py measures what they buy.
-- A day is the UTC calendar day of observed_at, whatever the session's TimeZone.
-- Migration 005 renames three of them (daily_price, daily_cheapest, price_change).

-- The rows of each source's current capture (what latest_capture points at).
CREATE TABLE latest_observation AS SELECT * FROM observation LIMIT 0;

-- Last price of each offering on each day it was observed (every source).
CREATE TABLE daily_price_summary (
    day                    DATE NOT NULL,
    source                 VARCHAR NOT NULL,
    provider               VARCHAR NOT NULL,
    offering               VARCHAR NOT NULL,
    region                 VARCHAR NOT NULL,
    pricing                VARCHAR NOT NULL,
    gpu_model              VARCHAR NOT NULL,
    gpu_count              DOUBLE NOT NULL,
    price_usd_per_hour     DOUBLE NOT NULL,
    price_usd_per_gpu_hour DOUBLE NOT NULL,
    gpu_only               BOOLEAN NOT NULL
);

-- Cheapest current whole-offering $/GPU-hour per GPU model, pricing and observed day
-- (current_price_at the end of that day, stale sources left out).
CREATE TABLE daily_cheapest_summary (
    day                  DATE NOT NULL,
    gpu_model            VARCHAR NOT NULL,
    pricing              VARCHAR NOT NULL,
    min_usd_per_gpu_hour DOUBLE NOT NULL,
    provider             VARCHAR,
    offering             VARCHAR,
    offers               BIGINT NOT NULL
);

-- Every price move of an offering, old -> new, with the dates (consecutive observed days).
CREATE TABLE price_change_event (
    changed_on             DATE NOT NULL,
    previous_day           DATE NOT NULL,
    source                 VARCHAR NOT NULL,
    provider               VARCHAR NOT NULL,
    offering               VARCHAR NOT NULL,
    region                 VARCHAR NOT NULL,
    pricing                VARCHAR NOT NULL,
    gpu_model              VARCHAR NOT NULL,
    gpu_count              DOUBLE NOT NULL,
    old_price_usd_per_hour DOUBLE NOT NULL,
    new_price_usd_per_hour DOUBLE NOT NULL,
    pct_change             DOUBLE
);

-- The last daily price of every offering, so a new night's changes need no history scan.
CREATE TABLE price_state (
    source             VARCHAR NOT NULL,
    provider           VARCHAR NOT NULL,
    offering           VARCHAR NOT NULL,
    region             VARCHAR NOT NULL,
    pricing            VARCHAR NOT NULL,
    last_day           DATE NOT NULL,
    gpu_model          VARCHAR NOT NULL,
    gpu_count          DOUBLE NOT NULL,
    price_usd_per_hour DOUBLE NOT NULL,
    PRIMARY KEY (source, provider, offering, region, pricing)
);
