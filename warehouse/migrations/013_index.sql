-- Schema version 13: the GPU price index (warehouse/index/, docs/index-methodology.md).
-- Records that are written once and never updated or deleted by any code path:
--   index_method    each methodology version's parameters (the JSON the digest is taken over)
--   index_day       one row per fixed day: when the day was fixed (as_of), with which inputs
--                   (digest), code and parameters
--   index_input     the raw captures standing at the day's as_of: what `reproduce` re-parses
--   index_fixing    one fixing per GPU model x kind (on_demand, spot, reserved + term) x scope
--                   (segment, geography), with its content digest; value NULL = "no index"
--   index_vote      every vote of a fixing (flagged ones too): provider, value, sd, weight,
--                   flags, the captures it was read from
--   index_revision  what a later backfill or reparse would make of a published fixing: written
--                   beside it, the fixing itself is never rewritten
--   index_check     when each published day's inputs were last compared with the warehouse
-- screen_market: the market context the price band was narrowed to when a capture landed
-- (warehouse.ingest), so a capture can be screened again exactly as it was.

CREATE TABLE IF NOT EXISTS index_method (
    params_digest  VARCHAR PRIMARY KEY,
    method_version VARCHAR NOT NULL,
    params_json    VARCHAR NOT NULL,
    first_day      DATE NOT NULL,
    created_at     TIMESTAMPTZ NOT NULL
);

CREATE TABLE IF NOT EXISTS index_day (
    day              DATE PRIMARY KEY,
    as_of            TIMESTAMPTZ NOT NULL,   -- the fixing time: prices observed up to here
    method_version   VARCHAR NOT NULL,
    params_digest    VARCHAR NOT NULL,
    inputs_digest    VARCHAR NOT NULL,       -- sha256 over index_input rows of the day
    runs_fingerprint VARCHAR NOT NULL,       -- of scrape_run up to as_of (revision trigger)
    code_version     VARCHAR NOT NULL,
    fixings          INTEGER NOT NULL,
    day_digest       VARCHAR NOT NULL,       -- sha256 over the day's fixing digests
    published_at     TIMESTAMPTZ NOT NULL
);

CREATE TABLE IF NOT EXISTS index_input (
    day           DATE NOT NULL,
    source        VARCHAR NOT NULL,
    capture_id    VARCHAR NOT NULL,
    observed_at   TIMESTAMPTZ NOT NULL,      -- the time its observations are stored under
    seen_at       TIMESTAMPTZ NOT NULL,      -- its last confirming run at or before as_of
    providers     VARCHAR[],                 -- an aggregator's parts in force; NULL = whole
    rows          INTEGER NOT NULL,
    rows_hash     VARCHAR NOT NULL,
    parser_digest VARCHAR,
    PRIMARY KEY (day, source, capture_id, observed_at)
);

CREATE TABLE IF NOT EXISTS index_fixing (
    fixing_id       VARCHAR PRIMARY KEY,
    day             DATE NOT NULL,
    gpu_model       VARCHAR NOT NULL,
    kind            VARCHAR NOT NULL,        -- on_demand | spot | reserved
    term_months     INTEGER NOT NULL,        -- reserved: 1, 3, 6, 12, 36; else 0
    segment         VARCHAR NOT NULL,        -- 'all' or a provider segment
    geo             VARCHAR NOT NULL,        -- 'all' or a geography
    value           DOUBLE,                  -- $/GPU-hour; NULL: no index
    band_low        DOUBLE,
    band_high       DOUBLE,
    panel           INTEGER NOT NULL,        -- passing votes (fresh + carried)
    fresh           INTEGER NOT NULL,
    carried         INTEGER NOT NULL,
    flagged         INTEGER NOT NULL,        -- votes kept out by a screen
    withheld_reason VARCHAR,
    method_version  VARCHAR NOT NULL,
    params_digest   VARCHAR NOT NULL,
    as_of           TIMESTAMPTZ NOT NULL,
    content_digest  VARCHAR NOT NULL,
    published_at    TIMESTAMPTZ NOT NULL
);
CREATE INDEX IF NOT EXISTS index_fixing_series ON index_fixing (gpu_model, kind, term_months);

CREATE TABLE IF NOT EXISTS index_vote (
    fixing_id     VARCHAR NOT NULL,
    day           DATE NOT NULL,
    gpu_model     VARCHAR NOT NULL,
    kind          VARCHAR NOT NULL,
    term_months   INTEGER NOT NULL,
    segment       VARCHAR NOT NULL,
    geo           VARCHAR NOT NULL,
    provider      VARCHAR NOT NULL,
    provider_segment VARCHAR NOT NULL,
    value         DOUBLE NOT NULL,           -- the provider's print, $/GPU-hour
    native_value  DOUBLE NOT NULL,           -- the print in its quoted currency
    currency      VARCHAR NOT NULL,
    sd            DOUBLE NOT NULL,           -- the vote spread (p - sd, p, p + sd)
    weight        DOUBLE NOT NULL,           -- 0 for a vote kept out
    passing       BOOLEAN NOT NULL,
    fresh         BOOLEAN NOT NULL,          -- printed that day (else carried forward)
    carried_from  DATE,
    flags         VARCHAR[] NOT NULL,
    note          VARCHAR,
    offers        INTEGER NOT NULL,
    sources       VARCHAR[] NOT NULL,
    capture_ids   VARCHAR[] NOT NULL,
    PRIMARY KEY (fixing_id, provider)
);
CREATE INDEX IF NOT EXISTS index_vote_day ON index_vote (day);

CREATE TABLE IF NOT EXISTS index_revision (
    fixing_id       VARCHAR NOT NULL,
    revision        INTEGER NOT NULL,
    day             DATE NOT NULL,
    value           DOUBLE,
    band_low        DOUBLE,
    band_high       DOUBLE,
    panel           INTEGER NOT NULL,
    withheld_reason VARCHAR,
    content_digest  VARCHAR NOT NULL,
    reason          VARCHAR NOT NULL,        -- which inputs changed
    votes_json      VARCHAR NOT NULL,
    created_at      TIMESTAMPTZ NOT NULL,
    PRIMARY KEY (fixing_id, revision)
);

CREATE TABLE IF NOT EXISTS index_check (
    day              DATE NOT NULL,
    checked_at       TIMESTAMPTZ NOT NULL,
    runs_fingerprint VARCHAR NOT NULL,
    inputs_digest    VARCHAR NOT NULL,
    revisions        INTEGER NOT NULL
);

CREATE TABLE IF NOT EXISTS screen_market (
    run_id                  VARCHAR NOT NULL,
    source                  VARCHAR NOT NULL,
    capture_id              VARCHAR NOT NULL,
    gpu_model               VARCHAR NOT NULL,
    providers               INTEGER NOT NULL,
    median_usd_per_gpu_hour DOUBLE NOT NULL
);
