"""Giving freed memory back to the operating system between the phases of a long job.

CPython frees objects into the C allocator, which keeps most freed pages mapped: after the
lexical phase of a large ingest the process would carry that phase's high-water mark into the
embedding phase, where the model's own memory comes on top. Asking glibc to trim its heaps
returns the free pages; elsewhere (macOS, musl, Windows) this does nothing.
"""

from __future__ import annotations

import ctypes
import ctypes.util
import gc
import sys
from functools import lru_cache
from typing import Any


@lru_cache(maxsize=1)
def _libc() -> Any:
    if not sys.platform.startswith("linux"):
        return None
    try:
        libc = ctypes.CDLL(ctypes.util.find_library("c") or "libc.so.6")
        return libc if hasattr(libc, "malloc_trim") else None
    except OSError:
        return None


def give_back_free_memory() -> bool:
    """Collect garbage and return free heap pages to the system; whether it could trim."""
    gc.collect()
    libc = _libc()
    if libc is None:
        return False
    libc.malloc_trim(0)
    return True
