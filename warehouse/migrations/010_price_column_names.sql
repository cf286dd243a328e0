-- Schema version 10: ONE naming rule for hourly price columns:
--     <what>_usd_per_gpu_hour   a price per GPU-hour, in US dollars
--     <what>_usd_per_hour       a price per hour of the whole offering (all its GPUs)
-- where <what> says which figure it is (price, market, median, min, p25, p75, max, old, new,
-- direct, aggregator). Renamed here (data kept; docs/export.md lists old -> new):
--     market_price           usd_per_gpu_hour -> market_usd_per_gpu_hour, median_usd -> median_usd_per_gpu_hour,
--                            min_usd/p25_usd/p75_usd/max_usd -> min_/p25_/p75_/max_usd_per_gpu_hour
--     market_provider_price  usd_per_gpu_hour -> median_usd_per_gpu_hour, min_usd/max_usd -> ..._usd_per_gpu_hour
--     daily_cheapest_segment usd_per_gpu_hour -> price_usd_per_gpu_hour, usd_per_hour -> price_usd_per_hour
-- DuckDB cannot rename a column of an indexed table: the two indexes are dropped here and made
-- again by migration 011 (in one transaction with the renames, DuckDB 1.5 aborts), with the comments.

DROP INDEX IF EXISTS market_price_model;
ALTER TABLE market_price RENAME COLUMN usd_per_gpu_hour TO market_usd_per_gpu_hour;
ALTER TABLE market_price RENAME COLUMN median_usd TO median_usd_per_gpu_hour;
ALTER TABLE market_price RENAME COLUMN min_usd TO min_usd_per_gpu_hour;
ALTER TABLE market_price RENAME COLUMN p25_usd TO p25_usd_per_gpu_hour;
ALTER TABLE market_price RENAME COLUMN p75_usd TO p75_usd_per_gpu_hour;
ALTER TABLE market_price RENAME COLUMN max_usd TO max_usd_per_gpu_hour;

DROP INDEX IF EXISTS market_provider_price_model;
ALTER TABLE market_provider_price RENAME COLUMN usd_per_gpu_hour TO median_usd_per_gpu_hour;
ALTER TABLE market_provider_price RENAME COLUMN min_usd TO min_usd_per_gpu_hour;
ALTER TABLE market_provider_price RENAME COLUMN max_usd TO max_usd_per_gpu_hour;

ALTER TABLE daily_cheapest_segment RENAME COLUMN usd_per_gpu_hour TO price_usd_per_gpu_hour;
ALTER TABLE daily_cheapest_segment RENAME COLUMN usd_per_hour TO price_usd_per_hour;

