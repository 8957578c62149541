"""CLI command ``ask``: answer a question through one route, with cited sources."""

from __future__ import annotations

import argparse
import json
import sys

from ragspine.security import Principal
from ragspine.workspace import Workspace

CHANNELS = ("narrative", "structured", "composite")


def _ask(args: argparse.Namespace) -> int:
    if args.channel != "narrative":
        print(
            f"error: the {args.channel} route of 'ask' is not built yet; use --channel narrative "
            "(or 'ragspine metric' for a single structured figure)",
            file=sys.stderr,
        )
        return 2
    workspace = Workspace.open(args.workspace)
    answer = workspace.answer_narrative(
        args.question,
        libraries=args.library or None,
        mode=args.mode,
        top_k=args.top_k,
        filters=args.filter or None,
        principal=Principal.of(args.clearance),
        extract_filters=args.extract_filters,
    )
    if args.json:
        print(json.dumps(answer.to_dict(), indent=2, ensure_ascii=False))
    else:
        print(answer.render())
    return 0


def register(subparsers: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    """Add the ``ask`` command."""
    ask = subparsers.add_parser("ask", help="answer a question with cited sources")
    ask.add_argument("question")
    ask.add_argument(
        "--channel",
        choices=CHANNELS,
        default="narrative",
        help="which route answers (only narrative is built so far)",
    )
    ask.add_argument("--library", action="append", help="library to search (repeatable)")
    ask.add_argument("--mode", default="bm25", help="retrieval mode (default bm25)")
    ask.add_argument("--top-k", type=int, default=5, help="snippets to answer from (default 5)")
    ask.add_argument(
        "--filter", action="append", metavar="EXPR", help="metadata filter (repeatable, ANDed)"
    )
    ask.add_argument(
        "--extract-filters",
        action="store_true",
        help="also filter by glossary entities named in the question",
    )
    ask.add_argument("--clearance", default="public", help="the asker's clearance level")
    ask.add_argument("--json", action="store_true", help="print one JSON object")
    ask.set_defaults(func=_ask)
