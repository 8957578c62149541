"""CLI commands of the structured channel."""

from __future__ import annotations

import argparse


def register(subparsers: argparse._SubParsersAction) -> None:  # type: ignore[type-arg]
    """Add the structured-channel commands."""
