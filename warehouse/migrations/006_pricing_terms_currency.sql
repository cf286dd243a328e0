-- Schema version 6: what a price is, said in full. Every column is optional (null for rows
-- stored before), so nothing is rewritten:
--   term_months            commitment length of a `reserved` price (1, 6, 12, 36 ...)
--   effective_from         an announced price: the day it takes effect (null: in force when seen)
--   currency               ISO 4217 code of the price as quoted (null: USD)
--   price_native_per_hour  the whole-offering price in `currency` when that is not USD
--   gpus_available         GPUs free to rent when seen, where the source says
-- The same columns, in the same order, on every table shaped like observation.
ALTER TABLE observation ADD COLUMN IF NOT EXISTS term_months DOUBLE;
ALTER TABLE observation ADD COLUMN IF NOT EXISTS effective_from DATE;
ALTER TABLE observation ADD COLUMN IF NOT EXISTS currency VARCHAR;
ALTER TABLE observation ADD COLUMN IF NOT EXISTS price_native_per_hour DOUBLE;
ALTER TABLE observation ADD COLUMN IF NOT EXISTS gpus_available DOUBLE;
ALTER TABLE latest_observation ADD COLUMN IF NOT EXISTS term_months DOUBLE;
ALTER TABLE latest_observation ADD COLUMN IF NOT EXISTS effective_from DATE;
ALTER TABLE latest_observation ADD COLUMN IF NOT EXISTS currency VARCHAR;
ALTER TABLE latest_observation ADD COLUMN IF NOT EXISTS price_native_per_hour DOUBLE;
ALTER TABLE latest_observation ADD COLUMN IF NOT EXISTS gpus_available DOUBLE;
ALTER TABLE quarantine ADD COLUMN IF NOT EXISTS term_months DOUBLE;
ALTER TABLE quarantine ADD COLUMN IF NOT EXISTS effective_from DATE;
ALTER TABLE quarantine ADD COLUMN IF NOT EXISTS currency VARCHAR;
ALTER TABLE quarantine ADD COLUMN IF NOT EXISTS price_native_per_hour DOUBLE;
ALTER TABLE quarantine ADD COLUMN IF NOT EXISTS gpus_available DOUBLE;
