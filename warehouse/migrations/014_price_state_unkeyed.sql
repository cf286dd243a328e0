-- Schema version 14: price_state without its primary key. The table is derived (each
-- offering's last daily price, summaries._changes_for_new_day) and every write to it is a
-- DELETE then INSERT of one source's offerings inside the append's transaction, which keeps one
-- row per offering as a DuckLake warehouse does without keys (warehouse.dialect). Keeping the
-- key's index up to date made that DELETE most of a large source's landing: 1.5 s of Azure's
-- 4.5 s for 35k offerings (bench/ingest.py, following night). The rows are copied as they are:
-- derived tables: unchanged
CREATE TEMP TABLE _price_state_rows AS SELECT * FROM price_state;
DROP TABLE price_state;
CREATE TABLE price_state (
    source             VARCHAR NOT NULL,
    provider           VARCHAR NOT NULL,
    offering           VARCHAR NOT NULL,
    region             VARCHAR NOT NULL,
    pricing            VARCHAR NOT NULL,
    term_months        DOUBLE NOT NULL,
    last_day           DATE NOT NULL,
    gpu_model          VARCHAR NOT NULL,
    gpu_count          DOUBLE NOT NULL,
    gpu_only           BOOLEAN NOT NULL,
    price_usd_per_hour DOUBLE NOT NULL
);
INSERT INTO price_state SELECT * FROM _price_state_rows;
DROP TABLE _price_state_rows;
COMMENT ON TABLE price_state IS 'Derived: the last daily price of every offering, so a new night''s moves need no history scan.';
