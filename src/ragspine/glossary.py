"""Controlled vocabularies (metrics, entities, channels) and the fiscal calendar, from TOML.

Matching is exact after normalization (:func:`ragspine.analysis.match_key`: NFKC, case folding,
invisible characters dropped, white space collapsed) and never a guess; finding terms inside free
text respects word boundaries, so ``cn`` never matches in ``concern``. Labels and aliases are
stored and shown in their display form (:func:`ragspine.text.display_text`, NFC).

A glossary file looks like::

    [calendar]
    fiscal_year_start_month = 1

    [metrics.revenue]
    label = "Revenue"
    aliases = ["sales", "turnover"]
    unit = "USD"
    kind = "currency"

    [metrics.gross_margin]
    label = "Gross margin"
    unit = "%"
    kind = "percent"
    derivation = "(revenue - cogs) / revenue * 100"   # metric codes: see ragspine.graph.expr

    [entities.acme]
    label = "ACME Corp"
    aliases = ["ACME"]
    parent = "acme_group"

    [channels.online]
    label = "Online"
    aliases = ["e-commerce"]

    [cues]                        # explanation cue words per language (route selection of ask)
    en = ["why", "explain", "driver"]
    it = ["perché", "motivo", "causa"]

    [answers]                     # workspace defaults of ``ask``
    locale = "it"                 # fixed texts and number format: en or it
    default_entity = "acme"       # the entity a question that names none is about

Without a ``[cues]`` section the built-in :data:`DEFAULT_CUES` (English and Italian) apply.
"""

from __future__ import annotations

import re
import tomllib
from collections.abc import Collection, Iterable, Mapping
from dataclasses import dataclass, field
from enum import StrEnum
from functools import lru_cache
from pathlib import Path
from typing import Any

from ragspine.analysis import match_key
from ragspine.errors import GlossaryError, quote_input
from ragspine.graph.expr import Expression, parse_expression
from ragspine.graph.hierarchy import find_cycle
from ragspine.text import closest, display_text

DEFAULT_CHANNEL = "total"

ANSWER_LOCALES = ("en", "it")
"""The locales ``ask`` has fixed texts for (the table is in :mod:`ragspine.answer.locale`)."""

DEFAULT_CUES: Mapping[str, tuple[str, ...]] = {
    "en": (
        "why",
        "explain",
        "explains",
        "explained",
        "driver",
        "drivers",
        "drove",
        "driven",
        "cause",
        "causes",
        "caused",
        "reason",
        "reasons",
        "because",
        "due to",
        "what happened",
        "led to",
        "lead to",
        "leads to",
        "leading to",
        "could result in",
        "would result in",
        "will result in",
        "may result in",
        "might result in",
        "results in",
        "resulted in",
        "resulting in",
    ),
    "it": (
        "perché",
        "perche",
        "motivo",
        "motivi",
        "causa",
        "cause",
        "ragione",
        "ragioni",
        "spiega",
        "spiegare",
        "dovuto",
        "dovuta",
        "come mai",
    ),
}
"""Explanation cue words per language, used when no glossary file has a ``[cues]`` section."""

_LANGUAGE = re.compile(r"^[a-z]{2,3}$")


class MetricKind(StrEnum):
    CURRENCY = "currency"
    PERCENT = "percent"
    COUNT = "count"
    RATIO = "ratio"
    NUMBER = "number"


class TermType(StrEnum):
    METRIC = "metric"
    ENTITY = "entity"
    CHANNEL = "channel"


@dataclass(frozen=True, slots=True)
class Term:
    """One vocabulary entry: a canonical code, a label and aliases."""

    type: TermType
    code: str
    label: str
    aliases: tuple[str, ...] = ()
    unit: str = ""
    kind: MetricKind = MetricKind.NUMBER
    parent: str | None = None
    derivation: Expression | None = None
    """How a metric is computed from other metrics (see :mod:`ragspine.graph.expr`)."""
    generated: bool = False
    """Defined by a glossary an importer generated (a table's row label, ``glossary.d/``),
    not by the hand-edited glossary: a name one source gave its row, not a concept the
    workspace defines."""

    def __post_init__(self) -> None:
        object.__setattr__(self, "label", display_text(self.label))
        object.__setattr__(self, "aliases", tuple(display_text(a) for a in self.aliases))

    def spellings(self) -> tuple[str, ...]:
        return (self.code, self.label, *self.aliases)


