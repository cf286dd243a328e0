-- Schema version 11: every table says what it holds (COMMENT ON TABLE; the views get theirs in
-- views.sql, on every open) and the columns a reader of the history needs are described
-- (COMMENT ON COLUMN; docs/export.md shows the same). The two indexes migration 010 dropped to
-- rename columns are made again.
CREATE INDEX IF NOT EXISTS market_price_model ON market_price (gpu_model);
CREATE INDEX IF NOT EXISTS market_provider_price_model ON market_provider_price (gpu_model);

-- ---- What each table holds
COMMENT ON TABLE schema_version IS 'Migrations applied to this file (warehouse/migrations/NNN_*.sql), one row each.';
COMMENT ON TABLE source IS 'Every registered source (scrapers/registry.py): whose prices, how they are read, from where.';
COMMENT ON TABLE refresh_run IS 'One row per refresh, backfill or reparse run: when, how it ended.';
COMMENT ON TABLE raw_capture IS 'Every payload ever fetched (page, API answer, catalog file), by sha256; the bytes are in the raw archive at archive_path.';
COMMENT ON TABLE scrape_run IS 'One row per source per run: status, attempts, the capture it read, rows parsed/stored/quarantined, the error.';
COMMENT ON TABLE observation IS 'Every stored price: one offering x pricing x region as one capture showed it, with full provenance (source, source_url, capture_id, run_id, observed_at). Append-only; reparse replaces a capture''s rows in place.';
COMMENT ON TABLE quarantine IS 'Rows a check or screen refused (failed_check says which): kept, never shown as prices. Same columns as observation.';
COMMENT ON TABLE gpu_catalog IS 'The GPU catalog (schemas/gpu_catalog.csv), synced on every writable open.';
COMMENT ON TABLE plan IS 'Subscription plans that sell an allowance, not hours (schemas/plans.csv): Colab, Kaggle, HF PRO.';
COMMENT ON TABLE gpu_ownership IS 'Buying a card, for rent-vs-buy (schemas/gpu_ownership.csv): purchase price, board power.';
COMMENT ON TABLE alert_event IS 'Alert events already sent (one per rule and event key), so each is sent once.';
COMMENT ON TABLE latest_observation IS 'Derived: the observations of each source''s current capture (same columns as observation), kept up in every append.';
COMMENT ON TABLE daily_price IS 'Derived: the last price of each offering on each UTC day it was observed (every source), kept up in every append.';
COMMENT ON TABLE price_change IS 'Derived: every move of an offering''s price between consecutive observed days, per source (the view price_move keeps the moves that count).';
COMMENT ON TABLE price_state IS 'Derived: the last daily price of every offering, so a new night''s moves need no history scan.';
COMMENT ON TABLE daily_cheapest_segment IS 'Derived: the cheapest comparable offer per GPU model, provider segment and observed day (default pricing set), as prices stood at the day''s end, with its provenance.';
COMMENT ON TABLE daily_source IS 'Derived: which source spoke for each provider x GPU model x pricing at the end of each observed day (source precedence).';
COMMENT ON TABLE market_price IS 'Derived: the market price per GPU model, segment and day: median across providers of each provider''s median over comparable offers (docs/market.md); NULL market_usd_per_gpu_hour with withheld_reason when not published.';
COMMENT ON TABLE market_provider_price IS 'Derived: stage one of the market price: each provider''s median over its comparable offers per GPU model and day.';
COMMENT ON TABLE provider_capture IS 'For aggregator sources: which providers each stored capture priced, and how many rows.';
COMMENT ON TABLE fx_rate IS 'ECB euro reference rates by day (units of currency per euro), with the capture they were read from; never revised.';

-- ---- The columns a reader of the history needs (docs/export.md shows the same)
COMMENT ON COLUMN source.source IS 'Source name (the command line''s): vastai, lambda-page, skypilot-catalog ...';
COMMENT ON COLUMN source.provider IS 'Whose prices; * for aggregators (each row names its provider).';
COMMENT ON COLUMN source.kind IS 'api, page, catalog or static: how the prices are read (source precedence: api first).';
COMMENT ON COLUMN source.url IS 'Where the source is fetched from.';
COMMENT ON COLUMN source.aggregator IS 'True when it carries other providers'' prices (a fallback and a cross-check).';

