"""The PostgreSQL backend: every store of a workspace in one database (``postgresql://...``).

Needs the ``postgres`` extra (psycopg 3 and its connection pool); the server needs pgvector for
vector search. The schema is versioned (:mod:`ragspine.stores.postgres.migrate`).
"""