_CODE = re.compile(r"^[a-z0-9][a-z0-9_.\-]*$")


@dataclass(frozen=True, slots=True)
class Vocabulary:
    """The terms of one type, with an index from every normalized spelling to its code."""

    type: TermType
    terms: Mapping[str, Term]
    index: Mapping[str, str] = field(repr=False)

    def resolve(self, raw: str) -> str | None:
        """The code ``raw`` names exactly (after normalization), else ``None``."""
        return self.index.get(match_key(raw))

    def suggest(self, raw: str, limit: int = 3) -> list[str]:
        """Up to ``limit`` codes whose spellings are closest to ``raw``, closest first (for the
        user only); see :func:`ragspine.text.closest` for the rule and its tie-break."""
        return closest(raw, self.index.items(), limit=limit)


def entity_taken(
    code: str, name: str, known: Mapping[str, Term], new: Mapping[str, Term]
) -> str | None:
    """The name another document's entity already holds ``code`` under, when an importer made
    ``code`` from ``name`` (``acme.q`` and ``acme_q`` both become ``tatqa-acme-q``): its facts
    would merge with, or overwrite, that document's. None when the code is free or is
    ``name``'s own (its label or an alias: a document imported again). ``known``: the
    glossary's entity terms; ``new``: those made so far by the same import."""
    term = new.get(code) or known.get(code)
    if term is None or display_text(name) in (term.label, *term.aliases):
        return None  # a term's texts are stored in their display form
    return term.label


def name_taken(code: str, name: str, known: Vocabulary, spelled: Mapping[str, str]) -> str | None:
    """Another entity that ``name`` (a document's uid, a ticker) or the ``code`` an importer
    made from it already spells: a glossary entity whose label or alias it is (the ``ACME``
    of ``acme`` for a TAT-QA uid ``acme``, a ConvFinQA company ``IP`` for a uid ``ip``), or
    one made earlier by the same import (``spelled``: match key -> code). Its facts would merge
    with that entity's, or the glossary would refuse the two. None when free or ``code``'s
    own (a document imported again)."""
    for text in (name, code):
        key = match_key(text)
        owner = known.index.get(key) or spelled.get(key)
        if owner is not None and owner != code:
            return owner
    return None


def _build_vocabulary(term_type: TermType, terms: Iterable[Term]) -> Vocabulary:
    by_code: dict[str, Term] = {}
    index: dict[str, str] = {}
    for term in terms:
        if term.code in by_code:
            raise GlossaryError(f"{term_type} code {quote_input(term.code)} is defined twice")
        by_code[term.code] = term
        for spelling in term.spellings():
            key = match_key(spelling)
            if not key:
                raise GlossaryError(f"{term_type} {quote_input(term.code)} has an empty alias")
            owner = index.setdefault(key, term.code)
            if owner != term.code:
                raise GlossaryError(
                    f"alias {quote_input(spelling)} is claimed by two terms of kind {term_type}, "
                    f"{quote_input(owner)} and {quote_input(term.code)}: keep it on one of them"
                )
    return Vocabulary(term_type, by_code, index)


@dataclass(frozen=True, slots=True)
class TermHit:
    """A glossary term found inside free text.

    ``start`` and ``end`` index the text's matching form, ``match_key(text)``.
    """

    type: TermType
    code: str
    start: int
    end: int


@dataclass(frozen=True, slots=True)
class AnswerSettings:
    """The ``[answers]`` section: a workspace's defaults for ``ask``."""

    locale: str | None = None
    """``en`` or ``it``; ``None`` means English unless a call says otherwise."""
    default_entity: str | None = None
    """A spelling of the entity a question that names none is about (checked at load)."""


