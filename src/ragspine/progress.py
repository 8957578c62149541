"""Progress bars for long work: tqdm on stderr, shown only on a terminal and never with --quiet.

Library code takes plain callbacks (``progress(done, total, ...)``); only the CLI turns them into
bars through :func:`progress_bar`, so a program that embeds RAGSpine never gets output it did not
ask for.
"""

from __future__ import annotations

import sys
from typing import Any


def progress_bar(
    total: int | None, *, desc: str, unit: str, quiet: bool = False, **options: Any
) -> Any:
    """A ``tqdm`` bar on stderr (chunks/s and ETA); disabled with ``quiet`` or off a terminal.

    Use it as a context manager; ``bar.update(n)`` advances it and ``bar.write(text)`` prints a
    line above it.
    """
    from tqdm import tqdm

    return tqdm(
        total=total,
        desc=desc,
        unit=unit,
        file=sys.stderr,
        disable=True if quiet else None,  # None: tqdm disables itself when stderr is no TTY
        dynamic_ncols=True,
        **options,
    )
