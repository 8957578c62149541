"""CLI commands of the graph domain: ``ragspine graph rollup | compare | derive``.

Each calls one method of :class:`~ragspine.graph.api.Graph`. The ``graph`` group is made with
:func:`~ragspine.cli.common.command_group`, so another module may add commands to it.
"""

from __future__ import annotations

import argparse
import json
from pathlib import Path
from typing import Any

from ragspine.cli.common import (
    add_principal_arguments,
    command_group,
    open_workspace,
    principal_from,
)
from ragspine.cli.structured import _reference_date
from ragspine.errors import ConfigError
from ragspine.files import write_text_atomically
from ragspine.graph.render import to_dot, to_svg
from ragspine.graph.rollup import RollUpAxis, RollUpNode
from ragspine.graph.values import TEXT_PLACES, plain
from ragspine.structured.facts import Scale
from ragspine.structured.query import UNSTATED_SCALE

ROUNDING_LINE = (
    f"Values are exact; one with no finite decimal form is shown rounded half-even to "
    f"{TEXT_PLACES} places with its exact fraction (--json: 20 places)."
)


def _print_json(data: dict[str, Any]) -> None:
    print(json.dumps(data, indent=2, ensure_ascii=False))


def _print_tree(root: RollUpNode) -> None:
    stack = [(root, 0)]
    while stack:
        node, depth = stack.pop()
        value = "-" if node.value is None else plain(node.value)
        line = f"{'  ' * depth}{node.code}: {value} [{node.status.value}]"
        if node.children and node.fact is not None:
            scale = node.fact.scale
            said = UNSTATED_SCALE if scale is Scale.UNKNOWN else scale.value
            line += f" reported {plain(node.fact.value)} {said}"
            if node.difference is not None:
                line += f" (difference {plain(node.difference)})"
        print(line)
        stack.extend((child, depth + 1) for child in reversed(node.children))


def cmd_rollup(args: argparse.Namespace) -> int:
    with open_workspace(args) as ws:
        result = ws.graph.roll_up(
            args.metric,
            args.entity,
            args.period,
            args.channel,
            principal=principal_from(args),
            axis=args.over,
            reference_date=_reference_date(args.reference_date),
        )
    if args.json:
        _print_json(result.to_dict())
        return 0
    print(f"[{result.status.value}] {result.text}")
    if args.tree:
        _print_tree(result.tree)
    return 0


def cmd_compare(args: argparse.Namespace) -> int:
    with open_workspace(args) as ws:
        result = ws.graph.compare(
            args.metric,
            entities=args.entity,
            periods=args.period,
            channel=args.channel,
            principal=principal_from(args),
            reference_date=_reference_date(args.reference_date),
        )
    if args.json:
        _print_json(result.to_dict())
        return 0
    print(f"[{result.status.value}]")
    print(result.text)
    print(ROUNDING_LINE)
    return 0


def write_picture(path: Path, text: str, flag: str) -> None:
    """Write a DOT or SVG picture for ``flag`` (a clear error when the file cannot be written)."""
    try:
        write_text_atomically(path, text)
    except OSError as exc:
        raise ConfigError(f"{flag} {path}: cannot write ({exc.strerror or exc})") from None


def cmd_derive(args: argparse.Namespace) -> int:
    with open_workspace(args) as ws:
        result = ws.graph.derive(
            args.metric,
            args.entity,
            args.period,
            args.channel,
            principal=principal_from(args),
            reference_date=_reference_date(args.reference_date),
        )
    if args.dot is not None:
        write_picture(args.dot, to_dot(result.picture()), "--dot")
    if args.svg is not None:
        write_picture(args.svg, to_svg(result.picture()), "--svg")
    if args.json:
        _print_json(result.to_dict())
        return 0
    print(f"[{result.status.value}] {result.text}")
    print(ROUNDING_LINE)
    return 0


def _common(parser: argparse.ArgumentParser, *, many: bool = False) -> None:
    parser.add_argument("--metric", required=True, help="metric code, label or alias")
    if many:
        parser.add_argument(
            "--entity", action="append", required=True, help="an entity (repeatable)"
        )
        parser.add_argument(
            "--period", action="append", required=True, help="a period (repeatable)"
        )
    else:
        parser.add_argument("--entity", required=True)
        parser.add_argument("--period", required=True, help="e.g. FY2024, 2024Q3")
    parser.add_argument("--channel", help="channel (default total)")
    parser.add_argument("--reference-date", help="ISO date for relative periods (default today)")
    parser.add_argument("--json", action="store_true", help="print one JSON object")
    add_principal_arguments(parser)


def register(subparsers: argparse._SubParsersAction) -> None:
    """Add ``graph rollup``, ``graph compare`` and ``graph derive``."""
    graph = command_group(
        subparsers, "graph", "roll-ups, comparisons and derivations over stored facts"
    )
    p = graph.add_parser(
        "rollup", help="sum a metric over the entities (or channels) under one in the glossary"
    )
    _common(p)
    p.add_argument(
        "--over",
        choices=[axis.value for axis in RollUpAxis],
        default=RollUpAxis.ENTITY.value,
        help="which glossary tree to sum over (default entity)",
    )
    p.add_argument("--tree", action="store_true", help="also print every subtotal")
    p.set_defaults(func=cmd_rollup)

    p = graph.add_parser(
        "compare", help="one metric over several entities and/or periods, with changes"
    )
    _common(p, many=True)
    p.set_defaults(func=cmd_compare)

    p = graph.add_parser("derive", help="compute a metric from its glossary derivation")
    _common(p)
    p.add_argument("--dot", type=Path, metavar="FILE", help="write the tree as Graphviz DOT")
    p.add_argument("--svg", type=Path, metavar="FILE", help="write the tree as SVG")
    p.set_defaults(func=cmd_derive)
