"""Agent mode: the model calls tools and so chooses the route; the answer is still built by us.

The model gets three tools: ``query_metric`` and ``compare`` (stored facts, read at the asker's
level) and ``search_documents`` (the asker's search). Each call's arguments are parsed and
checked here: malformed JSON, an unknown tool or an unknown term is answered with an error the
model may act on, and never runs. The route follows from the calls that ran, and only these
three exist: facts only is ``structured``, documents only is ``narrative``, both is
``composite``, none is ``narrative`` with no sources (so any number the model states is dropped).

What the model wrote about facts is never shown: the figures part is rebuilt from the facts the
tools returned (:func:`ragspine.answer.structured.answer_figures`), so a failed lookup keeps its
fixed refusal whatever the model says. Its prose (narrative and composite routes) goes through
the guard against the documents it was given and the found facts.
"""

from __future__ import annotations

import json
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field, replace
from datetime import date
from typing import Any

from ragspine.answer.generate import source_block
from ragspine.answer.guard import StatedValue, fact_magnitude, is_percent
from ragspine.answer.history import Turn
from ragspine.answer.locale import Locale
from ragspine.answer.question import Operation, QuestionReading, Route
from ragspine.answer.structured import FiguresPart, answer_figures
from ragspine.answer.types import AnswerStatus, CitedSentence, FigureKind, Source
from ragspine.errors import PeriodError, quote_input
from ragspine.glossary import Glossary, Vocabulary
from ragspine.llm.provider import Generation, Message, Provider, Role, ToolCall, ToolSpec
from ragspine.narrative.retrieve.expansion import screen_snippets
from ragspine.narrative.retrieve.retriever import SearchResult
from ragspine.narrative.retrieve.snippets import Snippet
from ragspine.narrative.retrieve.trace import Trace
from ragspine.periods import parse_period
from ragspine.security import Principal
from ragspine.stores.facts import FactStore
from ragspine.structured.facts import FactKey

MAX_ROUNDS = 4
"""Tool rounds before the model is asked for its final reply without tools."""

AGENT_PROMPT = (
    "You answer questions about business reports. Use the tools: query_metric or compare for "
    "stored figures, search_documents for explanations in the documents. Call the tools before "
    "answering; never state a number no tool returned. Documents come numbered [n]: cite them "
    "after each sentence, like [1]. Earlier turns of the conversation are context only."
)

_TEXT = {"type": "string"}
TOOLS: tuple[ToolSpec, ...] = (
    ToolSpec(
        "query_metric",
        "One stored figure: a metric of an entity in a period (e.g. FY2024, 2024Q3).",
        {
            "type": "object",
            "properties": {"metric": _TEXT, "entity": _TEXT, "period": _TEXT, "channel": _TEXT},
            "required": ["metric", "entity", "period"],
        },
    ),
    ToolSpec(
        "compare",
        "A metric of one entity across periods: change, percent_change or average.",
        {
            "type": "object",
            "properties": {
                "metric": _TEXT,
                "entity": _TEXT,
                "periods": {"type": "array", "items": _TEXT, "minItems": 2},
                "operation": {"type": "string", "enum": ["change", "percent_change", "average"]},
            },
            "required": ["metric", "entity", "periods"],
        },
    ),
    ToolSpec(
        "search_documents",
        "Search the document libraries; returns numbered passages to cite.",
        {"type": "object", "properties": {"query": _TEXT}, "required": ["query"]},
    ),
)
_COMPARE_OPERATIONS = {
    op.value: op for op in (Operation.CHANGE, Operation.PERCENT_CHANGE, Operation.AVERAGE)
}
MAX_TEXT = 2000
"""Longest argument text accepted from the model."""


class _Rejected(Exception):
    """A tool call that does not run; its message goes back to the model."""


@dataclass(frozen=True, slots=True)
class AgentRun:
    """What one agent run did: the route its calls chose, the figures part rebuilt from the
    facts returned, the passages it was given (``[1]`` first) and its final reply."""

    route: Route
    reason: str
    reply: Generation
    part: FiguresPart | None
    search: SearchResult
    rounds: int
    calls: int
    rejected: int


