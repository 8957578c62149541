"""The derivation grammar: how a glossary metric is computed from others, parsed, never ``eval``.

::

    expression := term (("+" | "-") term)*
    term       := factor (("*" | "/") factor)*
    factor     := ("+" | "-") factor | primary
    primary    := NUMBER | CODE | "[" CODE "]" | "(" expression ")"

``NUMBER`` is a decimal constant (``100``, ``0.5``; no exponent, no separators). ``CODE`` is a
metric code made of letters, digits and ``_`` that does not start with a digit
(``gross_profit``); a code holding ``-`` or ``.`` or starting with a digit is written in brackets
(``[ebit-margin]``), since ``a-b`` reads as a subtraction. A hand-written tokenizer and a
recursive-descent parser build the tree; every error names the position (1-based character) and
says what was expected there.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from decimal import Decimal
from enum import StrEnum

from ragspine.errors import GlossaryError, quote_input

MAX_EXPRESSION_CHARS = 2000
"""A derivation longer than this is refused (it is a formula, not a program)."""

MAX_NESTING = 64
"""Parentheses and unary signs nested deeper than this are refused (bounds the parser's stack)."""

_NAME = re.compile(r"[A-Za-z_][A-Za-z0-9_]*")
_BRACKETED = re.compile(r"\[([^\]\s]*)\]")
_NUMBER = re.compile(r"[0-9]+(?:\.[0-9]+)?|\.[0-9]+")


class Op(StrEnum):
    ADD = "+"
    SUB = "-"
    MUL = "*"
    DIV = "/"


@dataclass(frozen=True, slots=True)
class Constant:
    """A decimal constant, exact as written."""

    value: Decimal
    position: int


@dataclass(frozen=True, slots=True)
class MetricRef:
    """A metric code (checked against the glossary when the glossary loads)."""

    code: str
    position: int


@dataclass(frozen=True, slots=True)
class Negate:
    """Unary minus."""

    operand: Node
    position: int


@dataclass(frozen=True, slots=True)
class BinaryOp:
    """``left op right``."""

    op: Op
    left: Node
    right: Node
    position: int


Node = Constant | MetricRef | Negate | BinaryOp


@dataclass(frozen=True, slots=True)
class Expression:
    """A parsed derivation: the text as written and its tree."""

    text: str
    root: Node

    def metrics(self) -> tuple[str, ...]:
        """The metric codes the expression names, in order of first appearance."""
        seen: dict[str, None] = {}
        stack: list[Node] = [self.root]
        while stack:
            node = stack.pop()
            if isinstance(node, MetricRef):
                seen.setdefault(node.code, None)
            elif isinstance(node, Negate):
                stack.append(node.operand)
            elif isinstance(node, BinaryOp):
                stack.extend((node.right, node.left))
        return tuple(seen)

    def __str__(self) -> str:
        return self.text


@dataclass(frozen=True, slots=True)
class Token:
    kind: str  # "number", "code", "op", "(", ")", "end"
    text: str
    position: int  # 0-based index into the expression


def _error(text: str, position: int, problem: str) -> GlossaryError:
    return GlossaryError(
        f"derivation {quote_input(text)}: {problem} at position {position + 1}; "
        "a derivation uses metric codes, decimal numbers, + - * / and parentheses"
    )


def tokenize(text: str) -> list[Token]:
    """The tokens of ``text``, ending with an ``end`` token."""
    tokens: list[Token] = []
    index = 0
    while index < len(text):
        ch = text[index]
        if ch in " \t\r\n":
            index += 1
            continue
        if ch in "+-*/":
            tokens.append(Token("op", ch, index))
            index += 1
            continue
        if ch in "()":
            tokens.append(Token(ch, ch, index))
            index += 1
            continue
        number = _NUMBER.match(text, index)
        if number is not None:
            end = number.end()
            if end < len(text) and (text[end].isalnum() or text[end] in "._"):
                raise _error(text, index, f"{quote_input(text[index : end + 1])} is not a number")
            tokens.append(Token("number", number.group(0), index))
            index = end
            continue
        name = _NAME.match(text, index)
        if name is not None:
            tokens.append(Token("code", name.group(0), index))
            index = name.end()
            continue
        if ch == "[":
            bracketed = _BRACKETED.match(text, index)
            if bracketed is None or not bracketed.group(1):
                raise _error(text, index, "'[' opens a metric code that is not closed by ']'")
            tokens.append(Token("code", bracketed.group(1), index))
            index = bracketed.end()
            continue
        raise _error(text, index, f"unexpected character {quote_input(ch)}")
    tokens.append(Token("end", "", len(text)))
    return tokens


class _Parser:
    def __init__(self, text: str) -> None:
        self.text = text
        self.tokens = tokenize(text)
        self.index = 0
        self.depth = 0

    @property
    def current(self) -> Token:
        return self.tokens[self.index]

    def advance(self) -> Token:
        token = self.tokens[self.index]
        self.index += 1
        return token

    def unexpected(self, expected: str) -> GlossaryError:
        token = self.current
        found = "the end" if token.kind == "end" else quote_input(token.text)
        return _error(self.text, token.position, f"expected {expected}, found {found}")

    def expression(self) -> Node:
        node = self.term()
        while self.current.kind == "op" and self.current.text in "+-":
            token = self.advance()
            node = BinaryOp(Op(token.text), node, self.term(), token.position)
        return node

    def term(self) -> Node:
        node = self.factor()
        while self.current.kind == "op" and self.current.text in "*/":
            token = self.advance()
            node = BinaryOp(Op(token.text), node, self.factor(), token.position)
        return node

    def factor(self) -> Node:
        token = self.current
        if token.kind == "op" and token.text in "+-":
            self.advance()
            with_depth = self.nested(token)
            operand = self.factor()
            self.depth = with_depth
            return operand if token.text == "+" else Negate(operand, token.position)
        return self.primary()

    def nested(self, token: Token) -> int:
        if self.depth >= MAX_NESTING:
            raise _error(self.text, token.position, f"nesting deeper than {MAX_NESTING} levels")
        self.depth += 1
        return self.depth - 1

    def primary(self) -> Node:
        token = self.current
        if token.kind == "number":
            self.advance()
            return Constant(Decimal(token.text), token.position)
        if token.kind == "code":
            self.advance()
            return MetricRef(token.text, token.position)
        if token.kind == "(":
            self.advance()
            with_depth = self.nested(token)
            node = self.expression()
            if self.current.kind != ")":
                raise self.unexpected(f"')' to close the '(' at position {token.position + 1}")
            self.advance()
            self.depth = with_depth
            return node
        raise self.unexpected("a metric code, a number or '('")


def parse_expression(text: str) -> Expression:
    """Parse a derivation; a :class:`~ragspine.errors.GlossaryError` names the bad position."""
    if len(text) > MAX_EXPRESSION_CHARS:
        raise GlossaryError(
            f"derivation {quote_input(text)} is longer than {MAX_EXPRESSION_CHARS} characters"
        )
    if not text.strip():
        raise GlossaryError("derivation is empty: write a formula such as 'gross_profit / revenue'")
    parser = _Parser(text)
    root = parser.expression()
    if parser.current.kind != "end":
        raise parser.unexpected("an operator (+ - * /) or the end")
    if _depth(root) > MAX_NESTING:  # "a + 1 + 1 + ..." nests without a parenthesis
        raise GlossaryError(
            f"derivation {quote_input(text)} nests more than {MAX_NESTING} operations in one "
            "another: split it into intermediate metrics"
        )
    return Expression(text, root)


def _depth(root: Node) -> int:
    """How many nodes deep the tree under ``root`` goes (walked without recursion)."""
    deepest, stack = 0, [(root, 1)]
    while stack:
        node, depth = stack.pop()
        deepest = max(deepest, depth)
        if isinstance(node, BinaryOp):
            stack += [(node.left, depth + 1), (node.right, depth + 1)]
        elif isinstance(node, Negate):
            stack.append((node.operand, depth + 1))
    return deepest


_PRECEDENCE = {Op.ADD: 1, Op.SUB: 1, Op.MUL: 2, Op.DIV: 2}


def node_text(node: Node) -> str:
    """Canonical text of ``node``: single spaces, parentheses only where precedence needs them,
    bracketed codes where a bare one would not read back."""
    if isinstance(node, Constant):
        return format(node.value, "f")
    if isinstance(node, MetricRef):
        bare = _NAME.fullmatch(node.code) is not None
        return node.code if bare else f"[{node.code}]"
    if isinstance(node, Negate):
        inner = node_text(node.operand)
        return f"-{inner}" if isinstance(node.operand, Constant | MetricRef) else f"-({inner})"
    left = node_text(node.left)
    right = node_text(node.right)
    if isinstance(node.left, BinaryOp) and _PRECEDENCE[node.left.op] < _PRECEDENCE[node.op]:
        left = f"({left})"
    # The parser groups left to right: a right operand of the same precedence needs its own.
    if isinstance(node.right, BinaryOp) and _PRECEDENCE[node.right.op] <= _PRECEDENCE[node.op]:
        right = f"({right})"
    return f"{left} {node.op.value} {right}"
