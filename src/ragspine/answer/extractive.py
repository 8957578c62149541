"""The offline extractive answer of the narrative route: cited, checked by the numeric guard.

Sentences are taken from the snippets' ``prompt_text`` by lexical overlap with the question
(routing terms, IDF-weighted, deterministic, ties by snippet order then chunk id); a sentence
holding less than :data:`MIN_SHARED` of the question's terms is none. A table's
lead-in ("The following table summarizes ...:") is no candidate unless the question is about a
table: it introduces figures the passage does not hold. Each sentence
is followed by a marker ``[n]`` naming the child chunk it came with. The numeric guard
(:mod:`ragspine.answer.guard`) checks each sentence against that child chunk's own ``text``; a
sentence it does not pass is left out, and the answer says so (contract 2).
"""

from __future__ import annotations

import math
import re
from collections import Counter
from collections.abc import Sequence
from dataclasses import dataclass

from ragspine.analysis import routing_terms
from ragspine.answer.guard import check_numbers
from ragspine.answer.history import Turn
from ragspine.answer.locale import TEXTS, Locale
from ragspine.answer.types import Answer, AnswerStatus, CitedSentence, Source
from ragspine.narrative.ingest.sentences import split_sentences as split_into_sentences
from ragspine.narrative.retrieve.expansion import screen_snippets
from ragspine.narrative.retrieve.snippets import Snippet
from ragspine.narrative.retrieve.trace import Trace, TraceBuilder
from ragspine.security import Principal
from ragspine.structured.headers import MONTH_WORDS

ROUTE = "narrative"
NUMBERS_LEFT_OUT_NOTE = TEXTS[Locale.EN]["numbers_left_out"]
DEFAULT_MAX_SENTENCES = 3
MIN_SHARED = 0.25
"""The least share of the question's distinct terms a sentence must hold to answer it: one
term of seven ("the company's total operating lease obligations that are due within 5 years"
against "Purchase obligations represent an estimate of open purchase orders ...") is a passage
about something else. On TAT-QA dev it refuses 15 such answers (5 of them wrong numbers); of the
sentences holding a gold text span it loses one, none of a question answered from text alone."""

_MONTH_TERMS = frozenset(routing_terms(" ".join(sorted(MONTH_WORDS))))
_EVENT_TERMS = frozenset(
    routing_terms("happen happened happens occur occurred occurs took take place event events")
)
"""Terms of a date (``2019``, ``30``, ``september``): a sentence sharing only these with the
question ("What is the COGS for 2019?" against "... lower selling prices ... in fiscal 2019")
is about something else, unless the question names nothing else than a date and an event
(``What happened on March 31, 2019?``, found by review)."""
_PARAGRAPH_RE = re.compile(r"\n\s*\n")
_REFERENCE_RE = re.compile(r"\s*\[[0-9][0-9,\s\u2013-]*\]")
# A lead-in introduces a table the answer cannot show ("The following table summarizes ...:",
# "... were as follows (in thousands):"); it states nothing itself. It ends at a colon, which
# the sentence splitter does not cut at ("...: Purchase obligations represent ...").
_COLON_RE = re.compile(r":(?:\s+|[\s.]*$)")
_LEAD_IN_RE = re.compile(
    r"\b(?:(?:following|below|above)\s+tables?|tables?\s+(?:below|above)|as\s+follows)\b",
    re.IGNORECASE,
)
_ABOUT_TABLE_RE = re.compile(r"\btables?\b", re.IGNORECASE)


def split_sentences(text: str) -> list[str]:
    """Sentences of ``text`` (whitespace collapsed, empty ones dropped), per paragraph, with the
    chunker's splitter (decimals and abbreviations such as ``U.S.`` stay whole)."""
    return [
        sentence
        for paragraph in _PARAGRAPH_RE.split(text)
        for sentence in split_into_sentences(paragraph)
        if sentence.strip()
    ]


@dataclass(frozen=True, slots=True)
class _Candidate:
    sentence: str
    snippet_index: int
    position: int
    in_child: bool
    score: float


def _statements(text: str, *, lead_ins: bool) -> list[str]:
    """The sentences of ``text``; without ``lead_ins``, those that are all lead-in left out. A
    sentence going on after its lead-in's colon is kept whole: the lead-in may hold what its
    figures need (``(in millions)``, ``pro forma``, ``in the prior year``)."""
    sentences = split_sentences(text)
    if lead_ins:
        return sentences
    return [sentence for sentence in sentences if sentence[_lead_in_end(sentence) :].strip()]


