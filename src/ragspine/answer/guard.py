"""The numeric guard: every number an answer states must appear in the evidence it may use.

A stage of its own, for any text and any evidence: the extractive answer runs it on each
sentence against the child chunk it cites, and :func:`citation_violations` runs it over a whole
cited answer (contract 2). The rule for what counts as a number (:func:`numbers_in`): a run of
digits with inner ``.`` or ``,`` separators, thousands separators removed; signs, brackets,
currency symbols, percent signs and scale words are not part of it. So ``1,234``, ``(1,234)`` and
``$1234m`` all state ``1234``, ``12.5%`` states ``12.5`` and ``$3.4bn`` states ``3.4``; a comma
between digits is always read as a thousands separator (``3,4`` states ``34``).

:func:`guard_sentences` is the stage a generated reply goes through: each sentence is kept only
when it cites a source the model was given and every number it states is in its cited chunks'
text or is a found fact's stored value; each decision is reported (:class:`GuardDecision`).
"""

from __future__ import annotations

import re
from collections.abc import Collection, Iterable, Mapping, Sequence
from dataclasses import dataclass
from decimal import Decimal, InvalidOperation
from enum import StrEnum

from ragspine.answer.types import Answer, AnswerStatus
from ragspine.narrative.retrieve.snippets import Snippet

_NUMBER_RE = re.compile(r"[0-9]+(?:[.,][0-9]+)*")
_MARKED_RE = re.compile(r"(.+?) \[([0-9]+)\](?: |$)", re.DOTALL)


def numbers_in(text: str) -> list[str]:
    """The numbers written in ``text`` in order, thousands separators removed."""
    return [match.replace(",", "") for match in _NUMBER_RE.findall(text)]


@dataclass(frozen=True, slots=True)
class GuardReport:
    """What the guard found in one text: its numbers, and those the evidence lacks."""

    numbers: tuple[str, ...]
    """Every number in the text, in order (repeats kept)."""
    unsupported: tuple[str, ...]
    """The numbers (in order, repeats kept) that appear in none of the evidence texts."""

    @property
    def supported(self) -> bool:
        """True when every number in the text appears in the evidence."""
        return not self.unsupported


def check_numbers(text: str, evidence_texts: Iterable[str]) -> GuardReport:
    """Check every number in ``text`` against the numbers of ``evidence_texts``."""
    available = {number for evidence in evidence_texts for number in numbers_in(evidence)}
    numbers = tuple(numbers_in(text))
    return GuardReport(numbers, tuple(n for n in numbers if n not in available))


def citation_violations(answer: Answer, snippets: Sequence[Snippet]) -> list[tuple[int, str]]:
    """``(marker, number)`` pairs where a cited sentence holds a number its child chunk lacks.

    Also reports a marker that names no chunk source, or a source that is not one of
    ``snippets``' child chunks, as ``(marker, "")``, and every number outside a cited sentence
    as ``(0, number)``. An empty list means every citation holds up.
    """
    if answer.status is not AnswerStatus.ANSWERED:
        return [(0, n) for n in check_numbers(answer.text, ()).unsupported]
    children: dict[tuple[str | None, str | None], str] = {
        (s.library_id, s.chunk_id): s.text for s in snippets
    }
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
        report = check_numbers(match.group(1), (child_text,))
        violations.extend((marker, n) for n in report.unsupported)
    violations.extend((0, n) for n in check_numbers(body[covered:], ()).unsupported)
    return violations


class GuardVerdict(StrEnum):
    """What the guard decided for one sentence of a generated reply."""

    KEPT = "kept"
    UNCITED = "uncited"
    """The sentence cites no source: nothing shows where it comes from."""
    UNKNOWN_SOURCE = "unknown_source"
    """It cites a marker that names no source the model was given."""
    UNSUPPORTED_NUMBER = "unsupported_number"
    """It states a number that neither its cited chunks nor a found fact hold."""


@dataclass(frozen=True, slots=True)
class DraftSentence:
    """One sentence of a model's reply, its ``[n]`` markers taken out of ``text``."""

    text: str
    markers: tuple[int, ...]


@dataclass(frozen=True, slots=True)
class GuardDecision:
    """The guard's decision on sentence ``sentence`` (1-based) of a reply. ``unsupported``
    counts the numbers it lacked support for; their values are never shown."""

    sentence: int
    verdict: GuardVerdict
    markers: tuple[int, ...]
    unsupported: int = 0

    @property
    def kept(self) -> bool:
        return self.verdict is GuardVerdict.KEPT

    def to_dict(self) -> dict[str, object]:
        return {
            "sentence": self.sentence,
            "decision": "kept" if self.kept else "dropped",
            "reason": self.verdict.value,
            "markers": list(self.markers),
            "unsupported_numbers": self.unsupported,
        }


def guard_sentences(
    sentences: Sequence[DraftSentence],
    evidence: Mapping[int, str],
    fact_values: Collection[Decimal] = (),
) -> tuple[GuardDecision, ...]:
    """Decide for each of ``sentences`` whether it may be shown.

    ``evidence`` maps each marker the model was given to its child chunk's text; ``fact_values``
    are the stored values of found facts. A sentence is dropped when it cites nothing, cites a
    marker ``evidence`` lacks, or states a number that none of its cited chunks holds and that
    equals no found fact's value. History and the model's own words are never evidence.
    """
    numbers_of: dict[int, set[str]] = {}
    facts = frozenset(fact_values)
    decisions = []
    for position, sentence in enumerate(sentences, start=1):
        markers = sentence.markers
        if not markers:
            decisions.append(GuardDecision(position, GuardVerdict.UNCITED, markers))
            continue
        if any(marker not in evidence for marker in markers):
            decisions.append(GuardDecision(position, GuardVerdict.UNKNOWN_SOURCE, markers))
            continue
        available: set[str] = set()
        for marker in markers:
            found = numbers_of.get(marker)
            if found is None:
                found = numbers_of[marker] = set(numbers_in(evidence[marker]))
            available |= found
        missing = [
            n
            for n in numbers_in(sentence.text)
            if n not in available and not is_fact_value(n, facts)
        ]
        verdict = GuardVerdict.UNSUPPORTED_NUMBER if missing else GuardVerdict.KEPT
        decisions.append(GuardDecision(position, verdict, markers, len(missing)))
    return tuple(decisions)


def is_fact_value(number: str, facts: Collection[Decimal]) -> bool:
    """Whether ``number`` (as :func:`numbers_in` reads it) equals one of ``facts``."""
    if not facts:
        return False
    try:
        return Decimal(number) in facts
    except InvalidOperation:  # "1.2.3" is a number to the guard but not a decimal
        return False
