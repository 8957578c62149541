"""The options of one answer: the search options plus what answering and ``ask`` add."""

from __future__ import annotations

from dataclasses import dataclass
from enum import StrEnum

from ragspine.answer.extractive import DEFAULT_MAX_SENTENCES
from ragspine.answer.locale import parse_locale
from ragspine.errors import QueryError, quote_input
from ragspine.llm.provider import ProviderName
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


class AskChannel(StrEnum):
    """Which route ``ask`` takes: ``auto`` chooses from the question (see
    :func:`ragspine.answer.question.choose_route`)."""

    AUTO = "auto"
    STRUCTURED = "structured"
    NARRATIVE = "narrative"
    COMPOSITE = "composite"


@dataclass(frozen=True, slots=True)
class AskOptions(AnswerOptions):
    """:class:`AnswerOptions` plus what ``ask`` adds: ``channel`` (``auto``, ``structured``,
    ``narrative`` or ``composite``), ``entity`` (the entity a question that names none is about;
    else the workspace's default entity), ``locale`` (``en`` or ``it``; else the workspace's),
    ``provider`` (``extractive`` or ``openai``; else the workspace's ``llm.toml``, else
    ``extractive``) and ``agent`` (the model chooses the route and calls tools; needs a
    generating provider)."""

    channel: str = AskChannel.AUTO.value
    entity: str | None = None
    locale: str | None = None
    provider: str | None = None
    agent: bool = False

    def __post_init__(self) -> None:
        super(AskOptions, self).__post_init__()
        try:
            AskChannel(self.channel)
        except ValueError:
            valid = ", ".join(c.value for c in AskChannel)
            raise QueryError(
                f"unknown channel {quote_input(str(self.channel))}: use {valid}"
            ) from None
        if self.entity is not None and (
            not isinstance(self.entity, str) or not self.entity.strip()
        ):
            raise QueryError(f"entity must be a non-empty glossary entity, got {self.entity!r}")
        parse_locale(self.locale)
        if self.provider is not None:
            ProviderName.parse(self.provider)
        if not isinstance(self.agent, bool):
            raise QueryError(f"agent must be true or false, got {self.agent!r}")
