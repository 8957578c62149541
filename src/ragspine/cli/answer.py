"""CLI command ``ask``: answer a question through one route, with cited sources."""

from __future__ import annotations

import argparse
import json
import sys

from ragspine.answer.options import AnswerOptions
from ragspine.cli.common import open_workspace, principal_from
from ragspine.cli.narrative import add_search_arguments, print_notices, search_options

CHANNELS = ("narrative", "structured", "composite")


def _ask(args: argparse.Namespace) -> int:
    if args.channel != "narrative":
        print(
            f"error: the {args.channel} route of 'ask' is not built yet; use --channel narrative "
            "(or 'ragspine metric' for a single structured figure)",
            file=sys.stderr,
        )
        return 2
    with open_workspace(args) as workspace:
        answer = workspace.answer_narrative(
            args.question, search_options(args, AnswerOptions), principal=principal_from(args)
        )
    print_notices(answer.notices)
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
    add_search_arguments(ask, default_top_k=5)
    ask.set_defaults(func=_ask)
