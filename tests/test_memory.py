"""Giving freed memory back between the phases of a long job."""

from __future__ import annotations

import json
import subprocess
import sys

import pytest

from ragspine import memory

SCENARIO = """
import json, sys
from ragspine import memory
def rss():
    with open("/proc/self/status") as status:
        return next(int(l.split()[1]) // 1024 for l in status if l.startswith("VmRSS"))
before = rss()
# Blocks past CPython's small-object allocator, so C malloc holds them; the last one stays, at
# the top of the heap, so freeing the others returns nothing by itself.
held = [bytes(1000) + str(i).encode() for i in range(100_000)]
grown = rss()
del held[:-1]
freed = rss()
trimmed = memory.give_back_free_memory() if sys.argv[1] == "trim" else False
print(json.dumps([before, grown, freed, rss(), trimmed]))
"""


def _run(mode: str) -> list[int]:
    out = subprocess.run(
        [sys.executable, "-c", SCENARIO, mode], capture_output=True, text=True, check=True
    )
    result: list[int] = json.loads(out.stdout)
    return result


@pytest.mark.skipif(not sys.platform.startswith("linux"), reason="glibc heaps only")
def test_freed_memory_goes_back_to_the_system() -> None:
    before, grown, freed, after, trimmed = _run("trim")
    assert grown - before > 50 and trimmed
    assert freed - before > (grown - before) / 2  # freed, yet still held by the process
    assert after - before < (grown - before) / 2  # given back
    before, grown, freed, after, trimmed = _run("keep")  # reverse proof: without it, kept
    assert after - before > (grown - before) / 2


def test_it_does_nothing_where_there_is_no_glibc(monkeypatch: pytest.MonkeyPatch) -> None:
    memory._libc.cache_clear()
    monkeypatch.setattr(memory.sys, "platform", "darwin")
    try:
        assert memory.give_back_free_memory() is False
    finally:
        memory._libc.cache_clear()
