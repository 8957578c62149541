"""The derivation grammar: precedence, exact constants, positions in errors, never ``eval``."""

from __future__ import annotations

from decimal import Decimal

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from ragspine.errors import GlossaryError
from ragspine.graph.expr import (
    MAX_EXPRESSION_CHARS,
    MAX_NESTING,
    BinaryOp,
    Constant,
    MetricRef,
    Negate,
    Node,
    Op,
    node_text,
    parse_expression,
    tokenize,
)


def shape(node: Node) -> object:
    """The tree without positions, for comparing structure."""
    if isinstance(node, Constant):
        return str(node.value)
    if isinstance(node, MetricRef):
        return node.code
    if isinstance(node, Negate):
        return ("neg", shape(node.operand))
    return (node.op.value, shape(node.left), shape(node.right))


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("gross_profit / revenue * 100", ("*", ("/", "gross_profit", "revenue"), "100")),
        ("a + b * c", ("+", "a", ("*", "b", "c"))),
        ("(a + b) * c", ("*", ("+", "a", "b"), "c")),
        ("a - b - c", ("-", ("-", "a", "b"), "c")),
        ("a / b / c", ("/", ("/", "a", "b"), "c")),
        ("-a + +b", ("+", ("neg", "a"), "b")),
        ("a * -(b - 0.25)", ("*", "a", ("neg", ("-", "b", "0.25")))),
        ("[ebit-margin] + [2024.rev]", ("+", "ebit-margin", "2024.rev")),
        ("  a\n+\tb ", ("+", "a", "b")),
        (".5 * a", ("*", "0.5", "a")),
    ],
)
def test_precedence_and_grouping(text: str, expected: object) -> None:
    assert shape(parse_expression(text).root) == expected


def test_constants_are_exact_decimals() -> None:
    root = parse_expression("a * 0.1000000000000000000000000000001").root
    assert isinstance(root, BinaryOp) and isinstance(root.right, Constant)
    assert root.right.value == Decimal("0.1000000000000000000000000000001")


def test_metrics_in_order_of_first_appearance() -> None:
    expr = parse_expression("(b + a) / b - c * a")
    assert expr.metrics() == ("b", "a", "c")
    assert str(expr) == "(b + a) / b - c * a"


@pytest.mark.parametrize(
    ("text", "position", "words"),
    [
        ("a + * b", 5, "expected a metric code, a number or '('"),
        ("a +", 4, "found the end"),
        ("(a + b", 7, "')' to close the '(' at position 1"),
        ("a b", 3, "expected an operator"),
        ("a + b)", 6, "expected an operator"),
        ("a % b", 3, "unexpected character '%'"),
        ("a + 1e3", 5, "'1e' is not a number"),
        ("a + 1,000", 6, "unexpected character ','"),
        ("a + [b", 5, "not closed by ']'"),
        ("a + []", 5, "not closed by ']'"),
        ("__import__('os')", 12, "unexpected character"),
    ],
)
def test_bad_expressions_name_the_position(text: str, position: int, words: str) -> None:
    with pytest.raises(GlossaryError) as caught:
        parse_expression(text)
    message = str(caught.value)
    assert f"at position {position}" in message, message
    assert words in message, message


def test_empty_long_and_deep_expressions_are_refused() -> None:
    with pytest.raises(GlossaryError, match="empty"):
        parse_expression("  ")
    with pytest.raises(GlossaryError, match=f"longer than {MAX_EXPRESSION_CHARS}"):
        parse_expression("a + " * 600 + "a")
    with pytest.raises(GlossaryError, match="nesting deeper"):
        parse_expression("(" * (MAX_NESTING + 1) + "a" + ")" * (MAX_NESTING + 1))
    with pytest.raises(GlossaryError, match="nesting deeper"):
        parse_expression("-" * (MAX_NESTING + 1) + "a")
    parse_expression("(" * MAX_NESTING + "a" + ")" * MAX_NESTING)  # the limit itself is fine


def test_tokens_carry_positions() -> None:
    tokens = tokenize("ab*(1.5)")
    assert [(t.kind, t.text, t.position) for t in tokens] == [
        ("code", "ab", 0),
        ("op", "*", 2),
        ("(", "(", 3),
        ("number", "1.5", 4),
        (")", ")", 7),
        ("end", "", 8),
    ]


_codes = st.sampled_from(["a", "b", "gross_profit", "ebit-margin", "x1"])
_leaves = st.one_of(
    _codes.map(lambda c: MetricRef(c, 0)),
    st.decimals(min_value=0, max_value=10**6, places=3).map(lambda d: Constant(d, 0)),
)
_trees = st.recursive(
    _leaves,
    lambda inner: st.one_of(
        st.builds(lambda o: Negate(o, 0), inner),
        st.builds(
            lambda op, left, right: BinaryOp(op, left, right, 0),
            st.sampled_from(list(Op)),
            inner,
            inner,
        ),
    ),
    max_leaves=12,
)


@settings(max_examples=200, deadline=None)
@given(_trees)
def test_canonical_text_reads_back_to_the_same_tree(tree: Node) -> None:
    text = node_text(tree)
    assert shape(parse_expression(text).root) == shape(tree)
