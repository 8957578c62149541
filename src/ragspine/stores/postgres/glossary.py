"""The glossary texts of a PostgreSQL workspace: one row per text (``glossary.toml`` and each
generated ``glossary.d/NAME``), so every host reads the same glossary."""

from __future__ import annotations

from ragspine.stores.postgres.database import Database
from ragspine.structured.glossary_files import GENERATED_GLOSSARY_DIR, GLOSSARY_FILENAME

_GENERATED = f"{GENERATED_GLOSSARY_DIR}/"


class PostgresGlossary:
    """:class:`~ragspine.structured.glossary_files.GlossaryStorage` in the ``glossary_texts``
    table."""

    def __init__(self, db: Database) -> None:
        self._db = db

    def _read(self, name: str) -> tuple[str, str] | None:
        with self._db.connection() as conn:
            row = conn.execute(
                "SELECT body FROM glossary_texts WHERE name = %s", (name,)
            ).fetchone()
        return None if row is None else (f"{name} (in the database)", row[0])

    def _write(self, name: str, text: str) -> None:
        with self._db.connection() as conn:
            conn.execute(
                "INSERT INTO glossary_texts (name, body) VALUES (%s, %s) ON CONFLICT (name) "
                "DO UPDATE SET body = excluded.body, updated_at = now()",
                (name, text),
            )

    def main(self) -> tuple[str, str] | None:
        return self._read(GLOSSARY_FILENAME)

    def set_main(self, text: str) -> None:
        self._write(GLOSSARY_FILENAME, text)

    def generated(self, *, exclude: str | None = None) -> list[tuple[str, str]]:
        with self._db.connection() as conn:
            rows = conn.execute(
                "SELECT name, body FROM glossary_texts WHERE starts_with(name, %s) ORDER BY name",
                (_GENERATED,),
            ).fetchall()
        skip = None if exclude is None else _GENERATED + exclude
        return [(f"{name} (in the database)", body) for name, body in rows if name != skip]

    def generated_text(self, name: str) -> tuple[str, str] | None:
        return self._read(_GENERATED + name)

    def set_generated(self, name: str, text: str) -> None:
        self._write(_GENERATED + name, text)  # inside this thread's transaction, part of it

    def settle(self) -> None:
        """Nothing is ever staged: the texts are rows written in the transaction itself."""