COMMENT ON COLUMN refresh_run.run_id IS 'The run (scrape_run.run_id and observation.run_id point here).';
COMMENT ON COLUMN refresh_run.flow IS 'refresh, backfill or reparse.';
COMMENT ON COLUMN refresh_run.started_at IS 'When the run started (UTC).';
COMMENT ON COLUMN refresh_run.finished_at IS 'When it finished (UTC); NULL while running.';
COMMENT ON COLUMN refresh_run.offline IS 'True when it replayed bundled example snapshots (the demo).';
COMMENT ON COLUMN refresh_run.status IS 'running, completed, partial, failed or abandoned.';
COMMENT ON COLUMN refresh_run.note IS 'What else the run said.';

COMMENT ON COLUMN raw_capture.capture_id IS 'sha256 of the payload: the provenance key of every price read from it.';
COMMENT ON COLUMN raw_capture.source IS 'The source that fetched it.';
COMMENT ON COLUMN raw_capture.url IS 'The URL fetched.';
COMMENT ON COLUMN raw_capture.fetched_at IS 'When it was fetched (UTC; for a backfill, the archive''s timestamp).';
COMMENT ON COLUMN raw_capture.content_type IS 'The Content-Type it came with.';
COMMENT ON COLUMN raw_capture.size_bytes IS 'Payload size, bytes.';
COMMENT ON COLUMN raw_capture.archive_path IS 'Where the gzipped payload is, relative to the raw archive root.';

COMMENT ON COLUMN scrape_run.run_id IS 'The run (refresh_run).';
COMMENT ON COLUMN scrape_run.source IS 'The source.';
COMMENT ON COLUMN scrape_run.started_at IS 'When this source''s fetch started (UTC).';
COMMENT ON COLUMN scrape_run.finished_at IS 'When it finished (UTC).';
COMMENT ON COLUMN scrape_run.observed_at IS 'The time the capture describes: fetch time, or the snapshot''s date for a backfill.';
COMMENT ON COLUMN scrape_run.status IS 'success, unchanged (same capture as before: its prices confirmed), failed, rejected, skipped.';
COMMENT ON COLUMN scrape_run.attempts IS 'HTTP attempts made.';
COMMENT ON COLUMN scrape_run.capture_id IS 'The capture read (raw_capture).';
COMMENT ON COLUMN scrape_run.rows_parsed IS 'Rows the parser read.';
COMMENT ON COLUMN scrape_run.rows_stored IS 'Rows stored as observations.';
COMMENT ON COLUMN scrape_run.rows_quarantined IS 'Rows the checks and screens held (quarantine).';
COMMENT ON COLUMN scrape_run.unknown_gpus IS 'Provider GPU names the catalog could not place.';
COMMENT ON COLUMN scrape_run.error IS 'Why it failed (one line, secrets redacted).';
COMMENT ON COLUMN scrape_run.note IS 'What the parse skipped and the screens flagged, by reason.';

