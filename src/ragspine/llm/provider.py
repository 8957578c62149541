"""What every generation provider speaks: chat messages, tools, tool calls and replies.

A :class:`Provider` takes a conversation (:class:`Message`\\ s), optionally the tools the model
may call (:class:`ToolSpec`), and returns a :class:`Generation`: the reply text and the tool
calls it asks for. A tool call's ``arguments`` stay the raw JSON text the model wrote; the
caller parses and validates them (a model may write malformed JSON).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from enum import StrEnum
from typing import Any, Protocol

from ragspine.errors import ConfigError, quote_input


class ProviderName(StrEnum):
    """Which provider generates: ``extractive`` (offline, the default) or ``openai`` (any
    OpenAI-compatible chat-completions endpoint)."""

    EXTRACTIVE = "extractive"
    OPENAI = "openai"

    @classmethod
    def parse(cls, raw: str | ProviderName) -> ProviderName:
        """Parse a provider name; the error lists the valid ones."""
        if isinstance(raw, cls):
            return raw
        try:
            return cls(str(raw).strip().lower())
        except ValueError:
            valid = ", ".join(member.value for member in cls)
            raise ConfigError(f"unknown provider {quote_input(raw)}: use {valid}") from None


class Role(StrEnum):
    SYSTEM = "system"
    USER = "user"
    ASSISTANT = "assistant"
    TOOL = "tool"


@dataclass(frozen=True, slots=True)
class ToolCall:
    """One call the model asks for: its id, the tool's name and the raw JSON arguments."""

    id: str
    name: str
    arguments: str

    def to_wire(self) -> dict[str, Any]:
        return {
            "id": self.id,
            "type": "function",
            "function": {"name": self.name, "arguments": self.arguments},
        }


@dataclass(frozen=True, slots=True)
class Message:
    """One chat message; an assistant message may carry tool calls, a tool message answers
    the call ``tool_call_id``."""

    role: Role
    content: str
    tool_calls: tuple[ToolCall, ...] = ()
    tool_call_id: str | None = None

    def to_wire(self) -> dict[str, Any]:
        """The chat-completions form of this message."""
        wire: dict[str, Any] = {"role": self.role.value, "content": self.content}
        if self.tool_calls:
            wire["tool_calls"] = [call.to_wire() for call in self.tool_calls]
        if self.tool_call_id is not None:
            wire["tool_call_id"] = self.tool_call_id
        return wire


@dataclass(frozen=True, slots=True)
class ToolSpec:
    """A tool the model may call: name, description and JSON-schema parameters."""

    name: str
    description: str
    parameters: Mapping[str, Any] = field(default_factory=dict)

    def to_wire(self) -> dict[str, Any]:
        return {
            "type": "function",
            "function": {
                "name": self.name,
                "description": self.description,
                "parameters": dict(self.parameters),
            },
        }


@dataclass(frozen=True, slots=True)
class Generation:
    """A model's reply: text, tool calls, and how it ended (``finish_reason`` is ``None`` when
    a streamed reply stopped before the endpoint said it was done: ``complete`` is false)."""

    text: str
    tool_calls: tuple[ToolCall, ...] = ()
    finish_reason: str | None = "stop"

    @property
    def complete(self) -> bool:
        return self.finish_reason is not None


class Provider(Protocol):
    """Generates a reply to a conversation, optionally with tools."""

    @property
    def name(self) -> ProviderName: ...

    def generate(
        self,
        messages: Sequence[Message],
        *,
        tools: Sequence[ToolSpec] | None = None,
        timeout: float | None = None,
    ) -> Generation:
        """The reply to ``messages``; ``timeout`` (seconds) overrides the provider's own."""
        ...
