"""Question-answering evaluation on TAT-QA and ConvFinQA through ``Workspace.ask``.

The runner ingests the file into a scratch workspace, asks every question with the question's
document as the entity context (narrative search limited to that document's paragraphs) and
scores each answer:

- the predicted numbers are the answer's figures (a computed figure when there is one, else
  the facts it found); a narrative answer's text is its cited sentences;
- numbers match when equal after rounding to two decimals (the published TAT-QA
  normalisation: ``$``, ``,`` and ``%`` removed, ``(x)`` negative); a figure whose scale is
  stated and differs from the gold scale does not match; a text answer is exact when its
  normalised text (lower case, punctuation and articles removed) equals a gold span, and its
  token F1 is kept as ``f1``;
- ``fabricated`` counts answers holding a number that is neither a stored fact, nor computed
  from stored facts, nor in a cited chunk, nor in the question, or one written with a scale
  word its source does not have (:func:`fabricated_numbers`);
  ``citation_invalid`` counts answers with a number its own markers do not support;
- ``route_correct``: ``answer_from`` ``table`` wants the structured route, ``text`` the
  narrative one, ``table-text`` either structured or composite.

ConvFinQA: the first turn of each dialogue and every later turn answerable without earlier
answers, scored against its executed answer (execution accuracy: equal after rounding to two
decimals); each filing page is its own entity (``ingest convfinqa --entities filing``), the
way each TAT-QA table is.
"""

from __future__ import annotations

import json
import re
import string
import tempfile
from collections import Counter
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from decimal import Decimal, InvalidOperation, localcontext
from fractions import Fraction
from pathlib import Path
from typing import TYPE_CHECKING, Any

from ragspine.answer.guard import (
    PERCENT,
    evidence_magnitudes,
    fact_magnitude,
    is_percent,
    numbers_in,
    stated_numbers,
    supported_at,
)
from ragspine.answer.options import AskOptions
from ragspine.answer.question import Operation, read_question
from ragspine.answer.types import Answer, AnswerStatus, FigureKind
from ragspine.errors import ConfigError, RagSpineError
from ragspine.narrative.filters.expr import parse_filter
from ragspine.security import PUBLIC
from ragspine.stores.facts import FactStore
from ragspine.structured.convfinqa import _FILING_ID, filing_entity, load_filings
from ragspine.structured.facts import Scale
from ragspine.structured.numbers import shown
from ragspine.structured.tatqa import entity_code, load_tatqa

if TYPE_CHECKING:
    from ragspine.glossary import Glossary
    from ragspine.workspace import Workspace

DATASETS = ("tatqa", "convfinqa")
COUNTS = (
    "questions",
    "answered",
    "exact",
    "refused",
    "wrong",
    "wrong_sign_only",
    "inexact",
    "fabricated",
    "citation_invalid",
    "route_correct",
    "span_in_citation",
)
_PERIOD_YEAR = re.compile(r"(\d{4})")
_PERIOD_TEXT = re.compile(r"\bFY\d{4}(?:-[QH]\d)?\b|\b\d{4}-\d{2}\b")
_ARTICLES = re.compile(r"\b(a|an|the)\b")


@dataclass(frozen=True, slots=True)
class QAItem:
    """One question: its text, gold answer and the document (entity) it is about."""

    qid: str
    question: str
    gold: tuple[str, ...]
    answer_type: str
    answer_from: str
    scale: str
    entity: str
    document: str
    percent_as_fraction: bool = False
    """The gold writes a percentage as a fraction (ConvFinQA's executed ``divide``: 0.3477
    for 34.77 %)."""


@dataclass(slots=True)
class Outcome:
    """How one question went."""

    item: QAItem
    status: str
    route: str
    predicted: tuple[str, ...]
    exact: bool
    wrong: bool
    f1: float
    fabricated: tuple[str, ...]
    citation_invalid: bool
    route_correct: bool
    span_in_citation: bool
    derivation: str = ""
    sign_only: bool = False
    """Wrong only in sign (the dataset reads a bracketed expense as its magnitude)."""


