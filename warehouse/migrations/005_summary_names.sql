-- Schema version 5: the summary tables take the names of the views that only renamed them
-- (daily_price, price_change, daily_cheapest); price_at became observations_at (views.sql).
-- daily_cheapest now follows current_price_at (direct sources beat aggregators), so
-- warehouse.summaries.rebuild refills every summary after this migration (connection.connect).
DROP VIEW IF EXISTS daily_price;
DROP VIEW IF EXISTS price_change;
DROP VIEW IF EXISTS daily_cheapest;
DROP MACRO TABLE IF EXISTS price_at;
ALTER TABLE IF EXISTS daily_price_summary RENAME TO daily_price;
ALTER TABLE IF EXISTS price_change_event RENAME TO price_change;
ALTER TABLE IF EXISTS daily_cheapest_summary RENAME TO daily_cheapest;
