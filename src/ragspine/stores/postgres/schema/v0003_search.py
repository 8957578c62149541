"""Search: BM25 postings of our own analyzer's terms, chunk vectors (pgvector) and the embedding
cache.

A lexical index is one row of ``lexical_indexes`` per (library, field set) with the generation
of the chunk store it reflects; its postings carry each document's level and length, so a search
at a level reads and counts only what that level may see; the primary key covers every column
a search reads, so searches scan the index only. ``lexical_levels`` holds the number
and total length of the documents of each level (the BM25 statistics, summed at search time).
Vectors have no fixed dimension in the table: each library's HNSW index is a partial expression
index over ``embedding::vector(dim)``, made when the library's vectors are written.
"""

SQL = """
CREATE EXTENSION IF NOT EXISTS vector;
CREATE TABLE lexical_indexes (
    id integer GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
    library text NOT NULL, fields text NOT NULL,
    generation bigint NOT NULL, analyzer jsonb NOT NULL,
    UNIQUE (library, fields)
);
CREATE TABLE lexical_levels (
    index_id integer NOT NULL REFERENCES lexical_indexes ON DELETE CASCADE,
    level smallint NOT NULL, documents bigint NOT NULL, total_length bigint NOT NULL,
    PRIMARY KEY (index_id, level)
);
CREATE TABLE lexical_documents (
    index_id integer NOT NULL REFERENCES lexical_indexes ON DELETE CASCADE,
    key bigint NOT NULL, level smallint NOT NULL, length integer NOT NULL,
    PRIMARY KEY (index_id, key)
);
CREATE TABLE lexical_postings (
    index_id integer NOT NULL REFERENCES lexical_indexes ON DELETE CASCADE,
    term text NOT NULL, key bigint NOT NULL,
    tf integer NOT NULL, level smallint NOT NULL, length integer NOT NULL,
    PRIMARY KEY (index_id, term, key) INCLUDE (tf, level, length)
);
CREATE INDEX lexical_postings_by_key ON lexical_postings (index_id, key);
CREATE TABLE vector_libraries (
    library text PRIMARY KEY,
    model_id text NOT NULL, dim integer NOT NULL, generation bigint NOT NULL
);
CREATE TABLE chunk_vectors (
    library text NOT NULL REFERENCES vector_libraries ON DELETE CASCADE,
    key bigint NOT NULL, level smallint NOT NULL, embedding vector NOT NULL,
    PRIMARY KEY (library, key)
);
CREATE TABLE embedding_cache (
    content_hash text NOT NULL, model_id text NOT NULL, embedding real[] NOT NULL,
    PRIMARY KEY (content_hash, model_id)
);
"""
