"""The numeric guard: every number an answer states must appear in the evidence it may use.

A stage of its own, for any text and any evidence: the extractive answer runs it on each
sentence against the child chunk it cites, and :func:`citation_violations` runs it over a whole
cited answer (contract 2). The rule for what counts as a number (:func:`numbers_in`): a run of
digits with inner ``.`` or ``,`` separators, thousands separators removed; signs, brackets,
currency symbols, percent signs and scale words are not part of it. So ``1,234``, ``(1,234)`` and
``$1234m`` all state ``1234``, ``12.5%`` states ``12.5`` and ``$3.4bn`` states ``3.4``; a comma
between digits is always read as a thousands separator (``3,4`` states ``34``).
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Sequence
from dataclasses import dataclass

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
