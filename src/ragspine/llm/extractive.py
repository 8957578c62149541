"""The ``extractive`` provider: the offline answer behind the :class:`Provider` protocol.

``ask`` with the default provider calls :func:`ragspine.answer.extractive.answer_from_snippets`
directly (its answer stays byte-identical). Through the protocol, :class:`ExtractiveProvider`
reads the numbered sources and the question of the last user message (the prompt of
:func:`ragspine.answer.generate.build_messages`) and replies with the extractive sentences, each
citing ``[n]``; it never calls tools and never reads history.
"""

from __future__ import annotations

import re
from collections.abc import Sequence

from ragspine.llm.provider import Generation, Message, ProviderName, Role, ToolSpec
from ragspine.narrative.retrieve.snippets import Snippet

_SOURCE_RE = re.compile(r"^\[([0-9]+)\] [^\n]*\n", re.MULTILINE)
_QUESTION_RE = re.compile(r"\n\nQuestion: (.*)\Z", re.DOTALL)


class ExtractiveProvider:
    """Replies with the sentences of the given sources that best overlap the question."""

    name = ProviderName.EXTRACTIVE

    def __init__(self, max_sentences: int = 3) -> None:
        self.max_sentences = max_sentences

    def generate(
        self,
        messages: Sequence[Message],
        *,
        tools: Sequence[ToolSpec] | None = None,
        timeout: float | None = None,
    ) -> Generation:
        """The extractive reply to the last user message (``tools`` and ``timeout`` unused)."""
        from ragspine.answer.extractive import answer_from_snippets

        del tools, timeout
        prompt = next((m.content for m in reversed(messages) if m.role is Role.USER), "")
        found = _QUESTION_RE.search(prompt)
        question = found.group(1) if found else prompt
        body = prompt[: found.start()] if found else ""
        heads = list(_SOURCE_RE.finditer(body))
        snippets = []
        for index, head in enumerate(heads):
            end = heads[index + 1].start() if index + 1 < len(heads) else len(body)
            text = body[head.end() : end].strip()
            snippets.append(Snippet(text, head.group(1), "", "", "", 0.0, text))
        answer = answer_from_snippets(question, snippets, max_sentences=self.max_sentences)
        by_marker = {s.marker: s.chunk_id for s in answer.sources}
        reply = " ".join(
            sentence.text + "".join(f" [{by_marker[m]}]" for m in sentence.markers)
            for sentence in answer.sentences
        )
        return Generation(reply)
