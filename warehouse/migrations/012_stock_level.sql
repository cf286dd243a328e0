-- Schema version 12: availability as a series (issue 26). `available` and `gpus_available`
-- (migration 006) say whether an offer could be rented and how many GPUs were free; this adds
-- the source's own word for how much stock there is, in one vocabulary (contract.STOCK_LEVELS:
-- high, medium, low; null where the source does not say). The same column, in the same
-- order, on every table shaped like observation. The stock state built on them is the macro
-- stock_state (views.sql).
ALTER TABLE observation ADD COLUMN IF NOT EXISTS stock_level VARCHAR;
ALTER TABLE latest_observation ADD COLUMN IF NOT EXISTS stock_level VARCHAR;
ALTER TABLE quarantine ADD COLUMN IF NOT EXISTS stock_level VARCHAR;
COMMENT ON COLUMN observation.stock_level IS 'The source''s own word for its stock when seen: high, medium or low (NULL: the source does not say).';
