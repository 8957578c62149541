"""The ``ragspine`` command. Every command calls one library method and maps its errors.

One module per domain in this package (``ragspine.cli.narrative``, ...); each exposes
``register(subparsers)`` which adds its sub-commands and sets ``func(args) -> int`` on them.
What they share (the workspace, the asker, ``--quiet``) is in :mod:`ragspine.cli.common`.
"""

from __future__ import annotations

import argparse
import importlib
import logging
import os
import sys
from collections.abc import Sequence

from ragspine.cli.common import DEFAULT_WORKSPACE
from ragspine.errors import RagSpineError
from ragspine.stores.postgres.database import is_postgres_error, postgres_error

COMMAND_MODULES = (
    "ragspine.cli.demo",
    "ragspine.cli.structured",
    "ragspine.cli.workflows",
    "ragspine.cli.narrative",
    "ragspine.cli.eval",
    "ragspine.cli.answer",
    "ragspine.cli.graph",
    "ragspine.cli.graph_relations",
    "ragspine.cli.serve",
)
_DATASETS = ("tatqa", "convfinqa")
"""The ``ingest`` kinds that land in one transaction."""


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
    _log_to_stderr()
    try:
        code: int = args.func(args)
        sys.stdout.flush()
    except RagSpineError as exc:
        print(f"ragspine: error: {_bounded(str(exc))}", file=sys.stderr)
        return 2
    except KeyboardInterrupt:
        kind = getattr(args, "ingest_command", None)
        if kind in _DATASETS:  # one transaction: rolled back, unless past its commit
            print(
                f"ragspine: interrupted: a {kind} import lands whole or not at all; run the "
                "same command again to be sure it landed (what already landed is skipped)",
                file=sys.stderr,
            )
        elif kind == "facts":  # one transaction per file
            print(
                "ragspine: interrupted: a fact file lands whole or not at all; run the same "
                "command again to be sure it landed",
                file=sys.stderr,
            )
        elif kind is not None:  # what landed stays, whole per document
            print(
                "ragspine: interrupted: the documents written so far stay, each whole; run the "
                "same command again to complete it (what is unchanged is skipped)",
                file=sys.stderr,
            )
        elif args.command == "library" and getattr(args, "action", None) == "vectors":
            print(
                f"ragspine: interrupted: the vectors embedded so far are kept; run 'ragspine "
                f"library vectors {args.name} {args.state}' again to finish",
                file=sys.stderr,
            )
        elif args.command == "reembed":
            print(
                f"ragspine: interrupted: run 'ragspine reembed --library {args.library}' again "
                "to finish",
                file=sys.stderr,
            )
        else:
            print("ragspine: interrupted", file=sys.stderr)
        return 130
    except BrokenPipeError:
        # The reader went away (``ragspine search ... | head``): stop quietly. Point stdout at
        # devnull so the interpreter's final flush does not fail again.
        devnull = os.open(os.devnull, os.O_WRONLY)
        os.dup2(devnull, sys.stdout.fileno())
        return 0
    except Exception as exc:  # a bug: say so in one line, never a traceback
        if is_postgres_error(exc):  # the server went away between two calls
            print(f"ragspine: error: {_bounded(str(postgres_error(exc, '')))}", file=sys.stderr)
            return 2
        if os.environ.get("RAGSPINE_DEBUG"):
            raise
        print(
            f"ragspine: internal error: {type(exc).__name__}: {_bounded(str(exc))} "
            "(set RAGSPINE_DEBUG=1 for the traceback and report it)",
            file=sys.stderr,
        )
        return 1
    return code


def _log_to_stderr() -> None:
    """Show the library's warnings (a writer waiting for a lock, an index being rebuilt) on
    stderr as ``ragspine: ...`` lines."""
    logger = logging.getLogger("ragspine")
    root = logging.getLogger()
    if not root.handlers and not os.environ.get("RAGSPINE_DEBUG"):
        # other libraries' warnings (the database driver's "discarding closed connection",
        # pypdf's repairs) would reach stderr through logging's last resort beside the one
        # line a command ends with; the error itself says what happened
        root.addHandler(logging.NullHandler())
    if not any(getattr(h, "_ragspine_cli", False) for h in logger.handlers):
        handler = logging.StreamHandler(sys.stderr)
        handler.setFormatter(logging.Formatter("ragspine: %(message)s"))
        handler._ragspine_cli = True  # type: ignore[attr-defined]
        logger.addHandler(handler)
        logger.setLevel(logging.WARNING)


def _bounded(text: str, limit: int = 2000) -> str:
    """An error message of bounded length (inputs echoed in it may be huge)."""
    return text if len(text) <= limit else text[: limit - 1] + "…"


if __name__ == "__main__":  # pragma: no cover
    sys.exit(main())
