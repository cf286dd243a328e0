-- Schema version 16: daily_move, the price moves that count: each row of price_change whose
-- source spoke for the offering's provider x GPU model x pricing at the end of the move's day
-- (daily_source). Kept up with the other day-by-day tables (semantic_daily.refresh_days), so
-- price_moves_since (views.sql) reads the counted moves instead of joining price_change with
-- daily_source on every read: `changes --since 2024-01-01` at 50 M observations read 105 ms
-- through the join, 18 ms from this table (BENCHMARKS.md §24).
-- It is filled here from the two tables it is made of, as refresh_days would fill it, so no
-- stored table changes and no rebuild is needed:
-- derived tables: unchanged
-- The columns of price_change, its changed_on named day (as every day-by-day table's).
DROP TABLE IF EXISTS daily_move;
CREATE TABLE daily_move AS
SELECT c.* RENAME (changed_on AS day) FROM price_change c
SEMI JOIN daily_source d ON d.day = c.changed_on AND d.source = c.source
    AND d.provider = c.provider AND d.gpu_model = c.gpu_model AND d.pricing = c.pricing
ORDER BY c.changed_on;
COMMENT ON TABLE daily_move IS 'Derived: the price moves that count: each price_change row whose source spoke for the offering that day (daily_source); the view price_move adds the comparability rule.';
