"""Cited generation: a model writes the narrative answer, the guard decides what is shown.

The prompt numbers each snippet's ``prompt_text`` (its parent section or sentence window) as
``[1]``, ``[2]``, ... and asks for an answer citing them; history turns come before the question
as context only. The reply is split into sentences (:func:`parse_reply`), each with the markers
it cites; :func:`~ragspine.answer.guard.guard_sentences` then keeps a sentence only when it
cites a given source and every number it states is in its cited child chunks' ``text`` (never
the expansion, never history) or is a found fact's stored value. Kept sentences are renumbered
in order of first citation and cite the child chunk (``chunk_id``, ``source_locator``). When
nothing survives, the answer is the fixed "no supported answer" text with every source given.
"""

from __future__ import annotations

import re
from collections.abc import Collection, Sequence
from decimal import Decimal

from ragspine.answer.extractive import ROUTE, cited_chunk, split_sentences
from ragspine.answer.guard import DraftSentence, GuardDecision, StatedValue, guard_sentences
from ragspine.answer.history import Turn
from ragspine.answer.locale import TEXTS, Locale
from ragspine.answer.types import Answer, AnswerStatus, CitedSentence, Source
from ragspine.llm.provider import Generation, Message, Provider, Role
from ragspine.narrative.retrieve.expansion import screen_snippets
from ragspine.narrative.retrieve.snippets import Snippet, format_locator
from ragspine.narrative.retrieve.trace import Trace, TraceBuilder
from ragspine.security import Principal

SYSTEM_PROMPT = (
    "You answer questions about business reports using only the numbered sources given. "
    "After every sentence write the number of the source it comes from in square brackets, "
    "like [1] or [1][2]. State a number only when it appears in the source you cite, written "
    "as it appears there. Earlier turns of the conversation are context only: never take a "
    "number from them. If the sources do not answer the question, say so without numbers."
)

_GROUP = r"\[\s*[0-9]+(?:\s*[,;]\s*[0-9]+)*\s*\]"
_GROUPS_RE = re.compile(rf"(?:\s*{_GROUP})+")
_MARKER_GROUP_RE = re.compile(_GROUP)
_TRAILING_RE = re.compile(rf"([.!?])((?:\s*{_GROUP})+)(?=\s|$)")
_BULLET_RE = re.compile(r"^\s*(?:[-*•]|[0-9]+[.)])\s+", re.MULTILINE)


def source_block(snippets: Sequence[Snippet], start: int = 1) -> str:
    """The numbered sources of a prompt (from ``[start]``): ``[n]`` then where it is, then its
    ``prompt_text``."""
    parts = []
    for number, snippet in enumerate(snippets, start=start):
        where = format_locator(snippet.source_locator)
        title = snippet.title or snippet.doc_id
        parts.append(f"[{number}] {title} ({where})\n{snippet.prompt_text.strip()}")
    return "\n\n".join(parts)


def build_messages(
    question: str, snippets: Sequence[Snippet], history: Sequence[Turn] = ()
) -> list[Message]:
    """The conversation sent to the model: rules, history (context only), then the sources
    and the question."""
    messages = [Message(Role.SYSTEM, SYSTEM_PROMPT)]
    messages.extend(Message(Role(turn.role.value), turn.text) for turn in history)
    sources = source_block(snippets) if snippets else "(no sources were found)"
    messages.append(Message(Role.USER, f"Sources:\n\n{sources}\n\nQuestion: {question}"))
    return messages


def parse_reply(text: str) -> list[DraftSentence]:
    """The sentences of a reply, each with the markers it cites, markers taken out of its text.

    A marker group right after a sentence's full stop (``Sales rose. [1]``) belongs to that
    sentence; each line is read on its own and list bullets are dropped; a sentence may cite
    several sources (``[1][2]``, ``[1, 2]``).
    """
    text = _BULLET_RE.sub("", text).replace("\n", "\n\n")  # a line (a list item) ends one
    text = _TRAILING_RE.sub(lambda m: f"{m.group(2)}{m.group(1)}", text)
    drafts = []
    for sentence in split_sentences(text):
        markers: list[int] = []
        for group in _MARKER_GROUP_RE.findall(sentence):
            markers.extend(int(n) for n in re.findall(r"[0-9]+", group))
        shown = " ".join(_GROUPS_RE.sub("", sentence).split())
        shown = re.sub(r"\s+([.!?,;:])", r"\1", shown)
        if shown:
            drafts.append(DraftSentence(shown, tuple(dict.fromkeys(markers))))
    return drafts


