-- Schema version 1: raw captures -> scrape runs -> observations (+ quarantine), GPU catalog.

CREATE TABLE source (
    source      VARCHAR PRIMARY KEY,       -- name on the command line (vastai, modal, skypilot ...)
    provider    VARCHAR NOT NULL,          -- whose prices; '*' for aggregators (named per row)
    kind        VARCHAR NOT NULL,          -- api | page | catalog | static
    url         VARCHAR NOT NULL,
    aggregator  BOOLEAN NOT NULL           -- covers other providers' prices (fallback, cross-check)
);

CREATE TABLE refresh_run (
    run_id      VARCHAR PRIMARY KEY,
    flow        VARCHAR NOT NULL,          -- refresh | backfill | reparse
    started_at  TIMESTAMPTZ NOT NULL,
    finished_at TIMESTAMPTZ,
    offline     BOOLEAN NOT NULL,
    status      VARCHAR,                   -- running | completed | partial | failed
    note        VARCHAR
);

-- One row per payload ever seen. The payload itself lives in the archive as <capture_id>.gz.
CREATE TABLE raw_capture (
    capture_id   VARCHAR PRIMARY KEY,      -- sha256 of the payload
    source       VARCHAR NOT NULL,
    url          VARCHAR NOT NULL,
    fetched_at   TIMESTAMPTZ NOT NULL,
    content_type VARCHAR,
    size_bytes   BIGINT NOT NULL,
    archive_path VARCHAR NOT NULL          -- relative to the archive root
);

-- One row per source per run: what happened and why.
CREATE TABLE scrape_run (
    run_id           VARCHAR NOT NULL,
    source           VARCHAR NOT NULL,
    started_at       TIMESTAMPTZ NOT NULL,
    finished_at      TIMESTAMPTZ NOT NULL,
    observed_at      TIMESTAMPTZ,          -- time the capture describes (fetch or snapshot time)
    status           VARCHAR NOT NULL,     -- success | unchanged | failed | rejected | skipped
    attempts         INTEGER NOT NULL,
    capture_id       VARCHAR,
    rows_parsed      INTEGER NOT NULL,
    rows_stored      INTEGER NOT NULL,
    rows_quarantined INTEGER NOT NULL,
    unknown_gpus     VARCHAR[],            -- provider GPU names the catalog could not place
    error            VARCHAR,
    note             VARCHAR,
    PRIMARY KEY (run_id, source)
);

CREATE TABLE observation (
    observed_at            TIMESTAMPTZ NOT NULL,
    run_id                 VARCHAR NOT NULL,
    capture_id             VARCHAR NOT NULL,
    source                 VARCHAR NOT NULL,
    source_url             VARCHAR NOT NULL,
    provider               VARCHAR NOT NULL,
    offering               VARCHAR NOT NULL,
    gpu_name               VARCHAR,
    gpu_count              DOUBLE NOT NULL,
    gpu_memory_gb          DOUBLE,
    vcpus                  DOUBLE,
    ram_gb                 DOUBLE,
    region                 VARCHAR NOT NULL,
    pricing                VARCHAR NOT NULL,
    price_usd_per_hour     DOUBLE NOT NULL,
    billing_increment_s    BIGINT,
    available              BOOLEAN,
    gpu_only               BOOLEAN NOT NULL,
    monthly_fee_usd        DOUBLE,
    gpu_model              VARCHAR NOT NULL,
    price_usd_per_gpu_hour DOUBLE NOT NULL
);

-- Rows that failed a check: kept with the check's name, never shown as prices.
CREATE TABLE quarantine (
    observed_at            TIMESTAMPTZ,
    run_id                 VARCHAR,
    capture_id             VARCHAR,
    source                 VARCHAR,
    source_url             VARCHAR,
    provider               VARCHAR,
    offering               VARCHAR,
    gpu_name               VARCHAR,
    gpu_count              DOUBLE,
    gpu_memory_gb          DOUBLE,
    vcpus                  DOUBLE,
    ram_gb                 DOUBLE,
    region                 VARCHAR,
    pricing                VARCHAR,
    price_usd_per_hour     DOUBLE,
    billing_increment_s    BIGINT,
    available              BOOLEAN,
    gpu_only               BOOLEAN,
    monthly_fee_usd        DOUBLE,
    gpu_model              VARCHAR,
    price_usd_per_gpu_hour DOUBLE,
    failed_check           VARCHAR NOT NULL
);

CREATE TABLE gpu_catalog (
    gpu_model             VARCHAR PRIMARY KEY,
    family                VARCHAR NOT NULL,
    vendor                VARCHAR NOT NULL,
    architecture          VARCHAR,
    memory_gb             DOUBLE NOT NULL,
    variant               VARCHAR,
    gpu_class             VARCHAR NOT NULL,   -- consumer | workstation | datacenter | accelerator
    bf16_tflops           DOUBLE,
    memory_bandwidth_gbps DOUBLE,
    launch_year           INTEGER
);