@dataclass(frozen=True, slots=True)
class Glossary:
    """Metrics, entities, channels and the fiscal calendar."""

    metrics: Vocabulary
    entities: Vocabulary
    channels: Vocabulary
    fiscal_year_start_month: int = 1
    cues: Mapping[str, tuple[str, ...]] = field(default_factory=dict)
    """Explanation cue words per language as declared (see :attr:`explanation_cues`)."""
    answers: AnswerSettings = field(default_factory=lambda: AnswerSettings())
    _index: _TermIndex | None = field(default=None, init=False, repr=False, compare=False)

    @classmethod
    def from_terms(
        cls,
        terms: Iterable[Term],
        *,
        fiscal_year_start_month: int = 1,
        check_references: bool = True,
        cues: Mapping[str, Iterable[str]] | None = None,
        answers: AnswerSettings | None = None,
    ) -> Glossary:
        """Build a glossary; the ``total`` channel is always present.

        ``check_references=False`` leaves parents and derivations that name terms of another
        file unchecked until the merged glossary is (see :meth:`check_references`).
        """
        by_type: dict[TermType, list[Term]] = {t: [] for t in TermType}
        for term in terms:
            by_type[term.type].append(term)
        if not any(t.code == DEFAULT_CHANNEL for t in by_type[TermType.CHANNEL]):
            by_type[TermType.CHANNEL].append(
                Term(TermType.CHANNEL, DEFAULT_CHANNEL, "Total", ("all channels", "overall"))
            )
        if not 1 <= fiscal_year_start_month <= 12:
            raise GlossaryError(
                f"fiscal_year_start_month must be 1..12, got {fiscal_year_start_month}"
            )
        glossary = cls(
            _build_vocabulary(TermType.METRIC, by_type[TermType.METRIC]),
            _build_vocabulary(TermType.ENTITY, by_type[TermType.ENTITY]),
            _build_vocabulary(TermType.CHANNEL, by_type[TermType.CHANNEL]),
            fiscal_year_start_month,
            _check_cues(cues or {}),
            answers or AnswerSettings(),
        )
        if check_references:
            glossary.check_references()
        return glossary

    def check_references(self) -> None:
        """Raise unless every parent and every metric a derivation names is defined, and
        neither parents nor derivations form a cycle."""
        for vocab in (self.entities, self.channels):
            for term in vocab.terms.values():
                if term.parent is not None and term.parent not in vocab.terms:
                    raise GlossaryError(
                        f"{vocab.type} {quote_input(term.code)} names unknown parent "
                        f"{quote_input(term.parent)}: define the parent {vocab.type} or remove "
                        "the parent key"
                    )
            cycle = find_cycle(
                {t.code: [t.parent] for t in vocab.terms.values() if t.parent is not None}
            )
            if cycle is not None:
                raise GlossaryError(
                    f"{vocab.type} parents form a cycle: {' -> '.join(cycle)}; "
                    "remove one of these parent keys"
                )
            _check_tree_depth(vocab)
        uses: dict[str, tuple[str, ...]] = {}
        for metric in self.metrics.terms.values():
            if metric.derivation is None:
                continue
            uses[metric.code] = metric.derivation.metrics()
            unknown = [code for code in uses[metric.code] if code not in self.metrics.terms]
            if unknown:
                raise GlossaryError(
                    f"metric {quote_input(metric.code)}: derivation "
                    f"{quote_input(metric.derivation.text)} names unknown metric "
                    f"{', '.join(map(quote_input, unknown))}: define it or fix the derivation"
                )
        cycle = find_cycle(uses)
        if cycle is not None:
            raise GlossaryError(
                f"metric derivations form a cycle: {' -> '.join(cycle)}; "
                "remove or change one of these derivations"
            )
        entity = self.answers.default_entity
        if entity is not None and self.entities.resolve(entity) is None:
            suggestions = self.entities.suggest(entity)
            hint = f" (close to it: {', '.join(suggestions)})" if suggestions else ""
            raise GlossaryError(
                f"answers.default_entity {quote_input(entity)} is not a glossary entity{hint}: "
                "define it under [entities] or change the setting"
            )

    @property
    def explanation_cues(self) -> Mapping[str, tuple[str, ...]]:
        """Explanation cue words per language: the declared ``[cues]``, else
        :data:`DEFAULT_CUES`."""
        return self.cues or DEFAULT_CUES

    def terms(self) -> list[Term]:
        return [
            *self.metrics.terms.values(),
            *self.entities.terms.values(),
            *self.channels.terms.values(),
        ]

    def merged(self, other: Glossary, *, check_references: bool = True) -> Glossary:
        """This glossary plus ``other``'s terms; a code or alias defined in both is an error."""
        cues = {language: list(words) for language, words in self.cues.items()}
        for language, words in other.cues.items():
            cues.setdefault(language, []).extend(words)
        answers = AnswerSettings(
            self.answers.locale or other.answers.locale,
            self.answers.default_entity or other.answers.default_entity,
        )
        return Glossary.from_terms(
            [*self.terms(), *(t for t in other.terms() if not _is_default_channel(t))],
            fiscal_year_start_month=self.fiscal_year_start_month,
            check_references=check_references,
            cues=cues,
            answers=answers,
        )

    def find_terms(self, text: str) -> list[TermHit]:
        """Every glossary term in ``text``, longest match first, on word boundaries; a
        spelling without a letter (``2014``, ``$ 2014``) is never found, since it would take
        a year or an amount of the text for a term.

        Scans like a regular expression of every spelling, longest first, between ``(?<!\\w)``
        and ``(?!\\w)``: from left to right, at each position where a word may start, the
        longest spelling ending where a word may end wins, and the scan goes on after it. Only
        those start and end positions are tried (a few dictionary lookups per word), so the
        cost does not grow with the size of the glossary.
        """
        index = _term_index(self)
        key = match_key(text)
        # Only where a spelling's head (its text up to its first word end) occurs can a
        # spelling start: the heads present are found by set intersection, in C, and only
        # their positions are tried. Most texts name few terms.
        words = _WORD.findall(key)
        present = index.word_heads.intersection(words)
        others = [head for head in index.other_heads if head in key]
        if not present and not others:
            return []
        # Candidate starts: whole words that are heads (a \w+ run is a word on both sides),
        # and where a head starting with punctuation occurs.
        candidates = [m for m in _WORD.finditer(key) if m.group() in present] if present else []
        if others:
            candidates += _heads_pattern(frozenset(others)).finditer(key)
            candidates.sort(key=lambda m: m.start())
        hits = []
        reached = 0
        for found in candidates:
            start = found.start()
            if start < reached:
                continue
            longest = index.heads[found.group(0)]
            ends = []
            for end in _WORD_END.finditer(key, found.end()):
                if end.start() > start + longest:
                    break
                ends.append(end.start())
            for end_at in reversed(ends):
                owner = index.owners.get(key[start:end_at])
                if owner is not None:
                    hits.append(TermHit(owner[0], owner[1], start, end_at))
                    reached = end_at
                    break
        return hits