def answer_from_reply(
    reply: Generation,
    snippets: Sequence[Snippet],
    *,
    fact_values: Collection[StatedValue | Decimal] = (),
    locale: Locale = Locale.EN,
    trace: Trace | None = None,
) -> Answer:
    """The narrative answer a model's ``reply`` gives, after the guard: ``snippets`` are the
    sources the model was given, in their prompt order (``[1]`` first)."""
    builder = TraceBuilder()
    with builder.timed() as timer:
        drafts = parse_reply(reply.text)
        evidence = {number: snippet.text for number, snippet in enumerate(snippets, start=1)}
        decisions = guard_sentences(drafts, evidence, fact_values)
    kept = [draft for draft, decision in zip(drafts, decisions, strict=True) if decision.kept]
    builder.add_stage("answer:guard", len(drafts), len(kept), seconds=timer.seconds)
    notes: list[str] = []
    if not reply.complete:
        notes.append(TEXTS[locale]["model_cut_short"])
    if len(kept) < len(drafts):
        notes.append(TEXTS[locale]["model_left_out"])
    for note in notes:
        builder.note(note)
    built = builder.build()
    full_trace = trace.merged(built) if trace is not None else built
    if not kept:
        return _unsupported(snippets, decisions, tuple(notes), locale, full_trace)

    renumbered: dict[int, int] = {}
    sources: list[Source] = []
    sentences: list[CitedSentence] = []
    for draft in kept:
        given = [m for m in draft.markers if m in evidence]  # the guard kept only these
        for marker in given:
            if marker not in renumbered:
                renumbered[marker] = len(renumbered) + 1
                sources.append(cited_chunk(renumbered[marker], snippets[marker - 1]))
        sentences.append(CitedSentence(draft.text, tuple(renumbered[m] for m in given)))
    body = " ".join(s.text + "".join(f" [{m}]" for m in s.markers) for s in sentences)
    text = f"{body}\n\n{' '.join(notes)}" if notes else body
    return Answer(
        ROUTE,
        status=AnswerStatus.ANSWERED,
        text=text,
        sources=tuple(sources),
        trace=full_trace,
        notes=tuple(notes),
        sentences=tuple(sentences),
        locale=locale,
        guard=decisions,
    )


def _unsupported(
    snippets: Sequence[Snippet],
    decisions: tuple[GuardDecision, ...],
    notes: tuple[str, ...],
    locale: Locale,
    trace: Trace,
) -> Answer:
    fixed = TEXTS[locale]["no_supported_answer" if snippets else "no_material"]
    return Answer(
        ROUTE,
        status=AnswerStatus.REFUSED,
        text=fixed,
        sources=tuple(cited_chunk(n, s) for n, s in enumerate(snippets, start=1)),
        trace=trace,
        notes=notes,
        locale=locale,
        guard=decisions,
    )


def generate_answer(
    question: str,
    snippets: Sequence[Snippet],
    provider: Provider,
    *,
    principal: Principal | None = None,
    history: Sequence[Turn] = (),
    fact_values: Collection[StatedValue | Decimal] = (),
    locale: Locale = Locale.EN,
    trace: Trace | None = None,
) -> Answer:
    """The cited answer ``provider`` writes from ``snippets``, after the guard.

    With ``principal`` given, snippets it may not see are dropped before the prompt is built.
    No visible snippet: the fixed "no relevant material" answer, and the model is not called.
    """
    if principal is not None:
        snippets, _ = screen_snippets(snippets, principal)
    if not snippets:
        empty = Trace() if trace is None else trace
        return Answer(ROUTE, text=TEXTS[locale]["no_material"], trace=empty, locale=locale)
    builder = TraceBuilder()
    with builder.timed() as timer:
        reply = provider.generate(build_messages(question, snippets, history))
    stage = f"answer:generate:{provider.name.value}"
    builder.add_stage(stage, len(snippets), 1, seconds=timer.seconds)
    generated = builder.build()
    return answer_from_reply(
        reply,
        snippets,
        fact_values=fact_values,
        locale=locale,
        trace=generated if trace is None else trace.merged(generated),
    )
