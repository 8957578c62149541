"""The ``ragspine`` command: :func:`main` in :mod:`ragspine.cli.app`, one module per domain."""

from ragspine.cli.app import main

__all__ = ["main"]