COMMENT ON COLUMN observation.observed_at IS 'The moment the price describes (UTC): fetch time, or the archived snapshot''s time.';
COMMENT ON COLUMN observation.run_id IS 'Provenance: the run that stored it (refresh_run, scrape_run).';
COMMENT ON COLUMN observation.capture_id IS 'Provenance: the payload it was read from (raw_capture; the bytes are archived).';
COMMENT ON COLUMN observation.source IS 'Provenance: the source that read it (source).';
COMMENT ON COLUMN observation.source_url IS 'Provenance: the URL the payload came from.';
COMMENT ON COLUMN observation.provider IS 'Whose price it is (for an aggregator source, the provider it names).';
COMMENT ON COLUMN observation.offering IS 'The provider''s name for what is rented (instance type, plan, machine).';
COMMENT ON COLUMN observation.gpu_name IS 'The GPU as the provider names it.';
COMMENT ON COLUMN observation.gpu_count IS 'GPUs in the offering (below 1: a slice of a GPU).';
COMMENT ON COLUMN observation.gpu_memory_gb IS 'Memory per GPU, GB.';
COMMENT ON COLUMN observation.vcpus IS 'vCPUs of the offering.';
COMMENT ON COLUMN observation.ram_gb IS 'Host memory of the offering, GB.';
COMMENT ON COLUMN observation.region IS 'Region as the source gives it; global when it names none.';
COMMENT ON COLUMN observation.pricing IS 'Pricing kind (contract.PRICING): on_demand, spot, interruptible, community, community_spot, reserved, serverless, inference, flex, dynamic.';
COMMENT ON COLUMN observation.price_usd_per_hour IS 'Price of the whole offering per hour, USD (converted at the day''s ECB rate when quoted in another currency).';
COMMENT ON COLUMN observation.billing_increment_s IS 'Billing granularity, seconds.';
COMMENT ON COLUMN observation.available IS 'Rentable when seen (NULL: the source does not say).';
COMMENT ON COLUMN observation.gpu_only IS 'True when the price covers the GPUs only, the host billed apart (e.g. GCP GPU SKUs).';
COMMENT ON COLUMN observation.monthly_fee_usd IS 'A fixed monthly fee on top of the hourly price, USD.';
COMMENT ON COLUMN observation.gpu_model IS 'The catalog model (gpu_catalog); unknown rows are quarantined.';
COMMENT ON COLUMN observation.price_usd_per_gpu_hour IS 'price_usd_per_hour / gpu_count: the price of one GPU-hour, USD.';
COMMENT ON COLUMN observation.term_months IS 'Commitment length of a reserved price, months.';
COMMENT ON COLUMN observation.effective_from IS 'An announced price: the day it takes effect (NULL: in force when seen).';
COMMENT ON COLUMN observation.currency IS 'ISO 4217 code of the price as quoted (NULL: USD).';
COMMENT ON COLUMN observation.price_native_per_hour IS 'The whole-offering price in currency, when that is not USD.';
COMMENT ON COLUMN observation.gpus_available IS 'GPUs free to rent when seen, where the source says.';
COMMENT ON COLUMN observation.screen_flag IS 'Why a stored row is kept out of the market price (an unconfirmed jump); NULL: nothing.';
COMMENT ON COLUMN observation.fx_rate IS 'USD per unit of currency the price was converted at (NULL for USD prices).';
COMMENT ON COLUMN observation.fx_date IS 'The ECB reference day of fx_rate.';

COMMENT ON COLUMN price_change.changed_on IS 'The observed day the new price was first seen.';
COMMENT ON COLUMN price_change.previous_day IS 'The observed day before it, with the old price.';
COMMENT ON COLUMN price_change.source IS 'The source that saw the move.';
COMMENT ON COLUMN price_change.provider IS 'The provider.';
COMMENT ON COLUMN price_change.offering IS 'The offering.';
COMMENT ON COLUMN price_change.region IS 'The region.';
COMMENT ON COLUMN price_change.pricing IS 'The pricing kind.';
COMMENT ON COLUMN price_change.term_months IS 'Reserved term, months (0: none).';
COMMENT ON COLUMN price_change.gpu_model IS 'The catalog model.';
COMMENT ON COLUMN price_change.gpu_count IS 'GPUs in the offering.';
COMMENT ON COLUMN price_change.gpu_only IS 'True for a GPU-only price.';
COMMENT ON COLUMN price_change.old_price_usd_per_hour IS 'Whole-offering price before, USD per hour.';
COMMENT ON COLUMN price_change.new_price_usd_per_hour IS 'Whole-offering price after, USD per hour.';
COMMENT ON COLUMN price_change.pct_change IS '(new / old - 1) x 100.';