_WORD = re.compile(r"\w+")
_WORD_END = re.compile(r"(?!\w)")


@dataclass(frozen=True, slots=True)
class _TermIndex:
    """Every spelling's matching form -> (type, code); every head (a spelling up to its first
    word end after its first character) -> the length of the longest spelling with it, split
    into heads that are one word and the others (starting with punctuation)."""

    owners: dict[str, tuple[TermType, str]]
    heads: dict[str, int]
    word_heads: frozenset[str]
    other_heads: tuple[str, ...]


@lru_cache(maxsize=256)
def _heads_pattern(heads: frozenset[str]) -> re.Pattern[str]:
    """Where one of ``heads`` starts and ends on word boundaries, longest first."""
    alternation = "|".join(map(re.escape, sorted(heads, key=lambda h: (-len(h), h))))
    return re.compile(rf"(?<!\w)(?:{alternation})(?!\w)")


def _term_index(glossary: Glossary) -> _TermIndex:
    """The :class:`_TermIndex` of ``glossary``, built once (a metric's spelling wins over an
    entity's, an entity's over a channel's)."""
    cached = glossary._index
    if cached is None:
        owners: dict[str, tuple[TermType, str]] = {}
        for vocab in (glossary.metrics, glossary.entities, glossary.channels):
            for key, code in vocab.index.items():
                if any(ch.isalpha() for ch in key):  # "2014", "$ 2014": a number, no name
                    owners.setdefault(key, (vocab.type, code))
        heads: dict[str, int] = {}
        for spelling in owners:
            found = _WORD_END.search(spelling, 1)
            head = spelling[: found.start()] if found is not None else spelling
            heads[head] = max(heads.get(head, 0), len(spelling))
        words = frozenset(head for head in heads if _WORD.fullmatch(head))
        cached = _TermIndex(owners, heads, words, tuple(h for h in heads if h not in words))
        # One assignment of a finished value: threads sharing the glossary see none or all of
        # it (two may build it at once, and build the same).
        object.__setattr__(glossary, "_index", cached)
    return cached


