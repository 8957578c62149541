"""The offline extractive answer of the narrative route, with citations and a numeric guard.

Sentences are taken from the snippets' ``prompt_text`` by lexical overlap with the question
(IDF-weighted, deterministic, ties by snippet order then chunk id). Each sentence is followed by
a marker ``[n]`` naming the child chunk it came with. A sentence whose numbers do not all appear
in that child chunk's own ``text`` is left out, and the answer says so (contract 2).
"""

from __future__ import annotations

import math
import re
from collections import Counter
from collections.abc import Sequence
from dataclasses import dataclass, field
from enum import StrEnum

from ragspine.analysis import routing_terms
from ragspine.narrative.ingest.sentences import split_sentences as split_into_sentences
from ragspine.narrative.retrieve.expansion import screen_snippets
from ragspine.narrative.retrieve.snippets import Locator, Snippet, format_locator
from ragspine.narrative.retrieve.trace import Trace, TraceBuilder
from ragspine.security import Principal

NO_MATERIAL_TEXT = "No relevant material was found for this question."
NUMBERS_LEFT_OUT_NOTE = (
    "Some sentences were left out because their numbers do not appear in the cited passage."
)
DEFAULT_MAX_SENTENCES = 3

_PARAGRAPH_RE = re.compile(r"\n\s*\n")
_NUMBER_RE = re.compile(r"[0-9]+(?:[.,][0-9]+)*")
_REFERENCE_RE = re.compile(r"\s*\[[0-9][0-9,\s\u2013-]*\]")
_MARKED_RE = re.compile(r"(.+?) \[([0-9]+)\](?: |$)", re.DOTALL)


class AnswerStatus(StrEnum):
    """Whether the narrative route found material to answer from."""

    ANSWERED = "answered"
    NO_MATERIAL = "no_material"


@dataclass(frozen=True, slots=True)
class NarrativeSource:
    """One citation: the child chunk behind marker ``[marker]``."""

    marker: int
    chunk_id: str
    doc_id: str
    library_id: str
    source_locator: Locator
    parent_locator: Locator | None


@dataclass(frozen=True, slots=True)
class NarrativeAnswer:
    """A cited narrative answer."""

    route: str = "narrative"
    status: AnswerStatus = AnswerStatus.NO_MATERIAL
    text: str = NO_MATERIAL_TEXT
    sources: tuple[NarrativeSource, ...] = ()
    trace: Trace = field(default_factory=Trace)
    notes: tuple[str, ...] = ()

    def to_dict(self, *, timings: bool = True) -> dict[str, object]:
        """A JSON-ready form (``timings=False`` zeroes the trace timings for exact comparisons)."""
        trace = self.trace if timings else self.trace.without_timings()
        return {
            "route": self.route,
            "status": self.status.value,
            "text": self.text,
            "sources": [
                {
                    "marker": s.marker,
                    "chunk_id": s.chunk_id,
                    "doc_id": s.doc_id,
                    "library_id": s.library_id,
                    "source_locator": _plain(s.source_locator),
                    "parent_locator": _plain(s.parent_locator),
                }
                for s in self.sources
            ],
            "notes": list(self.notes),
            "trace": trace.to_dict(),
        }

    def render(self) -> str:
        """The answer text followed by its numbered sources, for a terminal."""
        lines = [self.text]
        if self.sources:
            lines.append("")
            lines.append("Sources:")
            for s in self.sources:
                parent = (
                    f" (section {format_locator(s.parent_locator)})" if s.parent_locator else ""
                )
                lines.append(
                    f"[{s.marker}] {s.library_id} / {s.doc_id} / {s.chunk_id}: "
                    f"{format_locator(s.source_locator)}{parent}"
                )
        return "\n".join(lines)


def _plain(locator: Locator | None) -> object:
    return locator if locator is None or isinstance(locator, str) else dict(locator)


def split_sentences(text: str) -> list[str]:
    """Sentences of ``text`` (whitespace collapsed, empty ones dropped), per paragraph, with the
    chunker's splitter (decimals and abbreviations such as ``U.S.`` stay whole)."""
    return [
        sentence
        for paragraph in _PARAGRAPH_RE.split(text)
        for sentence in split_into_sentences(paragraph)
        if sentence.strip()
    ]


def numbers_in(text: str) -> list[str]:
    """The numbers written in ``text``, thousands separators removed."""
    return [match.replace(",", "") for match in _NUMBER_RE.findall(text)]


def numbers_supported(sentence: str, child_text: str) -> bool:
    """Whether every number in ``sentence`` also appears in ``child_text``."""
    available = set(numbers_in(child_text))
    return all(number in available for number in numbers_in(sentence))


@dataclass(frozen=True, slots=True)
class _Candidate:
    sentence: str
    snippet_index: int
    position: int
    in_child: bool
    score: float