@dataclass(slots=True)
class QAReport:
    """Counts overall and by type (``type:<answer_type>`` and ``from:<answer_from>``)."""

    dataset: str
    outcomes: list[Outcome] = field(default_factory=list)

    def _group(self, outcomes: Iterable[Outcome]) -> dict[str, float | int]:
        chosen = list(outcomes)
        counts: Counter[str] = Counter()
        f1 = 0.0
        for o in chosen:
            counts["questions"] += 1
            answered = o.status == AnswerStatus.ANSWERED.value
            counts["answered"] += answered
            counts["refused"] += not answered
            counts["exact"] += o.exact
            counts["wrong"] += o.wrong
            counts["wrong_sign_only"] += o.wrong and o.sign_only
            counts["inexact"] += answered and not o.exact and not o.wrong
            counts["fabricated"] += bool(o.fabricated)
            counts["citation_invalid"] += o.citation_invalid
            counts["route_correct"] += o.route_correct
            counts["span_in_citation"] += o.span_in_citation
            f1 += o.f1
        shown: dict[str, float | int] = {name: counts[name] for name in COUNTS}
        total = counts["questions"]
        shown["exact_rate"] = round(counts["exact"] / total, 4) if total else 0.0
        shown["f1"] = round(f1 / total, 4) if total else 0.0
        answered_count = counts["answered"]
        shown["wrong_rate_of_answered"] = (
            round(counts["wrong"] / answered_count, 4) if answered_count else 0.0
        )
        return shown

    def to_dict(self) -> dict[str, Any]:
        by_type: dict[str, dict[str, float | int]] = {}
        keys = sorted(
            {f"type:{o.item.answer_type}" for o in self.outcomes}
            | {f"from:{o.item.answer_from}" for o in self.outcomes}
        )
        for key in keys:
            kind, value = key.split(":", 1)
            by_type[key] = self._group(
                o
                for o in self.outcomes
                if (o.item.answer_type if kind == "type" else o.item.answer_from) == value
            )
        return {
            "dataset": self.dataset,
            "overall": self._group(self.outcomes),
            "by_type": by_type,
        }


# --- loading ----------------------------------------------------------------------------------


def _gold_texts(answer: object) -> tuple[str, ...]:
    if isinstance(answer, list):
        return tuple(str(a) for a in answer)
    return (str(answer),)


def tatqa_items(documents: Sequence[Mapping[str, Any]]) -> list[QAItem]:
    """Every question of TAT-QA ``documents``, in file order."""
    items = []
    for document in documents:
        uid = str(document["table"]["uid"]).strip()
        questions = document.get("questions", [])
        if not isinstance(questions, list) or not all(_is_question(q) for q in questions):
            raise ConfigError(
                f"TAT-QA document {shown(uid)}: 'questions' must be a list of objects, each "
                "with a 'question' string and an 'answer' (a string, a number or a list of "
                "them), and 'answer_type' / 'answer_from' strings when given; nothing was scored"
            )
        for q in questions:
            items.append(
                QAItem(
                    str(q.get("uid", "")),
                    str(q["question"]),
                    _gold_texts(q.get("answer", "")),
                    str(q.get("answer_type", "")),
                    str(q.get("answer_from", "")),
                    str(q.get("scale", "")),
                    entity_code(uid),
                    uid,
                )
            )
    return items


def _is_question(q: object) -> bool:
    """Whether ``q`` is a TAT-QA question record the evaluation can score."""
    if not isinstance(q, Mapping) or not isinstance(q.get("question"), str):
        return False
    answer = q.get("answer")
    answers = answer if isinstance(answer, list) else [answer]
    scalar = (str, int, float)
    return (
        bool(answers)
        and all(isinstance(a, scalar) and not isinstance(a, bool) for a in answers)
        and all(isinstance(q.get(key, ""), str) for key in ("answer_type", "answer_from", "scale"))
    )


