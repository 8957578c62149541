"""CLI command ``ask``: answer a question through the route its words choose, with sources."""

from __future__ import annotations

import argparse
import json

from ragspine.answer.locale import Locale
from ragspine.answer.options import AskChannel, AskOptions
from ragspine.cli.common import open_workspace, principal_from, question_of
from ragspine.cli.narrative import add_search_arguments, print_notices, search_options
from ragspine.cli.structured import _reference_date


def _ask(args: argparse.Namespace) -> int:
    options = search_options(args, AskOptions)
    options = options.with_changes(
        {
            "channel": args.channel,
            "entity": args.entity,
            "locale": args.locale,
            "provider": args.provider,
            "agent": args.agent,
        }
    )
    reference = _reference_date(args.reference_date)
    with open_workspace(args) as workspace:
        answer = workspace.ask(
            question_of(args), options, principal=principal_from(args), reference_date=reference
        )
    print_notices(answer.notices)
    if args.json:
        print(json.dumps(answer.to_dict(), indent=2, ensure_ascii=False))
    else:
        print(answer.render())
    return 0


def register(subparsers: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    """Add the ``ask`` command."""
    ask = subparsers.add_parser(
        "ask",
        help="answer a question: figures from the facts, cited text from the documents, or both",
    )
    ask.add_argument("question")
    ask.add_argument(
        "--channel",
        default=AskChannel.AUTO.value,
        help="which route answers: auto (from the question's glossary terms and cue words), "
        "structured, narrative or composite (default auto)",
    )
    ask.add_argument(
        "--entity", help="the entity a question that names none is about (a glossary entity)"
    )
    ask.add_argument(
        "--locale",
        help=f"language of fixed texts and numbers: {', '.join(loc.value for loc in Locale)} "
        "(default: the glossary's [answers] locale, else en)",
    )
    ask.add_argument(
        "--reference-date",
        metavar="YYYY-MM-DD",
        help="the date relative periods such as 'last quarter' are read against (default today)",
    )
    ask.add_argument(
        "--provider",
        help="who writes the narrative part: extractive (offline) or openai (an "
        "OpenAI-compatible endpoint from llm.toml or RAGSPINE_LLM_*; default: the workspace's "
        "llm.toml, else extractive)",
    )
    ask.add_argument(
        "--agent",
        action="store_true",
        help="let the model call query_metric, compare and search_documents and so choose "
        "the route (needs --provider openai)",
    )
    add_search_arguments(ask, default_top_k=5)
    ask.set_defaults(func=_ask)
