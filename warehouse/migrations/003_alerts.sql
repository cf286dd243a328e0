-- Schema version 3: alerts fired, so each event is sent once and not again every night.

CREATE TABLE alert_event (
    rule       VARCHAR NOT NULL,      -- rule name from the alerts file
    event_key  VARCHAR NOT NULL,      -- what makes this event new (offer + price, change, ...)
    kind       VARCHAR NOT NULL,      -- cheapest_below | price_drop | source_stale
    fired_at   TIMESTAMPTZ NOT NULL,
    message    VARCHAR NOT NULL,
    delivered  VARCHAR,               -- where it went: log, apprise (n urls), prefect block
    PRIMARY KEY (rule, event_key)
);
