"""What every command module shares: the workspace it opens, who asks, ``--quiet``."""

from __future__ import annotations

import argparse
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

from ragspine.errors import ConfigError
from ragspine.security import Principal, Sensitivity
from ragspine.workspace import Workspace


@contextmanager
def open_workspace(args: argparse.Namespace, *, create: bool = False) -> Iterator[Workspace]:
    """The workspace named by ``--workspace``, closed when the command ends. Reading commands
    need an existing one; ``create=True`` (ingest) makes it when missing."""
    folder = Path(args.workspace)
    local = "://" not in str(args.workspace)  # not a postgresql:// or sqlite:// URL
    if create and local and not folder.exists() and not folder.parent.exists():
        # "--workspace /nonexistent/deep/ws": a typo would make a second, empty workspace
        raise ConfigError(
            f"--workspace {args.workspace}: its folder {folder.parent} does not exist; "
            "create it first, or check the path"
        )
    with Workspace.open(args.workspace, create=create) as workspace:
        yield workspace


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
    principal = Principal.of(args.clearance, args.group or ())
    if principal.clearance >= Sensitivity.RESTRICTED:
        raise ConfigError(
            "--clearance restricted is for no one (restricted content is never shown): use "
            "public, internal or confidential"
        )
    return principal


def question_of(args: argparse.Namespace) -> str:
    """The question argument, refused when it holds nothing to ask."""
    question: str = args.question
    if not question.strip():
        raise ConfigError("the question is empty: pass the words to ask, in quotes")
    return question


def add_quiet_argument(parser: argparse.ArgumentParser) -> None:
    """``--quiet``: no progress on stderr (it is also off when stderr is not a terminal)."""
    parser.add_argument("--quiet", action="store_true", help="show no progress on stderr")
