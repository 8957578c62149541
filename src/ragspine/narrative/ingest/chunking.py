"""Parent-child chunking: a parent per section, children as bounded sentence groups or windows."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from ragspine.errors import ConfigError
from ragspine.narrative.ingest.loaders import Section
from ragspine.narrative.ingest.sentences import breaks_only_at_white_space, split_sentences

HEADING_SEPARATOR = " > "


@dataclass(frozen=True, slots=True)
class ChunkingOptions:
    """How children are cut: ``max_words`` per sentence group, or one sentence ± ``window``."""

    max_words: int = 200
    window: int = 0

    def __post_init__(self) -> None:
        if self.max_words < 1:
            raise ConfigError(f"max_words must be at least 1, got {self.max_words}")
        if self.window < 0:
            raise ConfigError(f"window must be 0 (off) or a positive count, got {self.window}")

    @property
    def signature(self) -> str:
        """A stable text that changes whenever re-chunking would give other chunks."""
        return f"max_words={self.max_words};window={self.window}"


@dataclass(frozen=True, slots=True)
class ParentDraft:
    """A section's full text with its locator, stored once per section."""

    ordinal: int
    heading: str
    text: str
    locator: dict[str, Any]
    heading_path: tuple[str, ...] = ()


@dataclass(frozen=True, slots=True)
class ChunkDraft:
    """A child before it is stored: what search matches and citations point at."""

    ordinal: int
    parent_ordinal: int
    heading: str
    text: str
    locator: dict[str, Any]
    window_text: str | None
    heading_path: tuple[str, ...] = ()


@dataclass(frozen=True, slots=True)
class _Sentence:
    text: str
    paragraph: int
    page: int | None


def _section_sentences(section: Section) -> list[_Sentence]:
    return [
        _Sentence(sentence, index, paragraph.page)
        for index, paragraph in enumerate(section.paragraphs)
        for sentence in split_sentences(paragraph.text)
    ]


def _whole_section(section: Section, max_words: int) -> list[_Sentence] | None:
    """The section as one sentence when its sentences would all form one group anyway (few
    enough words, boundaries only at white space): the same chunk without splitting it."""
    if not all(breaks_only_at_white_space(p.text) for p in section.paragraphs):
        return None
    words: list[str] = []
    first: tuple[int, int | None] | None = None
    for index, paragraph in enumerate(section.paragraphs):
        found = paragraph.text.split()
        if found and first is None:
            first = (index, paragraph.page)
        words += found
        if len(words) > max_words:
            return None
    if first is None:
        return None
    return [_Sentence(" ".join(words), *first)]


def _word_count(sentence: _Sentence) -> int:
    """Words of a sentence: its text is never empty and has single spaces between words."""
    return sentence.text.count(" ") + 1


def _bounded(sentence: _Sentence, max_words: int) -> list[_Sentence]:
    """Cut a sentence longer than ``max_words`` into word runs, so every child stays bounded."""
    if _word_count(sentence) <= max_words:
        return [sentence]
    words = sentence.text.split()
    return [
        _Sentence(" ".join(words[start : start + max_words]), sentence.paragraph, sentence.page)
        for start in range(0, len(words), max_words)
    ]


def _group(sentences: list[_Sentence], max_words: int) -> list[list[_Sentence]]:
    groups: list[list[_Sentence]] = []
    current: list[_Sentence] = []
    count = 0
    for sentence in sentences:
        words = _word_count(sentence)
        if current and count + words > max_words:
            groups.append(current)
            current, count = [], 0
        current.append(sentence)
        count += words
    if current:
        groups.append(current)
    return groups


def _locator(source: str, heading_path: tuple[str, ...], first: _Sentence) -> dict[str, Any]:
    locator: dict[str, Any] = {"file": source}
    if first.page is not None:
        locator["page"] = first.page
    if heading_path:
        locator["heading_path"] = list(heading_path)
    locator["paragraph"] = first.paragraph
    return locator


def chunk_sections(
    sections: tuple[Section, ...] | list[Section], source: str, options: ChunkingOptions
) -> tuple[list[ParentDraft], list[ChunkDraft]]:
    """Cut ``sections`` into parents (one per non-empty section) and their children."""
    parents: list[ParentDraft] = []
    chunks: list[ChunkDraft] = []
    for section in sections:
        whole = None if options.window else _whole_section(section, options.max_words)
        sentences = whole or [
            piece
            for sentence in _section_sentences(section)
            for piece in _bounded(sentence, options.max_words)
        ]
        if not sentences:
            continue
        heading = HEADING_SEPARATOR.join(section.heading_path)
        parent_ordinal = len(parents)
        parent_locator: dict[str, Any] = {"file": source, "section": parent_ordinal}
        if section.heading_path:
            parent_locator["heading_path"] = list(section.heading_path)
        if sentences[0].page is not None:
            parent_locator["page"] = sentences[0].page
        parents.append(
            ParentDraft(
                parent_ordinal,
                heading,
                "\n\n".join(p.text for p in section.paragraphs),
                parent_locator,
                section.heading_path,
            )
        )
        if options.window:
            for index, sentence in enumerate(sentences):
                lo, hi = max(0, index - options.window), index + options.window + 1
                window = " ".join(s.text for s in sentences[lo:hi])
                chunks.append(
                    ChunkDraft(
                        len(chunks),
                        parent_ordinal,
                        heading,
                        sentence.text,
                        _locator(source, section.heading_path, sentence),
                        window,
                        section.heading_path,
                    )
                )
        else:
            for group in _group(sentences, options.max_words):
                chunks.append(
                    ChunkDraft(
                        len(chunks),
                        parent_ordinal,
                        heading,
                        " ".join(s.text for s in group),
                        _locator(source, section.heading_path, group[0]),
                        None,
                        section.heading_path,
                    )
                )
    return parents, chunks
