"""Facts and their history (the structured channel)."""

SQL = """
CREATE TABLE facts (
    metric text NOT NULL, entity text NOT NULL, period text NOT NULL, channel text NOT NULL,
    value text NOT NULL, unit text NOT NULL, currency text NOT NULL, scale text NOT NULL,
    source_doc_id text NOT NULL, locator text NOT NULL, sensitivity smallint NOT NULL,
    valid_as_of text NOT NULL, ingested_at text NOT NULL,
    PRIMARY KEY (metric, entity, period, channel)
);
CREATE INDEX facts_by_entity ON facts (entity, sensitivity, metric);
CREATE TABLE fact_history (
    id bigint GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
    metric text NOT NULL, entity text NOT NULL, period text NOT NULL, channel text NOT NULL,
    value text NOT NULL, unit text NOT NULL, currency text NOT NULL, scale text NOT NULL,
    source_doc_id text NOT NULL, locator text NOT NULL, sensitivity smallint NOT NULL,
    valid_as_of text NOT NULL, ingested_at text NOT NULL,
    replaced_at text NOT NULL, replaced_by_source_doc_id text NOT NULL,
    replaced_by_locator text NOT NULL
);
CREATE INDEX fact_history_key ON fact_history (metric, entity, period, channel, id);
"""
