"""The ``ragspine`` command. Every command calls one library method and maps its errors.

Commands live beside the code they drive (``<domain>/commands.py``); each such module exposes
``register(subparsers)`` which adds its sub-commands and sets ``func(args) -> int`` on them.
"""

from __future__ import annotations

import argparse
import importlib
import os
import sys
from collections.abc import Sequence

from ragspine.errors import RagSpineError

COMMAND_MODULES = ("ragspine.structured.commands",)

DEFAULT_WORKSPACE = "./ragspine-data"


def build_parser() -> argparse.ArgumentParser:
    """Build the full argument parser with every domain's sub-commands."""
    parser = argparse.ArgumentParser(
        prog="ragspine",
        description="Question answering over business reports that never invents a number.",
    )
    parser.add_argument(
        "--workspace",
        default=os.environ.get("RAGSPINE_WORKSPACE", DEFAULT_WORKSPACE),
        help="workspace folder (default ./ragspine-data, or $RAGSPINE_WORKSPACE)",
    )
    subparsers = parser.add_subparsers(dest="command", metavar="COMMAND")
    subparsers.required = True
    for name in COMMAND_MODULES:
        importlib.import_module(name).register(subparsers)
    return parser


def main(argv: Sequence[str] | None = None) -> int:
    """Run the command line; return the process exit code (2 for a RAGSpine error)."""
    parser = build_parser()
    args = parser.parse_args(argv)
    try:
        code: int = args.func(args)
    except RagSpineError as exc:
        print(f"ragspine: error: {exc}", file=sys.stderr)
        return 2
    except KeyboardInterrupt:
        print("ragspine: interrupted", file=sys.stderr)
        return 130
    return code


if __name__ == "__main__":  # pragma: no cover
    sys.exit(main())
