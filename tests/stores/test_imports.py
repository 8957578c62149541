"""Storage sits under routing and ranking: no module under ``ragspine/stores/`` imports them."""

from __future__ import annotations

import ast
from pathlib import Path

import pytest

STORES = Path(__file__).resolve().parents[2] / "src" / "ragspine" / "stores"
FORBIDDEN = ("ragspine.narrative.retrieve", "ragspine.answer")
MODULES = sorted(STORES.rglob("*.py"))


def imported_modules(source: str, package: str) -> set[str]:
    """Every module a module of ``package`` imports, at any depth (inside functions and
    ``TYPE_CHECKING`` blocks too), with relative imports resolved."""
    found: set[str] = set()
    for node in ast.walk(ast.parse(source)):
        if isinstance(node, ast.Import):
            found.update(alias.name for alias in node.names)
        elif isinstance(node, ast.ImportFrom):
            module = node.module or ""
            if node.level:
                parts = package.split(".")
                base = ".".join(parts[: len(parts) - node.level + 1])
                module = f"{base}.{module}" if module else base
            found.add(module)
            found.update(f"{module}.{alias.name}" for alias in node.names)
    return found


def forbidden(names: set[str]) -> list[str]:
    return sorted(n for n in names if any(n == f or n.startswith(f"{f}.") for f in FORBIDDEN))


def package_of(path: Path) -> str:
    return ".".join(("ragspine", *path.relative_to(STORES.parent).parent.parts))


def test_every_store_module_is_scanned() -> None:
    names = {p.relative_to(STORES).as_posix() for p in MODULES}
    assert {"chunks.py", "embeddings.py", "indexes.py", "sqlite/chunks.py"} <= names


@pytest.mark.parametrize("path", MODULES, ids=lambda p: p.relative_to(STORES).as_posix())
def test_no_store_module_imports_routing_or_ranking(path: Path) -> None:
    source = path.read_text(encoding="utf-8")
    assert forbidden(imported_modules(source, package_of(path))) == []


def test_the_check_sees_hidden_and_relative_imports() -> None:
    source = (
        "from typing import TYPE_CHECKING\n"
        "if TYPE_CHECKING:\n"
        "    from ragspine.narrative.retrieve.profile_router import LibraryProfile\n"
        "def f():\n"
        "    import ragspine.answer.extractive\n"
        "    from ...narrative import retrieve\n"
    )
    assert forbidden(imported_modules(source, "ragspine.stores.sqlite")) == [
        "ragspine.answer.extractive",
        "ragspine.narrative.retrieve",
        "ragspine.narrative.retrieve.profile_router",
        "ragspine.narrative.retrieve.profile_router.LibraryProfile",
    ]