def convfinqa_items(filings: Sequence[Mapping[str, Any]]) -> list[QAItem]:
    """Every ConvFinQA turn answerable without earlier answers, with its executed answer: the
    first turn of each dialogue (type ``first-turn``) and each later turn that
    :func:`standalone_turn` accepts (type ``standalone-turn``)."""
    items = []
    for filing in filings:
        dialogue = filing.get("dialogue") or {}
        questions = dialogue.get("conv_questions") if isinstance(dialogue, Mapping) else None
        answers = dialogue.get("executed_answers") if isinstance(dialogue, Mapping) else None
        if not (
            isinstance(dialogue, Mapping)
            and isinstance(questions or [], list)
            and isinstance(answers or [], list)
            and all(isinstance(q, str) for q in questions or [])
            and all(isinstance(a, (str, int, float)) for a in answers or [])
        ):
            raise ConfigError(
                f"ConvFinQA filing {shown(str(filing['id']))}: 'dialogue' must be an object "
                "whose 'conv_questions' is a list of strings and 'executed_answers' a list of "
                "numbers; nothing was scored"
            )
        questions, answers = questions or [], answers or []
        match = _FILING_ID.match(str(filing["id"]))
        if not questions or not answers or match is None:
            continue
        for turn, (question, answer) in enumerate(zip(questions, answers, strict=False)):
            if turn and not standalone_turn(str(question)):
                continue
            items.append(
                QAItem(
                    f"{filing['id']}#{turn}",
                    str(question),
                    (str(answer),),
                    "first-turn" if turn == 0 else "standalone-turn",
                    "table",
                    "",
                    filing_entity(str(filing["id"])),
                    str(filing["id"]),
                    percent_as_fraction=True,
                )
            )
    return items


_CONTINUES = re.compile(
    r"^(?:and|so|then|also|but|or|what about|how about|now|in that|of that|from that"
    r"|considering)\b"
)
_REFERS_BACK = re.compile(
    r"\b(?:this|these|those|it|its|they|them|their|then|the two|again|above|previous|prior"
    r"|former|latter|such|same|quotient|product|the (?:first|second)|that time"
    r"|(?:is|was|of|by|to|in|from|over) that|the sum including|the net difference"
    r"|the difference (?:divided|over|by)|that (?:year|period|value|amount|change|difference"
    r"|total|sum|ratio|percentage|number|net|divided|less|plus|times|minus))\b"
)
_GENERIC = frozenset(
    re.split(
        r"\s+",
        "what was were is are the a an of in on at for to from by and or value values amount "
        "amounts number change changes net sum total difference year years period over between "
        "during how much many did does do as percent percentage portion ratio rate average "
        "represent relation based compared decrease increase growth",
    )
)


def standalone_turn(question: str) -> bool:
    """Whether a later dialogue turn can be answered without the earlier answers, judged from
    its text alone (conservatively: it must not continue (``and in 2007?``), refer back
    (``that``, ``the two years``, ``the quotient``) or name nothing but generic words
    (``what is the net change in value?``)). The dataset has no such mark; this rule selects
    108 of the 1,069 later dev turns."""
    text = question.casefold().strip()
    if _CONTINUES.search(text) or _REFERS_BACK.search(text):
        return False
    words = [w for w in re.findall(r"[a-z][a-z&'-]*", text) if w not in _GENERIC]
    return len(words) >= 2


# --- scoring ----------------------------------------------------------------------------------


def gold_number(text: str) -> Decimal | None:
    """A gold answer read as a number the way TAT-QA normalises it, or None."""
    cleaned = text.strip().replace(",", "").replace("$", "").replace("%", "").strip()
    cleaned = cleaned.replace("\u2212", "-")  # the typographic minus sign some gold answers use
    negative = cleaned.startswith("(") and cleaned.endswith(")")
    cleaned = cleaned.strip("()").strip()
    try:
        value = Decimal(cleaned)
    except InvalidOperation:
        return None
    if not value.is_finite():
        return None
    return -value if negative else value


