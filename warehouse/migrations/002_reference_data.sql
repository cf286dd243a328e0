-- Schema version 2: static reference data (not price observations), re-synced on every
-- writable open from schemas/plans.csv and schemas/gpu_ownership.csv.

-- Plans sell an allowance, not hours (Colab compute units, Kaggle weekly quota, HF PRO).
-- One row per plan x GPU type, because the burn rate differs per GPU.
CREATE TABLE plan (
    provider                VARCHAR NOT NULL,
    plan                    VARCHAR NOT NULL,
    usd_per_month           DOUBLE NOT NULL,
    compute_units_per_month DOUBLE,
    gpu_model               VARCHAR,          -- canonical catalog name, NULL if none named
    units_per_gpu_hour      DOUBLE,           -- compute units burned per hour on this GPU
    gpu_hours_per_week      DOUBLE,           -- weekly GPU quota (Kaggle)
    session_limit_h         DOUBLE,
    as_of                   DATE NOT NULL,
    source_url              VARCHAR NOT NULL,
    notes                   VARCHAR,
    kind                    VARCHAR NOT NULL  -- 'static': a dated file in the repo, not scraped
);

-- Buying a card, for rent-vs-buy: purchase price and board power.
CREATE TABLE gpu_ownership (
    gpu_model    VARCHAR PRIMARY KEY,
    purchase_usd DOUBLE NOT NULL,
    power_watts  DOUBLE NOT NULL,
    as_of        DATE NOT NULL,
    source_url   VARCHAR NOT NULL,
    notes        VARCHAR,
    kind         VARCHAR NOT NULL
);
