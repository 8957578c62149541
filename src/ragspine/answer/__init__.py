"""Answers: the shared answer shape, the numeric guard and the offline extractive answer."""

from __future__ import annotations

from ragspine.answer.extractive import answer_from_snippets
from ragspine.answer.guard import GuardReport, check_numbers, citation_violations, numbers_in
from ragspine.answer.types import (
    NO_MATERIAL_TEXT,
    Answer,
    AnswerStatus,
    FactKey,
    Source,
    SourceKind,
)

__all__ = [
    "NO_MATERIAL_TEXT",
    "Answer",
    "AnswerStatus",
    "FactKey",
    "GuardReport",
    "Source",
    "SourceKind",
    "answer_from_snippets",
    "check_numbers",
    "citation_violations",
    "numbers_in",
]