def _check_cues(cues: Mapping[str, Iterable[str]]) -> Mapping[str, tuple[str, ...]]:
    """Cue words per language, each language code checked and each word's repeats dropped."""
    checked: dict[str, tuple[str, ...]] = {}
    for language, words in cues.items():
        if not isinstance(language, str) or not _LANGUAGE.match(language):
            raise GlossaryError(
                f"cues: {quote_input(language)} is not a language code such as en or it"
            )
        kept: dict[str, str] = {}
        for word in words:
            if not isinstance(word, str) or not match_key(word):
                raise GlossaryError(f"cues.{language}: every cue must be a non-empty string")
            kept.setdefault(match_key(word), display_text(word))
        checked[language] = tuple(kept.values())
    return checked


def _parse_cues(section: Any, source: str) -> dict[str, list[str]]:
    if section is None:
        return {}
    if not isinstance(section, dict):
        raise GlossaryError(f'{source}: [cues] must map a language to words: en = ["why"]')
    cues = {}
    for language, words in section.items():
        if not isinstance(words, list):
            raise GlossaryError(f'{source}: cues.{language} must be a list of words: ["why"]')
        cues[language] = words
    return cues


def _parse_answers(section: Any, source: str) -> AnswerSettings:
    if section is None:
        return AnswerSettings()
    if not isinstance(section, dict):
        raise GlossaryError(f"{source}: [answers] must be a table")
    unknown = set(section) - {"locale", "default_entity"}
    if unknown:
        raise GlossaryError(
            f"{source}: answers: unknown keys {sorted(unknown)}; use locale, default_entity"
        )
    locale = section.get("locale")
    if locale is not None and locale not in ANSWER_LOCALES:
        raise GlossaryError(
            f"{source}: answers.locale {quote_input(locale)} is not one of "
            f"{', '.join(ANSWER_LOCALES)}"
        )
    entity = section.get("default_entity")
    if entity is not None and (not isinstance(entity, str) or not match_key(entity)):
        raise GlossaryError(f"{source}: answers.default_entity must be an entity code")
    return AnswerSettings(locale, entity)


def _is_default_channel(term: Term) -> bool:
    return term.type is TermType.CHANNEL and term.code == DEFAULT_CHANNEL


def _str_list(value: Any, where: str) -> tuple[str, ...]:
    if value is None:
        return ()
    if not isinstance(value, list) or not all(isinstance(v, str) for v in value):
        raise GlossaryError(f"{where}: aliases must be a list of strings")
    return tuple(value)