def found_values(part: FiguresPart, glossary: Glossary) -> tuple[StatedValue, ...]:
    """The stored values of the facts ``part`` found, each with the magnitude it may be
    written with (:func:`~ragspine.answer.guard.fact_magnitude`; a percentage metric's in
    percent)."""
    return tuple(
        StatedValue(
            f.result.value,
            fact_magnitude(
                f.result.scale, f.result.unit, percent=is_percent(glossary, f.result.metric)
            ),
        )
        for f in part.figures
        if f.kind is FigureKind.FACT and f.result is not None and f.result.value is not None
    )


@dataclass(slots=True)
class _Session:
    glossary: Glossary
    facts: Callable[[], FactStore]
    search: Callable[[str], SearchResult]
    principal: Principal
    locale: Locale
    reference_date: date | None
    parts: list[FiguresPart] = field(default_factory=list)
    snippets: list[Snippet] = field(default_factory=list)
    notices: list[str] = field(default_factory=list)
    used: dict[str, int] = field(default_factory=dict)

    def run(self, call: ToolCall) -> str:
        """Run one call; its result (or a :class:`_Rejected` error) as tool-message text."""
        tools = {
            "query_metric": self._query_metric,
            "compare": self._compare,
            "search_documents": self._search_documents,
        }
        tool = tools.get(call.name)
        if tool is None:
            raise _Rejected(f"unknown tool {quote_input(call.name)}: use {', '.join(tools)}")
        try:
            arguments = json.loads(call.arguments or "{}")
        except ValueError:
            raise _Rejected("the arguments are not valid JSON: send one JSON object") from None
        if not isinstance(arguments, dict):
            raise _Rejected("the arguments must be one JSON object")
        result = tool(arguments)
        self.used[call.name] = self.used.get(call.name, 0) + 1
        return result

    def _term(self, arguments: dict[str, Any], name: str, vocabulary: Vocabulary) -> str:
        raw = _text(arguments, name)
        code = vocabulary.resolve(raw)
        if code is None:
            hint = vocabulary.suggest(raw)
            known = f"; did you mean {', '.join(hint)}?" if hint else ""
            raise _Rejected(f"unknown {name} {quote_input(raw)}{known}")
        return code

    def _period(self, raw: str) -> str:
        try:
            reference = self.reference_date or date.today()
            return parse_period(raw, reference, self.glossary.fiscal_year_start_month).label
        except PeriodError as exc:
            raise _Rejected(str(exc)) from None

    def _figures(self, reading: QuestionReading) -> str:
        part = answer_figures(
            reading,
            self.glossary,
            self.facts(),
            principal=self.principal,
            locale=self.locale,
            reference_date=self.reference_date,
        )
        self.parts.append(part)
        return json.dumps(
            {"status": part.status.value, "figures": [s.text for s in part.sentences]},
            ensure_ascii=False,
        )

    def _query_metric(self, arguments: dict[str, Any]) -> str:
        channel = arguments.get("channel")
        reading = QuestionReading(
            metrics=(self._term(arguments, "metric", self.glossary.metrics),),
            entities=(self._term(arguments, "entity", self.glossary.entities),),
            channels=(self._term(arguments, "channel", self.glossary.channels),) if channel else (),
            periods=(self._period(_text(arguments, "period")),),
        )
        return self._figures(reading)

    def _compare(self, arguments: dict[str, Any]) -> str:
        periods = arguments.get("periods")
        if not isinstance(periods, list) or len(periods) < 2 or len(periods) > 12:
            raise _Rejected("periods must be a list of 2 to 12 periods")
        if not all(isinstance(p, str) for p in periods):
            raise _Rejected("each period must be a string such as FY2024")
        raw_operation = arguments.get("operation", "change")
        operation = _COMPARE_OPERATIONS.get(str(raw_operation))
        if operation is None:
            raise _Rejected(f"operation must be one of {', '.join(_COMPARE_OPERATIONS)}")
        reading = QuestionReading(
            metrics=(self._term(arguments, "metric", self.glossary.metrics),),
            entities=(self._term(arguments, "entity", self.glossary.entities),),
            periods=tuple(dict.fromkeys(self._period(p) for p in periods)),
            operation=operation,
        )
        return self._figures(reading)

    def _search_documents(self, arguments: dict[str, Any]) -> str:
        result = self.search(_text(arguments, "query"))
        visible, _ = screen_snippets(result.snippets, self.principal)
        known = {(s.library_id, s.chunk_id) for s in self.snippets}
        new = [s for s in visible if (s.library_id, s.chunk_id) not in known]
        start = len(self.snippets) + 1
        self.snippets.extend(new)
        self.notices.extend(n for n in result.notices if n not in self.notices)
        return source_block(new, start) if new else "(no new passages found)"