def _decimal(value: Decimal | Fraction) -> Decimal:
    """``value`` as a decimal (a fraction divided out at the current precision)."""
    if isinstance(value, Decimal):
        return value
    return Decimal(value.numerator) / Decimal(value.denominator)


def _quantized(exact: Decimal, places: str) -> Decimal:
    """``exact`` rounded to ``places`` (``"0.01"``) with as many digits as that needs: a
    30-digit figure or 1e39 overflows the default 28."""
    with localcontext() as context:
        context.prec = max(context.prec, exact.adjusted() + 4)
        return exact.quantize(Decimal(places))


def _round(value: Decimal | Fraction) -> Decimal:
    return _quantized(_decimal(value), "0.01")


def normalise_text(text: str) -> str:
    """Lower case, punctuation and articles removed, white space collapsed."""
    lowered = text.casefold()
    lowered = "".join(" " if ch in string.punctuation or ch == "\u2019" else ch for ch in lowered)
    return " ".join(_ARTICLES.sub(" ", lowered).split())


def token_f1(predicted: str, gold: str) -> float:
    """Bag-of-tokens F1 of two normalised texts."""
    p, g = normalise_text(predicted).split(), normalise_text(gold).split()
    common = sum((Counter(p) & Counter(g)).values())
    if not common:
        return 0.0
    precision, recall = common / len(p), common / len(g)
    return 2 * precision * recall / (precision + recall)


_ASKED = {
    Operation.CHANGE: FigureKind.CHANGE,
    Operation.PERCENT_CHANGE: FigureKind.PERCENT_CHANGE,
    Operation.AVERAGE: FigureKind.AVERAGE,
    Operation.SUM: FigureKind.SUM,
    Operation.COUNT_PERIODS: FigureKind.COUNT,
    Operation.SHARE: FigureKind.SHARE,
    Operation.RATIO: FigureKind.RATIO,
}


def predicted_numbers(
    answer: Answer, asked: Operation | None = None
) -> list[tuple[Fraction, Scale | None, str]]:
    """The numbers an answer gives: its computed figures of the kind the question asked for
    (``asked``, read from the question the way the router reads it: every one, a share per
    year asked; the last computed figure when none is of that kind), else the facts it
    found."""
    for figure in answer.figures:
        if figure.kind is FigureKind.PERIODS:  # a period is answered by its (fiscal) year
            years = [_PERIOD_YEAR.search(p) for p in figure.periods]
            return [(Fraction(int(y[1])), None, "") for y in years if y is not None]
    computed = [f for f in answer.figures if f.kind is not FigureKind.FACT and f.value is not None]
    wanted = [f for f in computed if asked is not None and f.kind is _ASKED.get(asked)]
    chosen = wanted or computed[-1:]  # one per period or pair asked ("... in 2017 and 2018")
    if chosen:
        return [(f.value.value, f.scale, f.unit or "") for f in chosen if f.value is not None]
    found = []
    for figure in answer.figures:
        result = figure.result
        if result is not None and result.value is not None:
            unit = result.unit or ""
            found.append((Fraction(result.value), result.scale, unit))
    return found


_GOLD_SCALES = {"thousand": Scale.THOUSAND, "million": Scale.MILLION, "billion": Scale.BILLION}


def score_numbers(
    predicted: list[tuple[Fraction, Scale | None, str]],
    gold: Sequence[str],
    gold_scale: str,
    *,
    percent_as_fraction: bool = False,
) -> bool:
    """Whether the predicted numbers equal the gold ones (as a set, rounded to 2 decimals);
    ``percent_as_fraction``: that gold writes a percentage as a fraction, so predicted
    percentages are compared with it times 100 (0.34769 as 34.77 %)."""
    golds = [gold_number(g) for g in gold]
    if not predicted or any(g is None for g in golds):
        return False
    wanted = _GOLD_SCALES.get(gold_scale)
    for _, scale, _ in predicted:
        if wanted is not None and scale not in (None, Scale.ONE, Scale.UNKNOWN, wanted):
            return False
    shown = {_round(g) for g in golds if g is not None}
    if percent_as_fraction and all(unit == "%" for _, _, unit in predicted):
        shown = {_round(g * 100) for g in golds if g is not None}
    return {_round(v) for v, _, _ in predicted} == shown