def _parse_section(
    term_type: TermType, section: Any, source: str, generated: bool = False
) -> list[Term]:
    if section is None:
        return []
    if not isinstance(section, dict):
        raise GlossaryError(f"{source}: [{term_type}s] must be a table of tables")
    terms = []
    for code, body in section.items():
        where = f"{source}: {term_type}s.{quote_input(code)}"
        if not isinstance(body, dict):
            raise GlossaryError(f"{where} must be a table with at least a label")
        if not _CODE.match(code):
            raise GlossaryError(
                f"{where}: code must be lower-case letters, digits, '_', '.' or '-'"
            )
        allowed = {"label", "aliases", "unit", "kind", "parent"}
        if term_type is TermType.METRIC:
            allowed.add("derivation")
        unknown = set(body) - allowed
        if unknown:
            hint = " (only metrics take a derivation)" if "derivation" in unknown else ""
            raise GlossaryError(f"{where}: unknown keys {sorted(unknown)}{hint}")
        parent = body.get("parent")
        if parent is not None and not isinstance(parent, str):
            raise GlossaryError(f"{where}: parent must be a code (a string)")
        derivation = None
        if "derivation" in body:
            if not isinstance(body["derivation"], str):
                raise GlossaryError(f"{where}: derivation must be a string such as 'a / b'")
            try:
                derivation = parse_expression(body["derivation"])
            except GlossaryError as exc:
                raise GlossaryError(f"{where}: {exc}") from None
        kind_raw = body.get("kind", "number")
        try:
            kind = MetricKind(kind_raw)
        except ValueError:
            valid = ", ".join(k.value for k in MetricKind)
            raise GlossaryError(
                f"{where}: kind {quote_input(kind_raw)} is not one of {valid}"
            ) from None
        terms.append(
            Term(
                term_type,
                code,
                str(body.get("label", code)),
                _str_list(body.get("aliases"), where),
                str(body.get("unit", "")),
                kind,
                parent,
                derivation,
                generated,
            )
        )
    return terms


def parse_glossary(
    document: Mapping[str, Any],
    source: str = "<glossary>",
    *,
    check_references: bool = True,
    generated: bool = False,
) -> Glossary:
    """Build a glossary from a parsed TOML document (``check_references``: see
    :meth:`Glossary.from_terms`; ``generated``: an importer's glossary, see
    :attr:`Term.generated`)."""
    unknown = set(document) - {"calendar", "metrics", "entities", "channels", "cues", "answers"}
    if unknown:
        raise GlossaryError(
            f"{source}: unknown sections {sorted(unknown)}; "
            "use calendar, metrics, entities, channels, cues, answers"
        )
    calendar = document.get("calendar", {})
    start = calendar.get("fiscal_year_start_month", 1)
    if not isinstance(start, int) or not 1 <= start <= 12:
        raise GlossaryError(f"{source}: calendar.fiscal_year_start_month must be 1..12")
    terms = [
        *_parse_section(TermType.METRIC, document.get("metrics"), source, generated),
        *_parse_section(TermType.ENTITY, document.get("entities"), source, generated),
        *_parse_section(TermType.CHANNEL, document.get("channels"), source, generated),
    ]
    return Glossary.from_terms(
        terms,
        fiscal_year_start_month=start,
        check_references=check_references,
        cues=_parse_cues(document.get("cues"), source),
        answers=_parse_answers(document.get("answers"), source),
    )


MAX_TREE_DEPTH = 100
"""The most levels an entity or channel tree may have (a roll-up walks them; a report's
group structure has a handful)."""


def _check_tree_depth(vocab: Vocabulary) -> None:
    """A :class:`GlossaryError` naming a term more than :data:`MAX_TREE_DEPTH` parents deep
    (the parents are known to form no cycle)."""
    depth: dict[str, int] = {}
    for code in vocab.terms:
        chain = []
        node: str | None = code
        while node is not None and node not in depth:
            chain.append(node)
            node = vocab.terms[node].parent
        known = depth[node] if node is not None else 0
        for link in reversed(chain):
            known += 1
            depth[link] = known
            if known > MAX_TREE_DEPTH:
                raise GlossaryError(
                    f"{vocab.type} {quote_input(link)} is more than {MAX_TREE_DEPTH} parents "
                    "deep: flatten the tree"
                )


def read_glossary_file(path: Path) -> str | None:
    """The text of the glossary file ``path``, None when there is none; a
    :class:`GlossaryError` naming it when it is not UTF-8 text, a folder or unreadable."""
    try:
        return path.read_text(encoding="utf-8")
    except FileNotFoundError:
        return None
    except UnicodeDecodeError as exc:
        raise GlossaryError(
            f"glossary file {path} is not UTF-8 text (byte 0x{exc.object[exc.start]:02x} at "
            f"offset {exc.start}): save it as UTF-8"
        ) from None
    except IsADirectoryError:
        raise GlossaryError(f"glossary file {path} is a folder: give a TOML file") from None
    except OSError as exc:
        raise GlossaryError(
            f"cannot read glossary file {path} ({exc.strerror or exc}): check its permissions"
        ) from None


