"""Generation providers: one protocol, an offline one and any OpenAI-compatible endpoint.

:mod:`ragspine.llm.provider` holds the messages, tools and replies every provider speaks and the
:class:`~ragspine.llm.provider.Provider` protocol; :mod:`ragspine.llm.settings` reads where a
model endpoint is (workspace ``llm.toml`` or the environment); :mod:`ragspine.llm.openai_compat`
talks to it over HTTP (the optional extra ``llm``); :mod:`ragspine.llm.extractive` is the
offline provider. Nothing here decides what an answer may say: the guard
(:mod:`ragspine.answer.guard`) does.
"""

from __future__ import annotations

from ragspine.llm.provider import (
    Generation,
    Message,
    Provider,
    ProviderName,
    ToolCall,
    ToolSpec,
)
from ragspine.llm.settings import LLMSettings

__all__ = [
    "Generation",
    "LLMSettings",
    "Message",
    "Provider",
    "ProviderName",
    "ToolCall",
    "ToolSpec",
]
