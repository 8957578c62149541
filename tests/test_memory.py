"""Giving freed memory back between the phases of a long job."""

from __future__ import annotations

import sys

import pytest

from ragspine import memory


def _rss_mib() -> int:
    with open("/proc/self/status", encoding="ascii") as status:
        for line in status:
            if line.startswith("VmRSS"):
                return int(line.split()[1]) // 1024
    raise AssertionError("no VmRSS line")


@pytest.mark.skipif(not sys.platform.startswith("linux"), reason="glibc heaps only")
def test_freed_memory_goes_back_to_the_system() -> None:
    before = _rss_mib()
    # Blocks past CPython's small-object allocator, so C malloc holds them; the last one stays,
    # at the top of the heap, so freeing the others returns nothing by itself.
    held = [bytes(1000) + str(i).encode() for i in range(100_000)]
    grown = _rss_mib()
    assert grown - before > 50
    del held[:-1]
    assert _rss_mib() - before > (grown - before) / 2  # freed, yet still held by the process
    assert memory.give_back_free_memory()
    assert _rss_mib() - before < (grown - before) / 2


def test_it_does_nothing_where_there_is_no_glibc(monkeypatch: pytest.MonkeyPatch) -> None:
    memory._libc.cache_clear()
    monkeypatch.setattr(memory.sys, "platform", "darwin")
    try:
        assert memory.give_back_free_memory() is False
    finally:
        memory._libc.cache_clear()