# --- fabrication and citations -------------------------------------------------------------


_Seen = dict[str, set[str]]
"""Numbers a source holds -> the magnitudes each may be written with there, as
:func:`~ragspine.answer.guard.supported_at` reads them: ``""`` for a bare number of a chunk or
the question (a table cell under its heading: any magnitude), :data:`_NO_SCALE` for a figure
in units or at a scale its source never stated (no scale word)."""
_NO_SCALE = "none"


def _seen(numbers: Iterable[str], magnitude: str) -> _Seen:
    return {number: {magnitude} for number in numbers}


def _figure_seen(numbers: Iterable[str], magnitude: str) -> _Seen:
    """A stored or computed figure's numbers: its own magnitude only, no scale word when it
    has none."""
    return _seen(numbers, magnitude or _NO_SCALE)


def _merged(*seen: _Seen) -> _Seen:
    merged: _Seen = {}
    for one in seen:
        for number, magnitudes in one.items():
            merged.setdefault(number, set()).update(magnitudes)
    return merged


def _magnitude(
    scale: Scale | None, unit: str | None, metric: str, glossary: Glossary | None
) -> str:
    percent = glossary is not None and is_percent(glossary, metric)
    return fact_magnitude(scale, unit, percent=percent)


def _fact_numbers(answer: Answer, facts: FactStore, glossary: Glossary | None) -> dict[int, _Seen]:
    """Per fact marker, the numbers of the stored fact it cites at the fact's magnitude (empty
    when not stored)."""
    found: dict[int, _Seen] = {}
    for source in answer.sources:
        if source.fact is None:
            continue
        stored = facts.lookup(source.fact, max_level=PUBLIC.clearance)
        found[source.marker] = (
            {}
            if stored is None
            else _figure_seen(
                _renderings(stored.value),
                _magnitude(stored.scale, stored.unit, source.fact.metric, glossary),
            )
        )
    return found


_ROW_NAMES = re.compile(
    r", row \d+ (?P<q1>['\"])(?P<label>.*?)(?P=q1)(?: under (?P<q2>['\"])(?P<heading>.*?)(?P=q2))?"
)


def _whole(names: Sequence[str]) -> re.Pattern[str] | None:
    """A pattern of ``names`` each as a whole, never digits inside a number; longest first."""
    if not names:
        return None
    ordered = sorted(set(names), key=len, reverse=True)
    return re.compile(rf"(?<![0-9A-Za-z])(?:{'|'.join(map(re.escape, ordered))})(?![0-9A-Za-z])")


def _cited_names(answer: Answer) -> dict[int, list[str]]:
    """Per fact marker, the row label and heading its locator quotes (``Notes due 2025``):
    names a sentence citing it may write, never figures, and only where written whole."""
    names: dict[int, list[str]] = {}
    for source in answer.sources:
        where = source.source_locator if isinstance(source.source_locator, str) else ""
        found = _ROW_NAMES.search(where) if source.fact is not None else None
        if found is not None:
            said = [found["label"], found["heading"] or ""]
            names[source.marker] = [n for n in said if n]
    return names


def _renderings(value: Decimal | Fraction) -> set[str]:
    exact = _decimal(value)
    forms = {format(exact, "f"), format(exact.normalize(), "f"), format(abs(exact), "f")}
    for places in ("0.01", "0.1", "1"):
        rounded = _quantized(exact, places)
        forms |= {format(rounded, "f"), format(abs(rounded), "f")}
    return {f.lstrip("-") for f in forms} | {f.rstrip("0").rstrip(".") for f in forms if "." in f}


