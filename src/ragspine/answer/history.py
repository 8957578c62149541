"""Conversation history: the turns before a question, for generation only.

History is prompt context for a generating provider. It is never searched, never read for a
metric, entity or period, never a source and never evidence for a number: the router hands it to
the narrative generator and to nothing else (contract 2).
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass
from enum import StrEnum

from ragspine.errors import QueryError, quote_input

MAX_TURNS = 200
"""A history longer than this is refused."""


class Role(StrEnum):
    USER = "user"
    ASSISTANT = "assistant"


@dataclass(frozen=True, slots=True)
class Turn:
    """One earlier turn of the conversation."""

    role: Role
    text: str


def check_history(history: Iterable[object] | None) -> tuple[Turn, ...]:
    """``history`` as turns: each a ``(role, text)`` pair (or a :class:`Turn`) with role
    ``user`` or ``assistant``; anything else is a :class:`~ragspine.errors.QueryError`."""
    if history is None:
        return ()
    if isinstance(history, str | bytes):
        raise QueryError("history is a list of (role, text) turns, not a string")
    turns: list[Turn] = []
    for index, item in enumerate(history):
        if len(turns) >= MAX_TURNS:
            raise QueryError(f"history holds more than {MAX_TURNS} turns: keep the latest ones")
        if isinstance(item, Turn):
            turns.append(item)
            continue
        if not isinstance(item, tuple | list) or len(item) != 2:
            raise QueryError(f"history turn {index} is not a (role, text) pair")
        role, text = item
        try:
            checked = Role(role)
        except ValueError:
            raise QueryError(
                f"history turn {index}: role {quote_input(str(role))} is not user or assistant"
            ) from None
        if not isinstance(text, str):
            raise QueryError(f"history turn {index}: the text must be a string")
        turns.append(Turn(checked, text))
    return tuple(turns)
