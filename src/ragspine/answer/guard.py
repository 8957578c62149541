"""The numeric guard: every number an answer states must appear in the evidence it may use.

A stage of its own, for any text and any evidence: the extractive answer runs it on each
sentence against the child chunk it cites, and :func:`citation_violations` runs it over a whole
cited answer (contract 2). The rule for what counts as a number (:func:`numbers_in`): a run of
digits with inner ``.`` or ``,`` separators, thousands separators removed; signs, brackets,
currency symbols, percent signs and scale words are not part of it. So ``1,234``, ``(1,234)`` and
``$1234m`` all state ``1234``, ``12.5%`` states ``12.5`` and ``$3.4bn`` states ``3.4``; a comma
between digits is always read as a thousands separator (``3,4`` states ``34``).

A scale word or percent sign right after a number is its *magnitude* (:func:`stated_numbers`:
``1,234 million`` and ``$1234m`` state 1234 at ``million``, ``12.5%`` at ``percent``), and so
is one between a currency and its number (``€m 40``, ``USD bn 2.5``) or after a code that
follows the number (``2,455 USD million``). The
number alone is what must be in the evidence; a magnitude must not contradict it: ``2,455
billion`` is unsupported by a chunk that says only ``2,455 million``, and by a found fact stored
at ``million`` (or at no stated scale, or as units). A bare number in the evidence (a table cell
under an ``in millions`` heading the chunk may not hold) supports it at any magnitude.

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
from ragspine.glossary import Glossary, MetricKind
from ragspine.narrative.retrieve.snippets import Snippet
from ragspine.structured.facts import SCALE_WORDS, Scale

_NUMBER_RE = re.compile(r"[0-9]+(?:[.,][0-9]+)*")
_MARKED_RE = re.compile(r"(.+?) \[([0-9]+)\](?: |$)", re.DOTALL)
_MAGNITUDE_WORDS = {
    "thousand": ("thousand", "thousands", "mila", "migliaia"),
    "million": ("million", "millions", "mn", "mln", "mio", "milione", "milioni"),
    "billion": (
        "billion", "billions", "bn", "bln", "bil", "mld", "mrd", "miliardo", "miliardi",
        "milliard", "milliards", "thousandmillion", "thousandmillions",  # the British billion
    ),
    "trillion": ("trillion", "trillions", "tn", "trn"),
    "basis point": ("bp", "bps", "basispoint", "basispoints"),
    "lakh": ("lakh", "lakhs"),  # 100 thousand
    "crore": ("crore", "crores"),  # 10 million
}  # fmt: skip
_MAGNITUDE_OF = {word: name for name, words in _MAGNITUDE_WORDS.items() for word in words}
_LETTERS = {"k": "thousand", "m": "million", "mm": "million", "b": "billion"}
"""Magnitudes of one or two letters: right against the number (``$1234m``, ``5k``, ``40B``),
or apart after a currency sign or code (``$40 B``, ``€ 5 MM``, ``EUR 40 m``) or before the
number after one (``€m 40``, ``USD bn 2.5``); apart with none, ``3 m`` may be metres and
``Class 40 B`` a name (but ``40 MM``, in capitals, is a million)."""
_CODES = "USD|EUR|GBP|CHF|JPY|CNY|RMB|INR|CAD|AUD|HKD|SGD|SEK|NOK|DKK|ZAR|BRL|MXN|KRW"
"""Currency codes read like a currency sign: in capitals only (``eur`` is no code)."""
_PERCENT_WORDS = frozenset({"%", "percent", "pct", "percento"})  # "per cent", "per cento" too
_GAP = "[ \t\u00a0\u2009\u202f\u200b]"
_DASH = "[-\u2010-\u2015]"
_DASH_RE = re.compile(_DASH)
_MAGNITUDE_BEFORE = "|".join(
    re.escape(word)
    for word in sorted(
        {*_LETTERS, *(w for w, name in _MAGNITUDE_OF.items() if name != "basis point")}
        - {"thousandmillion", "thousandmillions"},
        key=len,
        reverse=True,
    )
)
"""A magnitude written between a currency and its number (``€m 40``, ``USD bn 2.5``, ``INR
crore 40``): any of :data:`_MAGNITUDE_WORDS` (basis points aside) or :data:`_LETTERS`."""
_NUMBER_GAP = rf"([0-9]+(?:[.,][0-9]+)*)({_GAP}*{_DASH}?{_GAP}*)"
_WORD = (
    r"(%|per[\s\u200b]*cent[oi]?(?![^\W\d_])|basis[\s\u200b]*points?(?![^\W\d_])"
    r"|thousand[\s\u200b]+millions?(?![^\W\d_])|[^\W\d_]+)?"
)
_STATED_RE = re.compile(rf"()(){_NUMBER_GAP}(){_WORD}", re.IGNORECASE)
_STATED_WITH_CURRENCY_RE = re.compile(
    rf"(?:([$€£]|\b(?-i:{_CODES})){_GAP}*(?:({_MAGNITUDE_BEFORE})\.?{_GAP}*(?=[0-9]))?)?"
    rf"{_NUMBER_GAP}(?:\b((?-i:{_CODES})){_GAP}+(?=[^\W\d_])"
    rf"(?!(?:{_MAGNITUDE_BEFORE})\.?{_GAP}*[0-9]))?"
    # a code before the next number is that number's ("2019 USD 40 m"), not this one's word
    rf"(?!\b(?-i:{_CODES}){_GAP}*(?:(?:{_MAGNITUDE_BEFORE})\.?{_GAP}*)?[0-9]){_WORD}",
    re.IGNORECASE,
)
"""The same reading a currency before the number, a magnitude between the two and a currency
code between the number and its magnitude (``2,455 USD million``): slower, so only for a text
where :data:`_CURRENCY_CUE_RE` finds a currency next to a number it may read differently
(the cue is looser than the reading: it may pick this pattern for nothing, never miss it)."""
_CURRENCY_CUE_RE = re.compile(
    rf"(?:[$€£]|\b(?-i:{_CODES})){_GAP}*(?:(?:{_MAGNITUDE_BEFORE})\.?{_GAP}*[0-9]"
    rf"|[0-9][0-9.,]*(?:{_GAP}|{_DASH})+(?:k|m|mm|b)(?![^\W\d_]))"
    rf"|[0-9](?:{_GAP}|{_DASH})+(?-i:{_CODES}){_GAP}+[^\W\d_]",
    re.IGNORECASE,
)
_CAPITALS_RE = re.compile("[A-Z]{3}")
"""With a look for a currency sign, a first look for any currency (a code is three capitals):
much faster than :data:`_CURRENCY_CUE_RE`, which only a text with one of them needs."""
PERCENT = "percent"
"""The magnitude of a number written with ``%`` (``percent``, ``per cent``, ``pct``)."""
WORDED = "word"
"""What :func:`stated_numbers` gives, with ``worded=True``, for a number followed by a word that
is no magnitude (``12 months``, ``Form 10-K``): unlike a bare number (a table cell), it supports
none. A joining word after it (``2,455 in 2019``, ``2,455 and 1,900``) or a capitalised one
(the next row's label in a table's text: ``| 2,100 Cost of sales |``) leaves it bare: the
magnitude may be stated elsewhere (a heading's ``in millions``)."""
_JOINING = frozenset(
    re.split(
        r"\s+",
        "and or in to from of for at on by as vs versus compared while with than e o a da di "
        "del nel",
    )
)


def stated_numbers(text: str, *, worded: bool = False) -> list[tuple[str, str]]:
    """The numbers written in ``text`` in order (as :func:`numbers_in` reads them), each with
    the magnitude written with it: right after it (a dash or spaces between them allowed:
    ``$40-billion``; a currency code too: ``2,455 USD million``) or between a currency and it
    (``€m 40``, unless a word that is no magnitude follows the number: ``£m 52 weeks`` is a
    heading's scale run into a count): ``thousand``, ``million``, ``billion``, ``trillion``,
    ``basis point``, ``lakh``, ``crore``, :data:`PERCENT`, or ``""`` when none is (``2,455``
    alone, ``12 months``). With ``worded``, a number followed by a word that is no magnitude
    gives :data:`WORDED` instead of ``""``."""
    found = []
    currency_cue = (
        "$" in text or "€" in text or "£" in text or _CAPITALS_RE.search(text)
    ) and _CURRENCY_CUE_RE.search(text)
    pattern = _STATED_WITH_CURRENCY_RE if currency_cue else _STATED_RE
    for currency, before, number, gap, code, word in pattern.findall(text):
        magnitude = ""
        if before:  # "€m 40": the magnitude before the number, unless one follows it
            folded = before.casefold()
            magnitude = _LETTERS.get(folded) or _MAGNITUDE_OF.get(folded, "")
        if word:
            folded = "".join(word.casefold().split())  # "per cent": one word
            if folded in _PERCENT_WORDS or folded.startswith("percent"):
                magnitude = PERCENT
            else:
                apart = currency or code or not gap or word == "MM"
                letters = _LETTERS.get(folded, "") if apart else ""
                named = _MAGNITUDE_OF.get(folded, "") or letters
                if not named and folded not in _JOINING and word[0].islower():
                    magnitude = ""  # "£m 52 weeks": a heading's scale, not this number's
                magnitude = named or magnitude
                if (
                    not magnitude
                    and worded
                    and folded not in _JOINING
                    and (word[0].islower() or _DASH_RE.search(gap))
                ):
                    magnitude = WORDED
        found.append((number.replace(",", ""), magnitude))
    return found


def numbers_in(text: str) -> list[str]:
    """The numbers written in ``text`` in order, thousands separators removed."""
    return [match.replace(",", "") for match in _NUMBER_RE.findall(text)]


@dataclass(frozen=True, slots=True)
class StatedValue:
    """A found fact's stored value with the magnitude it may be written with: ``million`` for
    a figure stored at that scale, :data:`PERCENT` for a percentage, ``""`` for a figure in
    units or at a scale its source never stated (no scale word may be added to it)."""

    value: Decimal
    magnitude: str = ""


_PERCENT_UNITS = frozenset({"%", "percent"})


def fact_magnitude(scale: Scale | None, unit: str | None, *, percent: bool = False) -> str:
    """The magnitude a stored figure may be written with: :data:`PERCENT` for a percentage
    (unit ``%`` or ``percent``, or ``percent``: a metric of that kind), the scale's word for
    one stored at a thousand, a million or a billion, and ``""`` (no scale word) for one in
    units or at a scale its source never stated."""
    if percent or (unit or "").casefold() in _PERCENT_UNITS:
        return PERCENT
    if scale in SCALE_WORDS:
        return scale.value
    return ""


def is_percent(glossary: Glossary, metric: str | None) -> bool:
    """Whether ``metric`` is a percentage metric of ``glossary`` (its values are written in
    percent whatever their unit)."""
    term = glossary.metrics.terms.get(metric) if metric is not None else None
    return term is not None and term.kind is MetricKind.PERCENT


def supported_at(number: str, magnitude: str, seen: Mapping[str, set[str]]) -> bool:
    """Whether ``number`` written at ``magnitude`` is supported by ``seen`` (each evidence
    number -> the magnitudes it is written with there: ``""`` for bare, which supports any;
    :data:`WORDED` for one followed by another word, which supports none)."""
    found = seen.get(number)
    if found is None:
        return False
    return not magnitude or "" in found or magnitude in found


def evidence_magnitudes(texts: Iterable[str]) -> dict[str, set[str]]:
    """Each number of ``texts`` -> the magnitudes it is written with there (``""`` bare,
    :data:`WORDED` before another word): what :func:`supported_at` reads."""
    seen: dict[str, set[str]] = {}
    for evidence in texts:
        for number, magnitude in stated_numbers(evidence, worded=True):
            seen.setdefault(number, set()).add(magnitude)
    return seen


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
    """Check every number in ``text`` against the numbers of ``evidence_texts``: a number is
    unsupported when no evidence text holds it, or when its magnitude contradicts every one
    that does (see the module docstring)."""
    seen = evidence_magnitudes(evidence_texts)
    stated = stated_numbers(text)
    return GuardReport(
        tuple(n for n, _ in stated),
        tuple(n for n, magnitude in stated if not supported_at(n, magnitude, seen)),
    )


def unsupported_numbers(
    text: str, evidence_texts: Iterable[str], facts: Collection[StatedValue | Decimal] = ()
) -> list[str]:
    """The numbers of ``text`` (in order, repeats kept) that neither ``evidence_texts`` nor a
    found fact's value (``facts``) supports at the magnitude they are written with."""
    seen = evidence_magnitudes(evidence_texts)
    return [
        n
        for n, magnitude in stated_numbers(text)
        if not supported_at(n, magnitude, seen) and not is_fact_value(n, facts, magnitude)
    ]


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
    fact_values: Collection[StatedValue | Decimal] = (),
) -> tuple[GuardDecision, ...]:
    """Decide for each of ``sentences`` whether it may be shown.

    ``evidence`` maps each marker the model was given to its child chunk's text; ``fact_values``
    are the stored values of found facts (a plain ``Decimal`` is a value with no magnitude). A
    sentence is dropped when it cites nothing, cites a marker ``evidence`` lacks, or states a
    number that none of its cited chunks holds (at its magnitude, see the module docstring) and
    that is no found fact's value at that magnitude. History and the model's own words are
    never evidence.
    """
    numbers_of: dict[int, dict[str, set[str]]] = {}
    facts = _fact_index(fact_values)
    decisions = []
    for position, sentence in enumerate(sentences, start=1):
        markers = sentence.markers
        if not markers:
            decisions.append(GuardDecision(position, GuardVerdict.UNCITED, markers))
            continue
        if any(marker not in evidence for marker in markers):
            decisions.append(GuardDecision(position, GuardVerdict.UNKNOWN_SOURCE, markers))
            continue
        cited = []
        for marker in markers:
            found = numbers_of.get(marker)
            if found is None:
                found = numbers_of[marker] = evidence_magnitudes([evidence[marker]])
            cited.append(found)
        missing = [
            n
            for n, magnitude in stated_numbers(sentence.text)
            if not any(supported_at(n, magnitude, seen) for seen in cited)
            and not is_fact_value(n, facts, magnitude)
        ]
        verdict = GuardVerdict.UNSUPPORTED_NUMBER if missing else GuardVerdict.KEPT
        decisions.append(GuardDecision(position, verdict, markers, len(missing)))
    return tuple(decisions)


_FactIndex = dict[Decimal, set[str]]


def _fact_index(values: Collection[StatedValue | Decimal] | _FactIndex) -> _FactIndex:
    """Each found fact's value -> the magnitudes it may be written with."""
    if isinstance(values, dict):
        return values
    index: _FactIndex = {}
    for fact in values:
        stated = fact if isinstance(fact, StatedValue) else StatedValue(fact)
        index.setdefault(stated.value, set()).add(stated.magnitude)
    return index


def is_fact_value(
    number: str, facts: Collection[StatedValue | Decimal] | _FactIndex, magnitude: str = ""
) -> bool:
    """Whether ``number`` (as :func:`numbers_in` reads it) written at ``magnitude`` is one of
    ``facts``: equal to its value, and with no magnitude or the fact's own (a plain
    ``Decimal`` has none: ``5 million`` is not the fact ``5``)."""
    if not facts:
        return False
    try:
        value = Decimal(number)
    except InvalidOperation:  # "1.2.3" is a number to the guard but not a decimal
        return False
    magnitudes = _fact_index(facts).get(value)
    return magnitudes is not None and (not magnitude or magnitude in magnitudes)
