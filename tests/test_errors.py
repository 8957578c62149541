"""The exception tree's message helper."""

from __future__ import annotations

from ragspine.errors import quote_input


def test_short_input_is_quoted_whole() -> None:
    assert quote_input("revenue") == "'revenue'"


def test_long_input_is_cut_to_the_limit_with_an_ellipsis_and_its_length() -> None:
    shown = quote_input("x" * 100_000)
    assert shown == "'" + "x" * 80 + "…' (100000 characters)"
    assert quote_input("abcdef", limit=3) == "'abc…' (6 characters)"


def test_invisible_and_control_characters_are_escaped() -> None:
    assert quote_input("Safe\u202eexe\x1b[31m") == "'Safe\\u202eexe\\x1b[31m'"