def _lead_in_end(sentence: str) -> int:
    """Where ``sentence``'s last lead-in ends: after a colon closing a stretch that holds a
    lead-in marker outside parentheses (``(2018: 43%)`` closes none), else 0. One pass."""
    markers = [(m.start(), m.end()) for m in _LEAD_IN_RE.finditer(sentence)]
    if not markers:
        return 0
    depth = [0]  # parentheses open before each position
    for char in sentence:
        depth.append(depth[-1] + (char == "(") - (char == ")"))
    start = 0
    next_marker = 0
    for colon in _COLON_RE.finditer(sentence):
        while next_marker < len(markers) and markers[next_marker][0] < start:
            next_marker += 1
        inside = next_marker < len(markers) and markers[next_marker][1] <= colon.start()
        if inside and depth[colon.start()] == depth[start]:
            start = colon.end()
    return start


def _candidates(question: str, snippets: Sequence[Snippet]) -> list[_Candidate]:
    wanted = set(routing_terms(question))
    lead_ins = bool(_ABOUT_TABLE_RE.search(question))
    pool: list[tuple[str, int, int, bool, set[str]]] = []
    seen: set[str] = set()
    for index, snippet in enumerate(snippets):
        child = " ".join(snippet.text.split())
        for position, sentence in enumerate(_statements(snippet.prompt_text, lead_ins=lead_ins)):
            in_child = sentence in child
            sentence = _REFERENCE_RE.sub("", sentence).strip()
            if not sentence or sentence in seen:
                continue
            seen.add(sentence)
            pool.append((sentence, index, position, in_child, set(routing_terms(sentence))))
    df: Counter[str] = Counter()
    for *_, sentence_terms in pool:
        df.update(sentence_terms & wanted)
    total = len(pool)
    dates = {t for t in wanted if t.isdigit() or t in _MONTH_TERMS or t in _EVENT_TERMS}
    words = {t for t in wanted if t not in dates} or wanted  # "what happened in 2019": dates
    scored = []
    for sentence, index, position, in_child, sentence_terms in pool:
        shared = sentence_terms & wanted
        score = sum(math.log(1.0 + total / df[t]) for t in sorted(shared))
        if score > 0 and len(shared) >= MIN_SHARED * len(wanted) and shared & words:
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
    locale: Locale = Locale.EN,
    history: Sequence[Turn] = (),
) -> Answer:
    """The extractive answer to ``question`` from ``snippets`` (best first), with citations.

    With ``principal`` given, snippets it may not see are dropped before anything is read.
    ``history`` is the conversation so far, the prompt context of a generating provider; the
    extractive answer has no model to give it to and reads nothing from it.
    """
    del history  # generation context only: never searched, parsed or cited
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
            guard = check_numbers(candidate.sentence, (snippets[candidate.snippet_index].text,))
            if guard.supported:
                chosen.append(candidate)
            else:
                left_out += 1
    builder.add_stage("answer:extractive", len(pool), len(chosen), seconds=timer.seconds)
    if left_out:
        builder.note(NUMBERS_LEFT_OUT_NOTE)
    notes: tuple[str, ...] = (TEXTS[locale]["numbers_left_out"],) if left_out else ()
    built = builder.build()
    full_trace = trace.merged(built) if trace is not None else built
    if not chosen:
        return Answer(
            ROUTE, text=TEXTS[locale]["no_material"], trace=full_trace, notes=notes, locale=locale
        )

    markers: dict[tuple[str, str], int] = {}
    sources: list[Source] = []
    parts: list[str] = []
    sentences: list[CitedSentence] = []
    for candidate in chosen:
        snippet = snippets[candidate.snippet_index]
        key = (snippet.library_id, snippet.chunk_id)
        if key not in markers:
            markers[key] = len(markers) + 1
            sources.append(cited_chunk(markers[key], snippet))
        parts.append(f"{candidate.sentence} [{markers[key]}]")
        sentences.append(CitedSentence(candidate.sentence, (markers[key],)))
    text = " ".join(parts)
    if notes:
        text = f"{text}\n\n{' '.join(notes)}"
    return Answer(
        ROUTE,
        status=AnswerStatus.ANSWERED,
        text=text,
        sources=tuple(sources),
        trace=full_trace,
        notes=notes,
        sentences=tuple(sentences),
        locale=locale,
    )


def cited_chunk(marker: int, snippet: Snippet) -> Source:
    """The citation ``[marker]`` of ``snippet``'s child chunk."""
    return Source.of_chunk(
        marker,
        chunk_id=snippet.chunk_id,
        doc_id=snippet.doc_id,
        library_id=snippet.library_id,
        source_locator=snippet.source_locator,
        parent_locator=snippet.parent_locator,
    )
