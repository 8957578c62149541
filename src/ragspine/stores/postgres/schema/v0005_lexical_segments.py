"""BM25 postings packed per term and segment, as the embedded engine keeps them.

Version 3 stored one row per posting, and a search's cost grew with the postings the server
walked (about a microsecond each). Now a lexical index is a set of immutable *segments*, each
the documents of one sensitivity level written by one change (merged in tiers as the embedded
engine merges its segment files): ``lexical_segments`` holds a segment's level, its live
documents and their total length (the BM25 statistics) and the keys of its documents removed
since (tombstones); ``lexical_blocks`` holds, for each term of a segment, its postings as one
``bytea`` of little-endian ``(key int64, tf int32, length int32)`` records, stored uncompressed
so a search reads it as it is; ``lexical_documents`` says which segment holds a key. Deleting
an index's row deletes all of it; blocks of a merged segment are deleted by the merge.

The old postings cannot be converted in SQL: every lexical index is dropped and rebuilt from the
chunk store by its library's next writer (until then, searches build it in memory).
"""

SQL = """
DROP TABLE lexical_postings;
DROP TABLE lexical_levels;
DROP TABLE lexical_documents;
DELETE FROM lexical_indexes;
CREATE TABLE lexical_segments (
    index_id integer NOT NULL REFERENCES lexical_indexes ON DELETE CASCADE,
    segment integer GENERATED ALWAYS AS IDENTITY,
    level smallint NOT NULL, documents integer NOT NULL,
    live integer NOT NULL, live_length bigint NOT NULL,
    dead bytea NOT NULL DEFAULT '\\x',
    PRIMARY KEY (index_id, segment)
);
CREATE TABLE lexical_blocks (
    index_id integer NOT NULL REFERENCES lexical_indexes ON DELETE CASCADE,
    segment integer NOT NULL, term text NOT NULL,
    postings bytea NOT NULL,
    PRIMARY KEY (index_id, term, segment)
);
CREATE INDEX lexical_blocks_by_segment ON lexical_blocks (index_id, segment);
ALTER TABLE lexical_blocks ALTER COLUMN postings SET STORAGE EXTERNAL;
CREATE TABLE lexical_documents (
    index_id integer NOT NULL REFERENCES lexical_indexes ON DELETE CASCADE,
    key bigint NOT NULL, segment integer NOT NULL, length integer NOT NULL,
    PRIMARY KEY (index_id, key)
);
CREATE INDEX lexical_documents_by_segment ON lexical_documents (index_id, segment);
"""
