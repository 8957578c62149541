"""CLI commands for Dify workflow exports: ``ragspine workflow preview FILE``."""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

from ragspine.workflows.output import check_not_source, write_text_atomically
from ragspine.workflows.preview import preview


def register(subparsers: argparse._SubParsersAction) -> None:
    """Add ``workflow preview``."""
    workflow = subparsers.add_parser("workflow", help="inspect Dify workflow exports")
    actions = workflow.add_subparsers(dest="workflow_command", metavar="ACTION")
    actions.required = True
    command = actions.add_parser(
        "preview",
        help="print a redacted preview of a Dify workflow export (YAML or JSON)",
        description=(
            "Show the nodes, edges, branch labels and geometry of a Dify workflow export. "
            "Prompts, code, credentials and variables are never read into the output."
        ),
    )
    command.add_argument("file", type=Path, help="Dify DSL export (.yml, .yaml or .json)")
    output = command.add_mutually_exclusive_group()
    output.add_argument("--json", action="store_true", help="print the preview v1 JSON object")
    output.add_argument(
        "--svg",
        metavar="OUT",
        type=Path,
        help="write an SVG drawing to OUT (never the input file; written whole or not at all)",
    )
    command.set_defaults(func=run_preview)


def run_preview(args: argparse.Namespace) -> int:
    """Preview ``args.file`` as a summary, JSON (``--json``) or an SVG file (``--svg OUT``).

    Warnings go to stderr, once each.
    """
    if args.svg is not None:
        check_not_source(args.svg, args.file)
    result = preview(args.file, warn=False)
    for message in result.warnings:
        print(f"ragspine: warning: {message}", file=sys.stderr)
    if args.json:
        print(result.to_json())
    elif args.svg is not None:
        write_text_atomically(args.svg, result.to_svg())
        print(f"wrote {args.svg} ({len(result.nodes)} nodes, {len(result.edges)} edges)")
    else:
        print(result.summary())
    return 0
