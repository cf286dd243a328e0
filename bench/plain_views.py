"""The views as they were before migration 004: every question answered from observation.

`python -m bench.warehouse_scale --before` installs these as TEMP views, which shadow the
summary-backed ones for that connection only, to measure the "before" figures on the same file.
"""

from __future__ import annotations

import duckdb

PLAIN_VIEWS = """
CREATE OR REPLACE TEMP VIEW latest_price_all_sources AS
SELECT o.*, src.aggregator, src.kind AS source_kind, c.last_success_at,
       (c.last_success_at < now() - INTERVAL 48 HOUR) AS stale
FROM observation o
JOIN latest_capture c
  ON o.source = c.source AND o.capture_id = c.capture_id AND o.observed_at = c.observed_at
JOIN source src ON src.source = o.source;

CREATE OR REPLACE TEMP VIEW latest_price AS
WITH current AS (
    SELECT o.*, src.aggregator, src.kind AS source_kind, c.last_success_at
    FROM observation o
    JOIN latest_capture c
      ON o.source = c.source AND o.capture_id = c.capture_id AND o.observed_at = c.observed_at
    JOIN source src ON src.source = o.source
), direct_providers AS (
    SELECT DISTINCT provider FROM current WHERE NOT aggregator
)
SELECT c.*, (c.last_success_at < now() - INTERVAL 48 HOUR) AS stale
FROM current c
WHERE NOT c.aggregator OR c.provider NOT IN (SELECT provider FROM direct_providers);

CREATE OR REPLACE TEMP VIEW daily_price AS
SELECT CAST(observed_at AS DATE) AS day, source, provider, offering, region, pricing, gpu_model,
       gpu_count, arg_max(price_usd_per_hour, observed_at) AS price_usd_per_hour,
       arg_max(price_usd_per_gpu_hour, observed_at) AS price_usd_per_gpu_hour,
       bool_or(gpu_only) AS gpu_only
FROM observation
GROUP BY ALL;

CREATE OR REPLACE TEMP VIEW price_change AS
WITH ordered AS (
    SELECT *, lag(price_usd_per_hour) OVER w AS old_price_usd_per_hour,
              lag(day) OVER w AS old_day
    FROM daily_price
    WINDOW w AS (PARTITION BY source, provider, offering, region, pricing ORDER BY day)
)
SELECT day AS changed_on, old_day AS previous_day, source, provider, offering, region, pricing,
       gpu_model, gpu_count, old_price_usd_per_hour, price_usd_per_hour AS new_price_usd_per_hour,
       round(100 * (price_usd_per_hour - old_price_usd_per_hour) / old_price_usd_per_hour, 2)
           AS pct_change
FROM ordered
WHERE old_price_usd_per_hour IS NOT NULL AND price_usd_per_hour <> old_price_usd_per_hour;

CREATE OR REPLACE TEMP VIEW daily_cheapest AS
SELECT day, gpu_model, pricing, min(price_usd_per_gpu_hour) AS min_usd_per_gpu_hour,
       arg_min(provider, price_usd_per_gpu_hour) AS provider,
       arg_min(offering, price_usd_per_gpu_hour) AS offering,
       count(*) AS offers
FROM daily_price
WHERE NOT gpu_only AND gpu_model <> 'unknown'
GROUP BY ALL;
"""


def install_plain_views(con: duckdb.DuckDBPyConnection) -> None:
    con.execute(PLAIN_VIEWS)