COMMENT ON COLUMN daily_cheapest_segment.day IS 'The observed UTC day (prices as they stood at its end).';
COMMENT ON COLUMN daily_cheapest_segment.gpu_model IS 'The catalog model.';
COMMENT ON COLUMN daily_cheapest_segment.segment IS 'Provider segment (schemas/provider_segments.csv).';
COMMENT ON COLUMN daily_cheapest_segment.price_usd_per_gpu_hour IS 'The cheapest comparable offer''s price per GPU-hour, USD.';
COMMENT ON COLUMN daily_cheapest_segment.provider IS 'Its provider.';
COMMENT ON COLUMN daily_cheapest_segment.offering IS 'Its offering.';
COMMENT ON COLUMN daily_cheapest_segment.region IS 'Its region.';
COMMENT ON COLUMN daily_cheapest_segment.pricing IS 'Its pricing kind.';
COMMENT ON COLUMN daily_cheapest_segment.gpu_count IS 'GPUs in the offering.';
COMMENT ON COLUMN daily_cheapest_segment.price_usd_per_hour IS 'The whole offering''s price per hour, USD.';
COMMENT ON COLUMN daily_cheapest_segment.source IS 'Provenance: the source.';
COMMENT ON COLUMN daily_cheapest_segment.capture_id IS 'Provenance: the capture (raw_capture).';
COMMENT ON COLUMN daily_cheapest_segment.observed_at IS 'Provenance: the moment the price describes.';
COMMENT ON COLUMN daily_cheapest_segment.offers IS 'Comparable offers of the model in the segment that day.';

COMMENT ON COLUMN market_price.day IS 'The UTC day (prices as they stood at its end, or at the last append for today).';
COMMENT ON COLUMN market_price.gpu_model IS 'The catalog model.';
COMMENT ON COLUMN market_price.segment IS 'all, or a provider segment: hyperscaler, neocloud, marketplace, serverless, unclassified.';
COMMENT ON COLUMN market_price.market_usd_per_gpu_hour IS 'THE market price per GPU-hour, USD; NULL when withheld.';
COMMENT ON COLUMN market_price.median_usd_per_gpu_hour IS 'The cross-provider median, withheld or not.';
COMMENT ON COLUMN market_price.min_usd_per_gpu_hour IS 'The lowest counted offer.';
COMMENT ON COLUMN market_price.p25_usd_per_gpu_hour IS '25th percentile of the provider medians.';
COMMENT ON COLUMN market_price.p75_usd_per_gpu_hour IS '75th percentile of the provider medians.';
COMMENT ON COLUMN market_price.max_usd_per_gpu_hour IS 'The highest counted offer.';
COMMENT ON COLUMN market_price.providers IS 'Providers counted.';
COMMENT ON COLUMN market_price.offers IS 'Comparable offers counted.';
COMMENT ON COLUMN market_price.dispersion IS '(p75 - p25) / median of the provider medians.';
COMMENT ON COLUMN market_price.carried_providers IS 'Providers whose prices are carried forward from an earlier day.';
COMMENT ON COLUMN market_price.withheld_reason IS 'Why the value is not published (NULL: published).';
COMMENT ON COLUMN market_price.pricing IS 'The pricing kinds that counted.';
COMMENT ON COLUMN market_price.computed_at IS 'When the value was computed (UTC).';

COMMENT ON COLUMN market_provider_price.day IS 'The UTC day.';
COMMENT ON COLUMN market_provider_price.gpu_model IS 'The catalog model.';
COMMENT ON COLUMN market_provider_price.provider IS 'The provider.';
COMMENT ON COLUMN market_provider_price.segment IS 'Its segment.';
COMMENT ON COLUMN market_provider_price.median_usd_per_gpu_hour IS 'The provider''s median over its comparable offers, USD per GPU-hour.';
COMMENT ON COLUMN market_provider_price.offers IS 'Comparable offers counted.';
COMMENT ON COLUMN market_provider_price.offerings IS 'Distinct offerings counted.';
COMMENT ON COLUMN market_provider_price.carried_days IS '0: prices seen that day; 1, 2: carried forward.';
COMMENT ON COLUMN market_provider_price.sources IS 'The sources its prices came from.';
COMMENT ON COLUMN market_provider_price.min_usd_per_gpu_hour IS 'Its lowest counted offer.';
COMMENT ON COLUMN market_provider_price.max_usd_per_gpu_hour IS 'Its highest counted offer.';

COMMENT ON COLUMN fx_rate.rate_date IS 'The ECB reference day.';
COMMENT ON COLUMN fx_rate.currency IS 'ISO 4217 code.';
COMMENT ON COLUMN fx_rate.per_eur IS 'Units of currency one euro buys.';
COMMENT ON COLUMN fx_rate.source IS 'The source it was read from (ecb).';
COMMENT ON COLUMN fx_rate.capture_id IS 'Provenance: the capture (raw_capture).';