def load_glossary(*paths: Path, check_references: bool = True) -> Glossary:
    """Load and merge glossary files; the first file's calendar wins. Parents and derivations
    may name terms of another file: they are checked once all files are merged (not at all with
    ``check_references=False``, for a part that will be merged with more files)."""
    texts = []
    for path in paths:
        text = read_glossary_file(path)
        if text is None:
            raise GlossaryError(f"glossary file {path} does not exist")
        texts.append((str(path), text))
    return load_glossary_texts(*texts, check_references=check_references)


def load_glossary_texts(
    *texts: tuple[str, str], check_references: bool = True, generated: Collection[str] = ()
) -> Glossary:
    """:func:`load_glossary` of ``(name, TOML text)`` pairs (``name`` is shown in errors;
    the texts named in ``generated`` are importers', see :attr:`Term.generated`)."""
    glossary: Glossary | None = None
    for name, text in texts:
        try:
            document = tomllib.loads(text)
        except tomllib.TOMLDecodeError as exc:
            raise GlossaryError(f"glossary file {name} is not valid TOML: {exc}") from None
        part = parse_glossary(document, name, check_references=False, generated=name in generated)
        glossary = part if glossary is None else glossary.merged(part, check_references=False)
    if glossary is None:
        return Glossary.from_terms([])
    if not check_references:
        return glossary
    try:
        glossary.check_references()
    except GlossaryError as exc:
        names = ", ".join(name for name, _ in texts)
        raise GlossaryError(f"{names}: {exc}") from None
    return glossary


def _toml_str(text: str) -> str:
    """A TOML basic string: backslash, quote and control characters escaped."""
    escaped = "".join(
        f"\\u{ord(ch):04x}" if ord(ch) < 0x20 or ord(ch) == 0x7F else ch
        for ch in text.replace("\\", "\\\\").replace('"', '\\"')
    )
    return f'"{escaped}"'


def render_glossary(glossary: Glossary, *, header: str = "") -> str:
    """Write ``glossary`` back as TOML (used for generated glossaries)."""
    lines = [f"# {line}" for line in header.splitlines()]
    if lines:
        lines.append("")
    lines += ["[calendar]", f"fiscal_year_start_month = {glossary.fiscal_year_start_month}", ""]
    for section, vocab in (
        ("metrics", glossary.metrics),
        ("entities", glossary.entities),
        ("channels", glossary.channels),
    ):
        for term in sorted(vocab.terms.values(), key=lambda t: t.code):
            if _is_default_channel(term):
                continue
            lines.append(f"[{section}.{_toml_str(term.code)}]")
            lines.append(f"label = {_toml_str(term.label)}")
            if term.aliases:
                lines.append("aliases = [" + ", ".join(map(_toml_str, term.aliases)) + "]")
            if section == "metrics":
                if term.unit:
                    lines.append(f"unit = {_toml_str(term.unit)}")
                lines.append(f'kind = "{term.kind.value}"')
            if term.parent:
                lines.append(f"parent = {_toml_str(term.parent)}")
            if term.derivation is not None:
                lines.append(f"derivation = {_toml_str(term.derivation.text)}")
            lines.append("")
    if glossary.cues:
        lines.append("[cues]")
        for language, words in sorted(glossary.cues.items()):
            lines.append(f"{language} = [" + ", ".join(map(_toml_str, words)) + "]")
        lines.append("")
    settings = glossary.answers
    if settings.locale is not None or settings.default_entity is not None:
        lines.append("[answers]")
        if settings.locale is not None:
            lines.append(f"locale = {_toml_str(settings.locale)}")
        if settings.default_entity is not None:
            lines.append(f"default_entity = {_toml_str(settings.default_entity)}")
        lines.append("")
    return "\n".join(lines)
