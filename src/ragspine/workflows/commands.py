"""CLI commands for Dify workflow exports: ``ragspine workflow preview FILE``."""

from __future__ import annotations

import argparse
import sys
import warnings
from pathlib import Path

from ragspine.errors import ConfigError
from ragspine.workflows.preview import WorkflowVersionWarning, preview


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
    output.add_argument("--svg", metavar="OUT", type=Path, help="write an SVG drawing to OUT")
    command.set_defaults(func=run_preview)


def run_preview(args: argparse.Namespace) -> int:
    """Preview ``args.file`` as a summary, JSON (``--json``) or an SVG file (``--svg OUT``)."""
    with warnings.catch_warnings(record=True):
        warnings.simplefilter("ignore", WorkflowVersionWarning)
        result = preview(args.file)
    for message in result.warnings:
        print(f"ragspine: warning: {message}", file=sys.stderr)
    if args.json:
        print(result.to_json())
    elif args.svg is not None:
        try:
            args.svg.write_text(result.to_svg(), encoding="utf-8")
        except OSError as exc:
            raise ConfigError(f"cannot write SVG to {args.svg}: {exc.strerror}") from None
        print(f"wrote {args.svg} ({len(result.nodes)} nodes, {len(result.edges)} edges)")
    else:
        print(result.summary())
    return 0
