"""The glossary texts, API keys and ingest jobs (kept in files by a folder workspace)."""

SQL = """
CREATE TABLE glossary_texts (
    name text PRIMARY KEY,
    body text NOT NULL,
    updated_at timestamptz NOT NULL DEFAULT now()
);
CREATE TABLE api_keys (
    key_id text PRIMARY KEY,
    name text NOT NULL,
    digest text NOT NULL UNIQUE,
    clearance text NOT NULL,
    groups text[] NOT NULL,
    admin boolean NOT NULL,
    created_at text NOT NULL,
    revoked_at text,
    position bigint GENERATED ALWAYS AS IDENTITY
);
CREATE UNIQUE INDEX api_keys_live_name ON api_keys (name) WHERE revoked_at IS NULL;
CREATE TABLE ingest_jobs (
    job_id text PRIMARY KEY,
    body jsonb NOT NULL,
    host text NOT NULL,
    position bigint GENERATED ALWAYS AS IDENTITY
);
"""