def _text(arguments: dict[str, Any], name: str) -> str:
    value = arguments.get(name)
    if not isinstance(value, str) or not value.strip():
        raise _Rejected(f"{name} is required and must be a non-empty string")
    if len(value) > MAX_TEXT:
        raise _Rejected(f"{name} is longer than {MAX_TEXT} characters")
    return value.strip()


def run_agent(
    question: str,
    provider: Provider,
    *,
    glossary: Glossary,
    facts: Callable[[], FactStore],
    search: Callable[[str], SearchResult],
    principal: Principal,
    locale: Locale,
    history: Sequence[Turn] = (),
    reference_date: date | None = None,
) -> AgentRun:
    """Let the model call tools for ``question`` (at most :data:`MAX_ROUNDS` rounds), then
    return what it did; see the module docstring."""
    session = _Session(glossary, facts, search, principal, locale, reference_date)
    messages = [Message(Role.SYSTEM, AGENT_PROMPT)]
    messages.extend(Message(Role(turn.role.value), turn.text) for turn in history)
    messages.append(Message(Role.USER, question))
    calls = rejected = rounds = 0
    reply = Generation("")
    for _ in range(MAX_ROUNDS):
        rounds += 1
        reply = provider.generate(messages, tools=TOOLS)
        if not reply.tool_calls:
            break
        messages.append(Message(Role.ASSISTANT, reply.text, reply.tool_calls))
        for call in reply.tool_calls:
            calls += 1
            try:
                content = session.run(call)
            except _Rejected as exc:
                rejected += 1
                content = f"error: {exc}"
            messages.append(Message(Role.TOOL, content, tool_call_id=call.id))
    else:
        rounds += 1
        reply = replace(provider.generate(messages), tool_calls=())
    route, reason = _route(session.used)
    part = merge_parts(session.parts) if session.parts else None
    found = SearchResult(question, tuple(session.snippets), Trace(), tuple(session.notices))
    return AgentRun(route, reason, reply, part, found, rounds, calls, rejected)


def _route(used: dict[str, int]) -> tuple[Route, str]:
    facts = used.get("query_metric", 0) + used.get("compare", 0)
    documents = used.get("search_documents", 0)
    if facts and documents:
        route = Route.COMPOSITE
    elif facts:
        route = Route.STRUCTURED
    else:
        route = Route.NARRATIVE
    ran = ", ".join(f"{name} x{count}" for name, count in sorted(used.items()))
    return route, f"{route.value}: chosen by the model's tool calls ({ran or 'none'})"


def merge_parts(parts: Sequence[FiguresPart]) -> FiguresPart:
    """One figures part of several, fact citations renumbered (one marker per fact)."""
    markers: dict[FactKey, int] = {}
    sources: list[Source] = []
    sentences: list[CitedSentence] = []
    figures = []
    assumptions: list[str] = []
    for part in parts:
        remap: dict[int, int] = {}
        for source in part.sources:
            assert source.fact is not None
            if source.fact not in markers:
                markers[source.fact] = len(markers) + 1
                sources.append(replace(source, marker=markers[source.fact]))
            remap[source.marker] = markers[source.fact]
        for sentence in part.sentences:
            sentences.append(replace(sentence, markers=tuple(remap[m] for m in sentence.markers)))
        for figure in part.figures:
            figures.append(replace(figure, markers=tuple(remap[m] for m in figure.markers)))
        assumptions.extend(a for a in part.assumptions if a not in assumptions)
    answered = [p for p in parts if p.status is AnswerStatus.ANSWERED]
    first = answered[0] if answered else parts[0]
    return FiguresPart(
        first.status,
        tuple(sentences),
        tuple(figures),
        tuple(sources),
        tuple(assumptions),
        param=first.param,
        suggestions=first.suggestions,
        lookups=sum(p.lookups for p in parts),
    )