def _computed_numbers(answer: Answer, facts: FactStore, glossary: Glossary | None) -> _Seen:
    """Numbers of computed figures whose every input is a stored fact with the same value, each
    at its figure's magnitude (an input at its fact's; a count, a fraction's terms at none)."""
    numbers: _Seen = {}
    for figure in answer.figures:
        if figure.kind is FigureKind.FACT or figure.value is None or not figure.inputs:
            continue
        stored = facts.lookup_many([i.key for i in figure.inputs], max_level=PUBLIC.clearance)
        if all(
            i.key in stored and stored[i.key].value == i.value for i in figure.inputs
        ) and _recomputes(
            figure.value.value, [Fraction(i.value) for i in figure.inputs], figure.kind
        ):
            exact = figure.value.value  # shown as "exactly 200/7" when not a finite decimal
            inputs = [
                _magnitude(i.stored.scale, i.stored.unit, i.metric, glossary) for i in figure.inputs
            ]
            # a change, sum or average of percentages is written in percent too
            own = fact_magnitude(figure.scale, figure.unit)
            percents = {PERCENT} if figure.kind in _IN_KIND and PERCENT in inputs else set()
            numbers = _merged(
                numbers,
                {n: {own or _NO_SCALE, *percents} for n in _renderings(exact)},
                _figure_seen({str(abs(exact.numerator)), str(exact.denominator)}, ""),
                *(
                    _figure_seen(_renderings(i.value), magnitude)
                    for i, magnitude in zip(figure.inputs, inputs, strict=True)
                ),
                _figure_seen({str(len(figure.inputs))}, ""),  # "/ 2" of an average
            )
    return numbers


def _recomputes(value: Fraction, inputs: list[Fraction], kind: FigureKind) -> bool:
    """Whether ``value`` is a basic operation (sum, difference, average, ratio, change in
    percent; a percentage change also down) of the ``inputs``, or for a count a whole number of
    them at most: a computed number must come from its inputs."""
    if kind is FigureKind.COUNT:
        return value.denominator == 1 and 0 <= value <= len(inputs)
    if kind is FigureKind.ROWS:
        return value == len(inputs)
    candidates = {sum(inputs, Fraction(0)), sum(inputs, Fraction(0)) / len(inputs)}
    for a in inputs:
        for b in inputs:
            candidates |= {a - b}
            if b:
                candidates |= {a / b, (a - b) / b, 100 * a / b, 100 * (a - b) / b}
                if kind is FigureKind.PERCENT_CHANGE:  # "the percentage decrease": b less a
                    candidates |= {(b - a) / b, 100 * (b - a) / b}
    return value in candidates


_IN_KIND = frozenset({FigureKind.CHANGE, FigureKind.SUM, FigureKind.AVERAGE})
"""Computations whose result is in the unit of their inputs."""


