"""Optional, deterministic filter extraction from the question (off unless a caller asks).

Given controlled vocabularies per metadata field (for example the glossary's entities:
``{"region": {"emea": "EMEA", "europe": "EMEA", "asia pacific": "APAC"}}``), every alias found in
the question on word boundaries (exact after :func:`ragspine.analysis.match_key`, the
normalization glossary matching uses; never a guess) becomes a condition on its field: one value
gives ``eq``, several give ``in``. Extra extractors (such as a period parser) may add conditions
of their own.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass

from ragspine.analysis import match_key
from ragspine.narrative.filters.expr import Condition, Filter, Op, Scalar, all_of

Extractor = Callable[[str], Iterable[Condition]]


@dataclass(frozen=True, slots=True)
class ExtractedFilter:
    """The filter found in a question (``None`` when nothing was found) and what matched."""

    filter: Filter | None
    matches: tuple[tuple[str, str, Scalar], ...]
    """``(field, alias as found, canonical value)`` for every vocabulary hit, in question order."""

    def describe(self) -> str:
        """A one-line note for the trace."""
        if self.filter is None:
            return "no filter found in the question"
        return f"filter taken from the question: {self.filter.describe()}"


def extract_filter(
    question: str,
    vocabularies: Mapping[str, Mapping[str, Scalar]],
    *,
    extractors: Sequence[Extractor] = (),
) -> ExtractedFilter:
    """Conditions for every vocabulary alias in ``question``, ANDed across fields."""
    text = match_key(question)
    found: list[tuple[int, str, str, Scalar]] = []
    for field in sorted(vocabularies):
        aliases = sorted(vocabularies[field].items(), key=lambda item: (-len(item[0]), item[0]))
        taken: list[tuple[int, int]] = []
        for alias, value in aliases:
            needle = match_key(alias)
            if not needle:
                continue
            pattern = re.compile(rf"(?<!\w){re.escape(needle)}(?!\w)")
            for match in pattern.finditer(text):
                span = match.span()
                if any(span[0] < end and start < span[1] for start, end in taken):
                    continue  # a longer alias already claimed these words
                taken.append(span)
                found.append((span[0], field, match.group(0), value))
    found.sort(key=lambda item: (item[0], item[1]))
    conditions: list[Filter] = []
    for field in sorted({f for _, f, _, _ in found}):
        values = list(dict.fromkeys(v for _, f, _, v in found if f == field))
        if len(values) == 1:
            conditions.append(Condition(field, Op.EQ, values[0]))
        else:
            conditions.append(Condition(field, Op.IN, tuple(values)))
    for extractor in extractors:
        conditions.extend(extractor(question))
    return ExtractedFilter(
        all_of(conditions) if conditions else None,
        tuple((f, alias, v) for _, f, alias, v in found),
    )
