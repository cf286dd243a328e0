-- Schema version 4: summary tables that keep the views fast at ten years of nightly history
-- (~50M observations). They hold nothing new: each is a function of observation + scrape_run,
-- kept equal to it by warehouse/summaries.py inside the same transaction as every append, and
-- filled here from the existing rows. bench/warehouse_scale.py measures what they buy.
-- A day is the UTC calendar day of observed_at, whatever the session's TimeZone.

-- The rows of each source's current capture (what latest_capture points at).
CREATE TABLE latest_observation AS SELECT * FROM observation LIMIT 0;

-- Last price of each offering on each day it was observed (the daily_price view's rows).
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

-- Cheapest whole-offering $/GPU-hour per GPU model, pricing and day (the daily_cheapest view).
CREATE TABLE daily_cheapest_summary (
    day                  DATE NOT NULL,
    gpu_model            VARCHAR NOT NULL,
    pricing              VARCHAR NOT NULL,
    min_usd_per_gpu_hour DOUBLE NOT NULL,
    provider             VARCHAR,
    offering             VARCHAR,
    offers               BIGINT NOT NULL
);

-- Every price move, old -> new (the price_change view's rows).
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

-- fill: (warehouse.summaries.rebuild runs the statements below this line again)
INSERT INTO daily_price_summary
SELECT DATE '1970-01-01' + CAST(floor(epoch_us(observed_at) / 86400000000) AS INTEGER) AS day,
       source, provider, offering, region, pricing, gpu_model, gpu_count,
       arg_max(price_usd_per_hour, observed_at), arg_max(price_usd_per_gpu_hour, observed_at),
       bool_or(gpu_only)
FROM observation
GROUP BY ALL
ORDER BY day, source;

INSERT INTO daily_cheapest_summary
SELECT day, gpu_model, pricing, min(price_usd_per_gpu_hour),
       arg_min(provider, price_usd_per_gpu_hour), arg_min(offering, price_usd_per_gpu_hour),
       count(*)
FROM daily_price_summary
WHERE NOT gpu_only AND gpu_model <> 'unknown'
GROUP BY ALL
ORDER BY day;

INSERT INTO price_change_event
WITH ordered AS (
    SELECT *, lag(price_usd_per_hour) OVER w AS old_price, lag(day) OVER w AS old_day
    FROM daily_price_summary
    WINDOW w AS (PARTITION BY source, provider, offering, region, pricing ORDER BY day)
)
SELECT day, old_day, source, provider, offering, region, pricing, gpu_model, gpu_count,
       old_price, price_usd_per_hour,
       round(100 * (price_usd_per_hour - old_price) / old_price, 2)
FROM ordered
WHERE old_price IS NOT NULL AND price_usd_per_hour <> old_price
ORDER BY day;

INSERT INTO price_state
SELECT source, provider, offering, region, pricing, day, gpu_model, gpu_count,
       price_usd_per_hour
FROM daily_price_summary
QUALIFY row_number() OVER (PARTITION BY source, provider, offering, region, pricing
                           ORDER BY day DESC, gpu_model, gpu_count) = 1;

INSERT INTO latest_observation
WITH seen AS (
    SELECT source, capture_id,
           min(observed_at) FILTER (WHERE status = 'success') AS stored_observed_at,
           max(observed_at) AS last_seen_at
    FROM scrape_run
    WHERE status IN ('success', 'unchanged') AND capture_id IS NOT NULL
    GROUP BY source, capture_id
), current AS (
    SELECT source, arg_max(capture_id, last_seen_at) AS capture_id,
           arg_max(stored_observed_at, last_seen_at) AS observed_at
    FROM seen GROUP BY source
)
SELECT o.* FROM observation o
JOIN current c ON o.source = c.source AND o.capture_id = c.capture_id
              AND o.observed_at = c.observed_at;