def fabricated_numbers(
    answer: Answer,
    question: str,
    facts: FactStore,
    chunk_texts: Mapping[int, str],
    extra_allowed: Iterable[str] = (),
    glossary: Glossary | None = None,
) -> tuple[list[str], bool]:
    """``(fabricated, citation_invalid)`` for one answer.

    A number of the answer's sentences is fabricated when it is none of: a stored fact's value
    (cited), a number computed from stored facts, a number in a cited chunk (``chunk_texts``:
    marker -> text), a number of the question, a year of a period label or ``extra_allowed``
    (entity and metric names the answer writes). A scale word or ``%`` written after a number
    (:func:`~ragspine.answer.guard.stated_numbers`) must be its source's own: the stored fact's
    or the computed figure's scale (none for units or an unstated scale), or the chunk's (a
    bare number there, a cell under its heading, allows any). A citation is invalid when a
    sentence's number is not supported by that sentence's own markers.
    """
    # Glossary names the answer suggests ("2018: Gross margin") are names, not figures.
    extra_allowed = [*extra_allowed, *answer.suggestions]
    by_fact = _fact_numbers(answer, facts, glossary)
    cited_names = _cited_names(answer)
    computed = _computed_numbers(answer, facts, glossary)
    chunk_numbers = {marker: evidence_magnitudes([text]) for marker, text in chunk_texts.items()}
    base = _seen((n for t in (question, *extra_allowed) for n in numbers_in(t)), "")
    every_source = _merged(computed, *by_fact.values(), *chunk_numbers.values())
    names = _whole(extra_allowed)
    fabricated: list[str] = []
    invalid = False
    for sentence in answer.sentences:
        text = _PERIOD_TEXT.sub(" ", sentence.text)
        if names is not None:
            text = names.sub(" ", text)
        cited = _whole([n for m in sentence.markers for n in cited_names.get(m, ())])
        if cited is not None:  # a listed row's own label ("Notes due 2025")
            text = cited.sub(" ", text)
        own = _merged(
            computed,
            *(by_fact.get(m, {}) for m in sentence.markers),
            *(chunk_numbers.get(m, {}) for m in sentence.markers),
        )
        for number, magnitude in stated_numbers(text):
            if supported_at(number, magnitude, base):
                continue
            if not supported_at(number, magnitude, every_source):
                fabricated.append(number)
            if not supported_at(number, magnitude, own):
                invalid = True
    return fabricated, invalid


# --- running --------------------------------------------------------------------------------


def _chunk_texts(workspace: Workspace, answer: Answer) -> dict[int, str]:
    wanted = {s.marker: s.chunk_id for s in answer.sources if s.chunk_id}
    if not wanted:
        return {}
    keys = workspace.chunks.keys_of(list(wanted.values()))
    chunks = workspace.chunks.chunks_by_key(list(keys.values()))
    texts: dict[int, str] = {}
    for marker, chunk_id in wanted.items():
        key = keys.get(chunk_id)
        if key is not None and key in chunks:
            texts[marker] = chunks[key].text
    return texts


_ROUTES = {
    "table": {"structured"},
    "text": {"narrative"},
    "table-text": {"structured", "composite"},
}


def score_answer(
    workspace: Workspace, item: QAItem, answer: Answer, label: str, names: Sequence[str] = ()
) -> Outcome:
    """Score one answer against its gold (see the module docstring)."""
    with localcontext() as context:
        # every figure the numeric grammar stores (30 significant digits, magnitudes to 1e39)
        # and their sums compare exactly: 28 digits would round them into "fabricated" ones
        context.prec = _SCORING_DIGITS
        return _score(workspace, item, answer, label, names)


_SCORING_DIGITS = 100


def _score(
    workspace: Workspace, item: QAItem, answer: Answer, label: str, names: Sequence[str]
) -> Outcome:
    answered = answer.status is AnswerStatus.ANSWERED
    asked = read_question(item.question, workspace.glossary).operation
    numbers = predicted_numbers(answer, asked) if answered else []
    numeric_gold = all(gold_number(g) is not None for g in item.gold)
    sentences = " ".join(s.text for s in answer.sentences)
    exact = False
    wrong = False
    f1 = 0.0
    sign_only = False
    if answered and numbers and numeric_gold:
        exact = score_numbers(
            numbers, item.gold, item.scale, percent_as_fraction=item.percent_as_fraction
        )
        wrong = not exact
        sign_only = wrong and score_numbers(
            [(abs(v), scale, unit) for v, scale, unit in numbers],
            [g.lstrip("-(").rstrip(")") for g in item.gold],
            item.scale,
            percent_as_fraction=item.percent_as_fraction,
        )
        f1 = 1.0 if exact else 0.0
    elif answered and item.answer_type == "multi-span" and not numeric_gold:
        # the official multi-span match: the answer's spans (its sentences) equal the gold's
        spans = {normalise_text(s.text) for s in answer.sentences}
        exact = spans == {normalise_text(g) for g in item.gold}
        f1 = 1.0 if exact else max(token_f1(sentences, g) for g in item.gold)
    elif answered:
        first = answer.sentences[0].text if answer.sentences else answer.text
        exact = any(normalise_text(first) == normalise_text(g) for g in item.gold)
        f1 = max(token_f1(sentences, g) for g in item.gold)
        wrong = numeric_gold and not exact and item.answer_type != "span"
    in_citation = answered and all(
        normalise_text(g) in normalise_text(sentences) for g in item.gold
    )
    fabricated, invalid = fabricated_numbers(
        answer,
        item.question,
        workspace.facts,
        _chunk_texts(workspace, answer),
        (label, *names),
        workspace.glossary,
    )
    predicted = tuple(str(_round(v)) for v, _, _ in numbers) or (
        (sentences[:200],) if answered else ()
    )
    derivation = "; ".join(f.text for f in answer.figures if f.kind is not FigureKind.FACT)
    return Outcome(
        item,
        answer.status.value,
        answer.route,
        predicted,
        exact,
        wrong,
        f1,
        tuple(fabricated),
        invalid,
        answer.route in _ROUTES.get(item.answer_from, {answer.route}),
        in_citation,
        derivation,
        sign_only,
    )


