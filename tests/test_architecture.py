"""ARCHITECTURE.md stays true (every module it names exists); tests mirror the source tree."""

from __future__ import annotations

import re
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]


def test_every_module_named_in_architecture_md_exists() -> None:
    text = (ROOT / "ARCHITECTURE.md").read_text(encoding="utf-8")
    named = set(re.findall(r"ragspine/[A-Za-z0-9_/]+(?:\.py|/)", text))
    assert len(named) > 30  # the map names the modules, not just the package
    missing = sorted(path for path in named if not (ROOT / "src" / path).exists())
    assert missing == []


def test_every_source_folder_is_a_package() -> None:
    src = ROOT / "src" / "ragspine"
    folders = [p for p in src.rglob("*") if p.is_dir() and any(p.glob("*.py"))]
    missing = sorted(str(f.relative_to(src)) for f in folders if not (f / "__init__.py").exists())
    assert missing == []


def test_every_test_folder_mirrors_a_source_package() -> None:
    """``tests/a/b/`` holds the tests of ``ragspine/a/b/`` (``contracts`` folders hold the
    suites every backend runs); helper modules may sit beside the tests."""
    src = ROOT / "src" / "ragspine"
    tests = ROOT / "tests"
    folders = [p for p in tests.rglob("*") if p.is_dir() and any(p.glob("test_*.py"))]
    strays = [
        str(f.relative_to(tests))
        for f in folders
        if f != tests and not (src / f.relative_to(tests)).is_dir()
    ]
    assert strays == []
