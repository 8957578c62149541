"""The ``ragspine`` command. Every command calls one library method and maps its errors.

Commands live beside the code they drive (``<domain>/commands.py``); each such module exposes
``register(subparsers)`` which adds its sub-commands and sets ``func(args) -> int`` on them.
"""

from __future__ import annotations

import argparse
import importlib
import logging
import os
import sys
from collections.abc import Sequence

from ragspine.errors import RagSpineError
from ragspine.security import Principal, Sensitivity

COMMAND_MODULES = (
    "ragspine.demo",
    "ragspine.structured.commands",
    "ragspine.workflows.commands",
    "ragspine.narrative.commands",
    "ragspine.eval.commands",
    "ragspine.answer.commands",
)

DEFAULT_WORKSPACE = "./ragspine-data"


def command_group(
    subparsers: argparse._SubParsersAction,
    name: str,
    help_text: str,
) -> argparse._SubParsersAction:
    """The sub-command group ``name`` (e.g. ``ingest``), created on first use, shared by domains."""
    existing = subparsers.choices.get(name)
    if existing is None:
        existing = subparsers.add_parser(name, help=help_text, description=help_text)
        group = existing.add_subparsers(dest=f"{name}_command", metavar="KIND")
        group.required = True
        existing.set_defaults(_group=group)
    group_action: argparse._SubParsersAction = existing.get_default("_group")
    return group_action


def add_principal_arguments(parser: argparse.ArgumentParser) -> None:
    """``--clearance`` and ``--group``: who asks. Every reading command takes the same pair."""
    levels = ", ".join(level.label for level in Sensitivity if level < Sensitivity.RESTRICTED)
    parser.add_argument(
        "--clearance",
        default="public",
        help=f"clearance of the asker: {levels} (default public)",
    )
    parser.add_argument(
        "--group",
        action="append",
        default=[],
        metavar="NAME",
        help="a group the asker belongs to (repeatable; default none)",
    )


def principal_from(args: argparse.Namespace) -> Principal:
    """The principal named by :func:`add_principal_arguments`."""
    return Principal.of(args.clearance, args.group or ())


def add_quiet_argument(parser: argparse.ArgumentParser) -> None:
    """``--quiet``: no progress on stderr (it is also off when stderr is not a terminal)."""
    parser.add_argument("--quiet", action="store_true", help="show no progress on stderr")


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
        print("ragspine: interrupted", file=sys.stderr)
        return 130
    except BrokenPipeError:
        # The reader went away (``ragspine search ... | head``): stop quietly. Point stdout at
        # devnull so the interpreter's final flush does not fail again.
        devnull = os.open(os.devnull, os.O_WRONLY)
        os.dup2(devnull, sys.stdout.fileno())
        return 0
    except Exception as exc:  # a bug: say so in one line, never a traceback
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