def _load(dataset: str, path: Path) -> tuple[list[QAItem], Any]:
    if dataset == "tatqa":
        documents = load_tatqa(path)
        return tatqa_items(documents), documents
    if dataset == "convfinqa":
        filings = load_filings(path)
        return convfinqa_items(filings), filings
    raise ConfigError(f"unknown dataset {dataset!r}: use one of {', '.join(DATASETS)}")


def run_qa_eval(
    dataset: str,
    path: Path,
    *,
    limit: int | None = None,
    workspace_dir: Path | None = None,
    progress: Callable[[int, int], None] | None = None,
) -> QAReport:
    """Ingest ``path`` into a scratch workspace and ask its questions (see the module
    docstring); ``limit`` keeps the first N questions (and ingests only their documents);
    ``progress(done, total)`` follows the questions asked."""
    if limit is not None and limit < 1:
        raise ConfigError(f"--limit must be a whole number >= 1, got {limit}")
    items, _ = _load(dataset, path)
    if limit is not None:
        items = items[:limit]
    with tempfile.TemporaryDirectory(prefix="ragspine-eval-") as scratch:
        from ragspine.workspace import Workspace

        folder = workspace_dir or Path(scratch) / "ws"
        source = Path(scratch) / path.name
        wanted = {i.document for i in items}
        _, raw = _load(dataset, path)
        if dataset == "tatqa":
            kept = [d for d in raw if str(d["table"]["uid"]).strip() in wanted]
        else:
            kept = [f for f in raw if str(f["id"]) in wanted]
        source.write_text(json.dumps(kept), "utf-8")
        report = QAReport(dataset)
        with Workspace.open(folder, create=True) as workspace:
            library = None
            if dataset == "tatqa":
                workspace.ingest_tatqa(source)
                library = "tatqa"
            else:  # each question is about its own filing page, as in TAT-QA
                workspace.ingest_convfinqa(source, entities="filing", library=None)
            glossary = workspace.glossary
            names = [  # glossary names holding digits ("2018: Gross margin") are not figures
                spelling
                for term in glossary.metrics.terms.values()
                for spelling in (term.label, *term.aliases)
                if any(ch.isdigit() for ch in spelling)
            ]
            for item in items:
                entity = glossary.entities.resolve(item.entity) or item.entity
                options = AskOptions(
                    entity=entity,
                    libraries=(library,) if library else None,
                    filters=parse_filter({"entity": entity}) if library else None,
                )
                term = glossary.entities.terms.get(entity)
                label = term.label if term is not None else item.entity
                try:
                    answer = workspace.ask(item.question, options, principal=PUBLIC)
                except RagSpineError as exc:
                    answer = Answer("error", notes=(str(exc),))
                report.outcomes.append(score_answer(workspace, item, answer, label, names))
                if progress is not None:
                    progress(len(report.outcomes), len(items))
    return report
