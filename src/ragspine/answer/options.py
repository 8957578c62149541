"""The options of one narrative answer: the search options plus what answering adds."""

from __future__ import annotations

from dataclasses import dataclass

from ragspine.answer.extractive import DEFAULT_MAX_SENTENCES
from ragspine.errors import QueryError
from ragspine.narrative.retrieve.options import SearchOptions

DEFAULT_ANSWER_TOP_K = 5


@dataclass(frozen=True, slots=True)
class AnswerOptions(SearchOptions):
    """:class:`~ragspine.narrative.retrieve.options.SearchOptions` for the snippets an answer
    reads (``top_k`` defaults to 5 here, not 10), and ``max_sentences``: how many cited
    sentences the extractive answer holds at most."""

    top_k: int = DEFAULT_ANSWER_TOP_K
    max_sentences: int = DEFAULT_MAX_SENTENCES

    def __post_init__(self) -> None:
        super(AnswerOptions, self).__post_init__()
        count: object = self.max_sentences
        if not isinstance(count, int) or isinstance(count, bool) or count < 1:
            raise QueryError(f"max_sentences must be a whole number >= 1, got {count!r}")
