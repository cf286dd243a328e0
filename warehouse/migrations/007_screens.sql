-- Schema version 7: what the screens between parse and store leave behind (schemas/screens.py).
--   screen_flag       why a stored row is kept out of the market price (an unconfirmed jump of
--                     >= 25 %; the next run that repeats the price confirms it); null: nothing
--   provider_capture  for aggregator sources: which providers each stored capture priced, and
--                     how many rows. A provider whose part of a capture was rejected by a volume
--                     gate, or that the capture does not mention, keeps the prices of its last
--                     stored part (views.sql: observations_at), so an aggregator's partial answer
--                     never wipes a provider.
ALTER TABLE observation ADD COLUMN IF NOT EXISTS screen_flag VARCHAR;
ALTER TABLE latest_observation ADD COLUMN IF NOT EXISTS screen_flag VARCHAR;
ALTER TABLE quarantine ADD COLUMN IF NOT EXISTS screen_flag VARCHAR;

CREATE TABLE IF NOT EXISTS provider_capture (
    source      VARCHAR NOT NULL,
    provider    VARCHAR NOT NULL,
    capture_id  VARCHAR NOT NULL,
    observed_at TIMESTAMPTZ NOT NULL,  -- the observed_at its observations were stored under
    run_id      VARCHAR NOT NULL,
    rows        INTEGER NOT NULL,
    PRIMARY KEY (source, provider, capture_id, observed_at)
);
-- Captures stored before this version: one part per provider they priced.
INSERT INTO provider_capture
SELECT o.source, o.provider, o.capture_id, o.observed_at, any_value(o.run_id), count(*)
FROM observation o JOIN source s ON s.source = o.source AND s.aggregator
GROUP BY ALL
ON CONFLICT DO NOTHING;
