"""Answers: the offline extractive narrative answer and its numeric guard."""

from __future__ import annotations

from ragspine.answer.extractive import (
    NO_MATERIAL_TEXT,
    AnswerStatus,
    NarrativeAnswer,
    NarrativeSource,
    answer_from_snippets,
    citation_violations,
)

__all__ = [
    "NO_MATERIAL_TEXT",
    "AnswerStatus",
    "NarrativeAnswer",
    "NarrativeSource",
    "answer_from_snippets",
    "citation_violations",
]
