"""In-place upgrades of the chunk store schema, so older workspaces stay openable.

v1 -> v2: chunks carry their own ``title`` (the document title as a reader of the chunk's level
may see it) and documents keep their ``section_levels``. A v1 store never recorded section
levels, so the upgrade is conservative: a document whose chunks have different levels gets its
file's stem as the title of every chunk (its title may name a hidden section), every document's
fingerprint is cleared so the next ingest of the same files rewrites it under the exact rules,
every library's generation moves on (its indexes are rebuilt from the new rows) and the routing
term counts are recounted.
"""

from __future__ import annotations

import sqlite3
from pathlib import PurePath

from ragspine.errors import StoreError
from ragspine.stores.sqlite import profiles
from ragspine.stores.sqlite.connect import write_transaction


def upgrade(db: sqlite3.Connection, found: int, current: int, where: str) -> None:
    """Bring a store at schema ``found`` up to ``current`` in one transaction."""
    if found > current or found < 1:
        raise StoreError(
            f"{where} holds chunk store schema v{found}, this version reads v{current}: "
            "open it with the RAGSpine version that wrote it, or re-ingest into a new workspace"
        )
    with write_transaction(db):
        row = db.execute("SELECT value FROM narrative_meta WHERE key = 'schema_version'").fetchone()
        found = int(row[0])  # another process may have upgraded it while this one waited
        if found < 2:
            _v1_to_v2(db)
        db.execute(
            "UPDATE narrative_meta SET value = ? WHERE key = 'schema_version'", (str(current),)
        )


def _columns(db: sqlite3.Connection, table: str) -> set[str]:
    return {row[1] for row in db.execute(f"PRAGMA table_info({table})")}


def _v1_to_v2(db: sqlite3.Connection) -> None:
    if "section_levels" not in _columns(db, "narrative_documents"):
        db.execute(
            "ALTER TABLE narrative_documents ADD COLUMN section_levels TEXT NOT NULL DEFAULT '[]'"
        )
    if "title" not in _columns(db, "narrative_chunks"):
        db.execute("ALTER TABLE narrative_chunks ADD COLUMN title TEXT NOT NULL DEFAULT ''")
    documents = db.execute(
        "SELECT d.library_id, d.doc_id, d.title, d.source, COUNT(DISTINCT c.sensitivity) "
        "FROM narrative_documents d JOIN narrative_chunks c "
        "ON c.library_id = d.library_id AND c.doc_id = d.doc_id "
        "GROUP BY d.library_id, d.doc_id"
    ).fetchall()
    for library_id, doc_id, title, source, levels in documents:
        db.execute(
            "UPDATE narrative_chunks SET title = ? WHERE library_id = ? AND doc_id = ?",
            (title if levels == 1 else PurePath(source).stem, library_id, doc_id),
        )
    db.execute("UPDATE narrative_documents SET fingerprint = ''")
    db.execute("UPDATE narrative_libraries SET generation = generation + 1")
    db.execute("DELETE FROM narrative_profiles")
    db.execute("DELETE FROM narrative_meta WHERE key = ?", (profiles.PROFILE_META_KEY,))
