"""The prose of imported documents (a TAT-QA table's paragraphs, a ConvFinQA filing's text
around its table), made into documents of a narrative library with their entity in metadata."""

from __future__ import annotations

from collections.abc import Iterable, Iterator
from dataclasses import dataclass
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from ragspine.narrative.ingest.ingestor import DocumentSource


@dataclass(frozen=True, slots=True)
class DocumentText:
    """The paragraphs of one imported document, in order, and the entity its facts are
    about."""

    document: str
    entity: str
    paragraphs: tuple[str, ...]


def paragraph_sources(texts: Iterable[DocumentText], source_name: str) -> Iterator[DocumentSource]:
    """One narrative document per imported document that has prose: its paragraphs in one
    untitled section, its entity and document id in metadata (a question about the entity
    keeps to its passages)."""
    from ragspine.narrative.ingest.ingestor import DocumentSource, text_digest
    from ragspine.narrative.ingest.loaders import Paragraph, Section

    for item in texts:
        if not item.paragraphs:
            continue
        yield DocumentSource(
            doc_id=item.document,
            title="",
            source=source_name,
            sections=(Section((), tuple(Paragraph(p) for p in item.paragraphs)),),
            content_hash=text_digest(item.document, *item.paragraphs),
            metadata={"entity": item.entity, "document": item.document},
        )
