-- Schema version 9: prices quoted in another currency, converted at dated ECB reference rates.
--   fx_rate  one row per published (day, currency): units of `currency` one euro buys, as the
--            ECB quotes it, with the raw capture (raw_capture) of the file it was read from.
--            A rate is never revised here: the first one stored for a day is the one used.
--   observation.fx_rate / fx_date (and on latest_observation and quarantine, in the same
--            order): the rate a non-USD price was converted at (USD per unit of `currency`)
--            and the ECB reference day it comes from; null for prices quoted in USD.
CREATE TABLE IF NOT EXISTS fx_rate (
    rate_date  DATE NOT NULL,
    currency   VARCHAR NOT NULL,
    per_eur    DOUBLE NOT NULL CHECK (per_eur > 0),
    source     VARCHAR NOT NULL,
    capture_id VARCHAR NOT NULL,
    PRIMARY KEY (rate_date, currency)
);
ALTER TABLE observation ADD COLUMN IF NOT EXISTS fx_rate DOUBLE;
ALTER TABLE observation ADD COLUMN IF NOT EXISTS fx_date DATE;
ALTER TABLE latest_observation ADD COLUMN IF NOT EXISTS fx_rate DOUBLE;
ALTER TABLE latest_observation ADD COLUMN IF NOT EXISTS fx_date DATE;
ALTER TABLE quarantine ADD COLUMN IF NOT EXISTS fx_rate DOUBLE;
ALTER TABLE quarantine ADD COLUMN IF NOT EXISTS fx_date DATE;