def _candidates(question: str, snippets: Sequence[Snippet]) -> list[_Candidate]:
    wanted = set(routing_terms(question))
    pool: list[tuple[str, int, int, bool, set[str]]] = []
    seen: set[str] = set()
    for index, snippet in enumerate(snippets):
        for position, sentence in enumerate(split_sentences(snippet.prompt_text)):
            in_child = sentence in " ".join(snippet.text.split())
            sentence = _REFERENCE_RE.sub("", sentence).strip()
            if not sentence or sentence in seen:
                continue
            seen.add(sentence)
            pool.append((sentence, index, position, in_child, set(routing_terms(sentence))))
    df: Counter[str] = Counter()
    for *_, sentence_terms in pool:
        df.update(sentence_terms & wanted)
    total = len(pool)
    scored = []
    for sentence, index, position, in_child, sentence_terms in pool:
        score = sum(math.log(1.0 + total / df[t]) for t in sorted(sentence_terms & wanted))
        if score > 0:
            scored.append(_Candidate(sentence, index, position, in_child, score))
    scored.sort(
        key=lambda c: (
            -c.score,
            not c.in_child,
            c.snippet_index,
            snippets[c.snippet_index].chunk_id,
            c.position,
        )
    )
    return scored


def answer_from_snippets(
    question: str,
    snippets: Sequence[Snippet],
    *,
    max_sentences: int = DEFAULT_MAX_SENTENCES,
    principal: Principal | None = None,
    trace: Trace | None = None,
) -> NarrativeAnswer:
    """The extractive answer to ``question`` from ``snippets`` (best first), with citations.

    With ``principal`` given, snippets it may not see are dropped before anything is read.
    """
    builder = TraceBuilder()
    with builder.timed() as timer:
        if principal is not None:  # what is withheld is not counted (contract 11)
            snippets, _ = screen_snippets(snippets, principal)
        chosen: list[_Candidate] = []
        left_out = 0
        pool = _candidates(question, snippets) if snippets else []
        for candidate in pool:
            if len(chosen) >= max_sentences:
                break
            if numbers_supported(candidate.sentence, snippets[candidate.snippet_index].text):
                chosen.append(candidate)
            else:
                left_out += 1
    builder.add_stage("answer:extractive", len(pool), len(chosen), seconds=timer.seconds)
    notes: tuple[str, ...] = (NUMBERS_LEFT_OUT_NOTE,) if left_out else ()
    for note in notes:
        builder.note(note)
    built = builder.build()
    full_trace = trace.merged(built) if trace is not None else built
    if not chosen:
        return NarrativeAnswer(trace=full_trace, notes=notes)

    markers: dict[tuple[str, str], int] = {}
    sources: list[NarrativeSource] = []
    parts: list[str] = []
    for candidate in chosen:
        snippet = snippets[candidate.snippet_index]
        key = (snippet.library_id, snippet.chunk_id)
        if key not in markers:
            markers[key] = len(markers) + 1
            sources.append(
                NarrativeSource(
                    marker=markers[key],
                    chunk_id=snippet.chunk_id,
                    doc_id=snippet.doc_id,
                    library_id=snippet.library_id,
                    source_locator=snippet.source_locator,
                    parent_locator=snippet.parent_locator,
                )
            )
        parts.append(f"{candidate.sentence} [{markers[key]}]")
    text = " ".join(parts)
    if notes:
        text = f"{text}\n\n{' '.join(notes)}"
    return NarrativeAnswer(
        status=AnswerStatus.ANSWERED,
        text=text,
        sources=tuple(sources),
        trace=full_trace,
        notes=notes,
    )


def citation_violations(
    answer: NarrativeAnswer, snippets: Sequence[Snippet]
) -> list[tuple[int, str]]:
    """``(marker, number)`` pairs where a cited sentence holds a number its child chunk lacks.

    Also reports a marker that names no source, or a source that is not one of ``snippets``'
    child chunks, as ``(marker, "")``. An empty list means every citation holds up.
    """
    if answer.status is not AnswerStatus.ANSWERED:
        return [] if not numbers_in(answer.text) else [(0, n) for n in numbers_in(answer.text)]
    children = {(s.library_id, s.chunk_id): s.text for s in snippets}
    by_marker = {source.marker: source for source in answer.sources}
    body = answer.text
    for note in answer.notes:
        body = body.replace(note, "")
    body = body.strip()
    violations: list[tuple[int, str]] = []
    covered = 0
    for match in _MARKED_RE.finditer(body):
        covered = match.end()
        marker = int(match.group(2))
        source = by_marker.get(marker)
        child_text = children.get((source.library_id, source.chunk_id)) if source else None
        if child_text is None:
            violations.append((marker, ""))
            continue
        available = set(numbers_in(child_text))
        violations.extend((marker, n) for n in numbers_in(match.group(1)) if n not in available)
    violations.extend((0, n) for n in numbers_in(body[covered:]))
    return violations
