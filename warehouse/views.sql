-- Views and macros, named for the question they answer. Recreated on every open, so they
-- always match this code; they hold no data of their own. The semantic layer's rules that
-- need a setting (the pricing set, market.toml's outlier fences) are SQL built by
-- warehouse/semantic.py on top of the macros here; stale_after() (the freshness limit,
-- contract.STALE_AFTER_H) is created by warehouse.connection.refresh_views just before this.

-- A run whose capture holds its source's prices: it stored them, or re-confirmed a capture
-- stored earlier (contract.CONFIRMING). Every "last success" below is one of these runs.
CREATE OR REPLACE MACRO confirms(status) AS status IN ('success', 'unchanged');

-- The UTC calendar day of a TIMESTAMPTZ, whatever the session's TimeZone (and fast: no ICU).
CREATE OR REPLACE MACRO utc_day(moment) AS
    DATE '1970-01-01' + CAST(floor(epoch_us(moment) / 86400000000) AS INTEGER);

-- Every stored capture per source, from the run record alone (cheap at any history size).
-- An "unchanged" run re-confirms a capture stored earlier; `last_seen_at` is the newest time
-- a run saw it (fetch time, or snapshot date for backfills).
CREATE OR REPLACE VIEW capture_seen AS
SELECT source, capture_id,
       min(observed_at) FILTER (WHERE status = 'success') AS stored_observed_at,
       max(rows_stored) FILTER (WHERE status = 'success') AS rows_stored,
       max(observed_at) AS last_seen_at,
       max(finished_at) AS last_success_at
FROM scrape_run
WHERE confirms(status) AND capture_id IS NOT NULL
GROUP BY source, capture_id;

-- The capture each source's prices currently come from: the one its latest confirming run
-- saw (= the capture_seen row with the newest last_seen_at). Written to aggregate only the
-- runs of that capture, not every capture ever seen (it runs on every append and query).
CREATE OR REPLACE VIEW latest_capture AS
WITH seen AS (
    SELECT * FROM scrape_run WHERE confirms(status) AND capture_id IS NOT NULL
), pick AS (
    SELECT source, arg_max(capture_id, observed_at) AS capture_id,
           max(finished_at) AS last_success_at
    FROM seen GROUP BY source
)
SELECT p.source, p.capture_id,
       min(s.observed_at) FILTER (WHERE s.status = 'success') AS observed_at,
       max(s.rows_stored) FILTER (WHERE s.status = 'success') AS latest_rows,
       any_value(p.last_success_at) AS last_success_at
FROM pick p LEFT JOIN seen s ON s.source = p.source AND s.capture_id = p.capture_id
GROUP BY p.source, p.capture_id;

-- ---- THE SEMANTIC LAYER: each concept once (warehouse/semantic.py builds the rest on these)

-- Per source, the capture its prices came from at `as_of`: the one its last confirming run
-- at or before `as_of` saw, with when that run saw it (`seen_at`) and when it was stored
-- (`observed_at`). A capture that is still the source's current one takes its stored time
-- from latest_observation (kept equal to latest_capture by warehouse/summaries.py); only an
-- older capture looks it up in the run record (capture_seen's rule), so the usual question,
-- the prices now, reads scrape_run once and groups no capture.
CREATE OR REPLACE MACRO capture_at(as_of) AS TABLE
WITH last AS (
    SELECT source, arg_max(capture_id, observed_at) AS capture_id, max(observed_at) AS seen_at
    FROM scrape_run
    WHERE confirms(status) AND capture_id IS NOT NULL AND observed_at <= as_of
    GROUP BY source
), held AS (
    SELECT DISTINCT source, capture_id, observed_at FROM latest_observation
), older AS (
    SELECT * FROM last ANTI JOIN held USING (source, capture_id)
), older_stored AS (
    SELECT source, capture_id, min(observed_at) AS observed_at
    FROM scrape_run SEMI JOIN older USING (source, capture_id)
    WHERE status = 'success'
    GROUP BY source, capture_id
)
SELECT l.source, l.capture_id, h.observed_at, l.seen_at
FROM last l JOIN held h USING (source, capture_id)
UNION ALL
SELECT o.source, o.capture_id, s.observed_at, o.seen_at
FROM older o LEFT JOIN older_stored s USING (source, capture_id);

-- FRESHNESS as of a moment, per registered source: the newest time a confirming run saw its
-- prices (observed time, so a backfilled snapshot counts as of its own date and a report of a
-- past week sees the runs of that week only), the last run by then, and
-- `stale` = not seen within stale_after() (48 h) before `as_of`. A stale source's prices are
-- not comparable offers; one seen on an earlier UTC day but within the limit is carried
-- forward (`carried_days` > 0, flagged). The capture is capture_at's; its rows are counted
-- from its 'success' runs only (capture_seen's rule), looked up for those few captures.
CREATE OR REPLACE MACRO freshness_at(as_of) AS TABLE
WITH cap AS (
    SELECT * FROM capture_at(as_of)
), stored AS (
    SELECT source, capture_id, max(rows_stored) AS rows_stored
    FROM scrape_run SEMI JOIN cap USING (source, capture_id)
    WHERE status = 'success'
    GROUP BY source, capture_id
), last_run AS (
    SELECT source, arg_max(status, coalesce(observed_at, started_at)) AS last_status,
           arg_max(error, coalesce(observed_at, started_at)) AS last_error
    FROM scrape_run WHERE coalesce(observed_at, started_at) <= as_of GROUP BY source
)
SELECT src.source, src.provider, src.kind, src.aggregator,
       c.seen_at AS last_success_at, c.observed_at AS prices_as_of,
       coalesce(s.rows_stored, 0) AS rows, coalesce(r.last_status, 'never run') AS last_status,
       r.last_error, utc_day(as_of) - utc_day(c.seen_at) AS carried_days,
       (c.seen_at IS NULL OR c.seen_at < as_of - stale_after()) AS stale
FROM source src
LEFT JOIN cap c USING (source)
LEFT JOIN stored s ON s.source = c.source AND s.capture_id = c.capture_id
LEFT JOIN last_run r ON r.source = src.source;

-- AN ANNOUNCED PRICE (effective_from after the day asked about) is not in force yet; a row
-- without effective_from is in force when seen. Of one offering's rows in force, the one with
-- the latest effective_from is its price (current_price_at).
CREATE OR REPLACE MACRO in_force(effective_from, as_of) AS
    effective_from IS NULL OR effective_from <= utc_day(as_of);

-- Every source's observations in force at `as_of` (aggregators included, no precedence),
-- with the source's kind and freshness then. A capture that is still a source's current one
-- is read from latest_observation (~15k rows, kept by warehouse/summaries.py); only older
-- captures are looked up in observation.
-- An aggregator's part for one provider that its current capture lacks (the provider's part
-- was rejected by a volume gate, or the capture does not mention it) stays in effect: the
-- provider's last stored part at `as_of` (provider_capture, migration 007), stale once no run
-- has seen that capture for stale_after(). Direct sources have no parts: their capture is whole.
CREATE OR REPLACE MACRO observations_at(as_of) AS TABLE
WITH cap AS (
    SELECT * FROM capture_at(as_of)
), held AS (
    SELECT DISTINCT source, capture_id, observed_at FROM latest_observation
), recent AS (
    SELECT cap.* FROM cap SEMI JOIN held USING (source, capture_id, observed_at)
), older AS (
    SELECT cap.* FROM cap ANTI JOIN held USING (source, capture_id, observed_at)
), parts AS (
    SELECT p.* FROM provider_capture p SEMI JOIN cap USING (source) WHERE p.observed_at <= as_of
), current_parts AS (
    SELECT p.source, p.provider FROM parts p
    JOIN cap c ON p.source = c.source AND p.capture_id = c.capture_id
              AND p.observed_at = c.observed_at
), held_parts AS (
    SELECT source, provider, arg_max(capture_id, observed_at) AS capture_id,
           max(observed_at) AS observed_at
    FROM parts ANTI JOIN current_parts USING (source, provider)
    GROUP BY source, provider
), held_seen AS (
    SELECT s.source, s.capture_id, max(s.observed_at) AS seen_at
    FROM scrape_run s SEMI JOIN held_parts h USING (source, capture_id)
    WHERE confirms(s.status) AND s.observed_at <= as_of
    GROUP BY s.source, s.capture_id
), picked AS (
    SELECT o.*, r.seen_at FROM latest_observation o
    JOIN recent r ON o.source = r.source AND o.capture_id = r.capture_id
                 AND o.observed_at = r.observed_at
    UNION ALL
    SELECT o.*, r.seen_at FROM observation o
    JOIN older r ON o.source = r.source AND o.capture_id = r.capture_id
                AND o.observed_at = r.observed_at
    UNION ALL
    SELECT o.*, seen.seen_at FROM observation o
    JOIN held_parts p ON o.source = p.source AND o.provider = p.provider
                     AND o.capture_id = p.capture_id AND o.observed_at = p.observed_at
    JOIN held_seen seen ON seen.source = p.source AND seen.capture_id = p.capture_id
)
SELECT p.* EXCLUDE (seen_at), src.aggregator, src.kind AS source_kind,
       p.seen_at AS last_success_at, utc_day(as_of) - utc_day(p.seen_at) AS carried_days,
       (p.seen_at < as_of - stale_after()) AS stale
FROM picked p JOIN source src ON src.source = p.source
WHERE in_force(p.effective_from, as_of);

-- SOURCE PRECEDENCE: which source speaks for a provider when several have its price: its own
-- API, then its own page, then catalogs; aggregators (skypilot, opencomputeprices,
-- ec2instances) come last.
CREATE OR REPLACE MACRO source_rank(aggregator, kind) AS
    (CASE WHEN aggregator THEN 10 ELSE 0 END)
    + (CASE kind WHEN 'api' THEN 0 WHEN 'page' THEN 1 WHEN 'catalog' THEN 2 ELSE 3 END);

-- THE CURRENT PRICE of every offering at `as_of`: one source per provider x GPU model x
-- pricing (the best by source_rank); aggregator rows fill in only for providers that have no
-- direct source at all. Of one offering's prices in force, an announced one now in force
-- replaces the others (the latest effective_from wins). Only in_force_rows is held
-- (materialised): `seen` is a filter of it, inlined where it is read, and the rules look at
-- narrow keys. The chosen source passes the aggregator rule, which depends on provider and
-- source alone, so the final rows need not test it again. (Holding each step's wide rows
-- cost ~2 ms at 50 M: BENCHMARKS §23.) A superseded row leaves its replacement from the same
-- source, so `direct_providers` is the same before or after the ANTI JOIN.
CREATE OR REPLACE MACRO current_price_at(as_of) AS TABLE
WITH in_force_rows AS (
    SELECT * FROM observations_at(as_of)
), dated AS (  -- offerings with an announced price now in force, and its latest date
    SELECT source, provider, offering, region, pricing, gpu_count, gpu_only, term_months,
           max(effective_from) AS latest
    FROM in_force_rows WHERE effective_from IS NOT NULL GROUP BY ALL
), seen AS NOT MATERIALIZED (
    SELECT i.* FROM in_force_rows i ANTI JOIN dated d
        ON i.source = d.source AND i.provider = d.provider AND i.offering = d.offering
       AND i.region = d.region AND i.pricing = d.pricing AND i.gpu_count = d.gpu_count
       AND i.gpu_only = d.gpu_only AND i.term_months IS NOT DISTINCT FROM d.term_months
       AND i.effective_from IS DISTINCT FROM d.latest
), direct_providers AS (
    SELECT DISTINCT provider FROM in_force_rows WHERE NOT aggregator
), best AS (
    SELECT provider, gpu_model, pricing,
           first(source ORDER BY source_rank(aggregator, source_kind), source) AS source
    FROM seen
    WHERE NOT aggregator OR provider NOT IN (SELECT provider FROM direct_providers)
    GROUP BY provider, gpu_model, pricing
)
SELECT * FROM seen SEMI JOIN best USING (provider, gpu_model, pricing, source);

-- THE COMPARABLE-OFFER RULE: why an offer cannot be compared like for like with the others
-- (NULL: it can), the first reason that applies. Known GPU; a whole offering (not a GPU price
-- without its machine); at least one whole GPU (a slice is never shown as a whole GPU: it is
-- left out everywhere); one of the pricing kinds asked for; available (unknown availability
-- counts: most sources do not say); not stale. warehouse/semantic.py adds the last two
-- rules, which need the other offers: unconfirmed jumps and market outliers.
CREATE OR REPLACE MACRO excluded_because(gpu_model, gpu_only, gpu_count, pricing,
                                         pricing_set, available, stale) AS
    CASE WHEN gpu_model = 'unknown' THEN 'unknown_gpu'
         WHEN gpu_only THEN 'gpu_only'
         WHEN gpu_count < 1 THEN 'fractional'
         WHEN NOT list_contains(pricing_set, pricing) THEN 'other_pricing'
         WHEN available = false THEN 'unavailable'
         WHEN stale THEN 'stale' END;

-- THE STOCK STATE (contract.STOCK_STATES) of one offer, or of a provider x GPU x region
-- (warehouse/semantic_stock.py aggregates its offers first: in stock when any is; the level
-- `low` when every in-stock offer says low; the GPUs free summed when every in-stock offer
-- counts them). No source says: unknown. Not in stock: out_of_stock. In stock but the source
-- says low, or at most low_stock_gpus() GPUs free (contract.LOW_STOCK_GPUS): low.
CREATE OR REPLACE MACRO stock_state(in_stock, level, gpus_free) AS
    CASE WHEN in_stock IS NULL THEN 'unknown'
         WHEN NOT in_stock THEN 'out_of_stock'
         WHEN level = 'low' OR gpus_free <= low_stock_gpus() THEN 'low'
         ELSE 'available' END;

-- The current price of every offering now, with `stale`.
CREATE OR REPLACE VIEW latest_price AS SELECT * FROM current_price_at(now());

-- Latest prices of every source, aggregators included (for cross-checks).
CREATE OR REPLACE VIEW latest_price_all_sources AS SELECT * FROM observations_at(now());

-- Per source: last run, last success, rows, and whether its prices are stale now
-- (freshness_at(now()) plus what the last run and parse said).
CREATE OR REPLACE VIEW source_status AS
WITH last_run AS (
    SELECT source, arg_max(rows_stored, finished_at) AS rows_last_run,
           arg_max(rows_quarantined, finished_at) AS quarantined_last_run,
           arg_max(unknown_gpus, finished_at) AS unknown_gpus,
           -- what the last successful parse skipped, by reason (warehouse.ingest.skips_note)
           arg_max(coalesce(regexp_extract(note, 'skipped: (.*)$', 1), ''), finished_at)
               FILTER (WHERE status = 'success') AS skipped_last_parse,
           -- the last run that parsed rows: how many the screens and checks quarantined, and
           -- what the screens held or flagged, by screen (warehouse.ingest.skips_note)
           arg_max(rows_quarantined, finished_at) FILTER (WHERE rows_parsed > 0)
               AS quarantined_last_parse,
           arg_max(coalesce(regexp_extract(note, 'screened: ([^;]*)', 1), ''), finished_at)
               FILTER (WHERE rows_parsed > 0) AS screened_last_parse,
           max(finished_at) AS last_run_at,
           arg_max(status, finished_at) AS last_status,
           arg_max(error, finished_at) AS last_error
    FROM scrape_run GROUP BY source
)
SELECT src.source, src.provider, src.kind, src.url, src.aggregator,
       r.last_run_at, r.last_status, r.last_error, c.last_success_at, c.observed_at AS prices_as_of,
       coalesce(c.latest_rows, 0) AS latest_rows, r.rows_last_run, r.quarantined_last_run,
       r.unknown_gpus, r.skipped_last_parse, r.quarantined_last_parse, r.screened_last_parse,
       f.stale
FROM source src
LEFT JOIN last_run r USING (source)
LEFT JOIN latest_capture c USING (source)
LEFT JOIN freshness_at(now()) f USING (source);

-- PRICE MOVES: each move of an offering's current price. price_change holds every source's
-- moves; daily_move those that count: the source was the one speaking for the offering that
-- day (daily_source: source precedence at the end of the day; semantic_daily.refresh_days
-- keeps it). A move is shown when the offering is also comparable in itself (a known GPU, a
-- whole offering, whole GPUs), decided here at read time from the catalog. Per GPU-hour
-- figures alongside. price_moves_since(day): the moves on or after `day` (daily_move is in
-- day order, so a week's moves read one part; the join it replaced read 105 ms for three
-- years' moves at 50 M observations, the table 18 ms: BENCHMARKS.md §24).
CREATE OR REPLACE MACRO price_moves_since(since) AS TABLE
SELECT c.day AS changed_on, c.previous_day, c.provider, c.offering, c.region, c.pricing,
       c.term_months, c.gpu_model, c.gpu_count,
       round(c.old_price_usd_per_hour / c.gpu_count, 4) AS old_usd_per_gpu_hour,
       round(c.new_price_usd_per_hour / c.gpu_count, 4) AS new_usd_per_gpu_hour,
       c.pct_change, c.old_price_usd_per_hour, c.new_price_usd_per_hour, c.source
FROM daily_move c
WHERE c.day >= since
  AND excluded_because(c.gpu_model, c.gpu_only, c.gpu_count, c.pricing, [c.pricing], NULL,
                       false) IS NULL;

CREATE OR REPLACE VIEW price_move AS SELECT * FROM price_moves_since(DATE '-infinity');

-- THE CHEAPEST PER GPU PER DAY: the cheapest comparable offer (default pricing set) of each
-- GPU model on each observed day, as prices stood at its end, with the offer's provenance:
-- the first of the day's segment rows (daily_cheapest_segment), ties in warehouse.semantic
-- OFFER_ORDER. Today's row is as of the last append; `gpuprices history` asks live instead.
CREATE OR REPLACE VIEW daily_cheapest AS
SELECT * EXCLUDE (segment, offers), sum(offers) OVER (PARTITION BY day, gpu_model) AS offers
FROM daily_cheapest_segment
QUALIFY row_number() OVER (PARTITION BY day, gpu_model
                           ORDER BY price_usd_per_gpu_hour, provider, offering, region,
                                    pricing) = 1;

-- Where a direct source and an aggregator disagree by more than 10 % on a provider's GPU price.
CREATE OR REPLACE VIEW source_disagreement AS
WITH cheapest AS (
    SELECT provider, gpu_model, pricing, aggregator, min(price_usd_per_gpu_hour) AS price
    FROM latest_price_all_sources
    WHERE gpu_model <> 'unknown' AND NOT gpu_only
    GROUP BY ALL
)
SELECT d.provider, d.gpu_model, d.pricing, d.price AS direct_usd_per_gpu_hour,
       a.price AS aggregator_usd_per_gpu_hour,
       round(100 * (a.price - d.price) / d.price, 1) AS pct_difference
FROM cheapest d JOIN cheapest a
  ON a.provider = d.provider AND a.gpu_model = d.gpu_model AND a.pricing = d.pricing
WHERE NOT d.aggregator AND a.aggregator AND abs(a.price - d.price) > 0.10 * d.price;

-- Provider GPU names the catalog could not place, in each source's last parse: the screens
-- quarantine such rows (schemas/screens.py), so they are read from quarantine.
CREATE OR REPLACE VIEW unknown_gpu AS
WITH last_parse AS (
    SELECT source, arg_max(run_id, finished_at) AS run_id
    FROM scrape_run WHERE rows_parsed > 0 GROUP BY source
)
SELECT q.source, q.provider, q.gpu_name, count(*) AS rows
FROM quarantine q JOIN last_parse USING (source, run_id)
WHERE q.gpu_model = 'unknown'
GROUP BY ALL;

-- What each view answers (CREATE OR REPLACE drops a view's comment: set again on every open).
COMMENT ON VIEW capture_seen IS 'Every stored capture per source, from the run record: when first stored, rows, last seen.';
COMMENT ON VIEW latest_capture IS 'The capture each source''s prices currently come from (the one its latest confirming run saw).';
COMMENT ON VIEW latest_price IS 'THE current price of every offering now (current_price_at(now())): one source per provider x GPU x pricing, with stale (not seen within 48 h) and carried_days.';
COMMENT ON VIEW latest_price_all_sources IS 'Every source''s prices in force now, aggregators included, no precedence (cross-checks).';
COMMENT ON VIEW source_status IS 'Per source: last run, last success, rows, what the last parse skipped and the screens held, and whether its prices are stale now.';
COMMENT ON VIEW price_move IS 'The price moves that count: a move of the source that spoke for the offering that day, of a whole, known-GPU offering; per hour and per GPU-hour.';
COMMENT ON VIEW daily_cheapest IS 'THE cheapest comparable offer per GPU model and observed day (default pricing set), with its provenance.';
COMMENT ON VIEW source_disagreement IS 'Where a direct source and an aggregator disagree by more than 10 % on a provider''s GPU price.';
COMMENT ON VIEW unknown_gpu IS 'Provider GPU names the catalog could not place, in each source''s last parse (quarantined rows).';
