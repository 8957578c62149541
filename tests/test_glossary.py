from __future__ import annotations

import re
import tomllib
from pathlib import Path

import pytest

from ragspine.errors import GlossaryError
from ragspine.glossary import TermType, load_glossary, parse_glossary, render_glossary
from ragspine.workspace import example_glossary_text

README = Path(__file__).resolve().parents[1] / "README.md"


@pytest.fixture()
def glossary():  # type: ignore[no-untyped-def]
    return parse_glossary(tomllib.loads(example_glossary_text()))


def test_matching_ignores_case_and_whitespace(glossary) -> None:  # type: ignore[no-untyped-def]
    assert glossary.metrics.resolve("  NET   Sales ") == "revenue"
    assert glossary.entities.resolve("acme") == "acme"
    assert glossary.channels.resolve("E-Commerce") == "online"
    assert glossary.channels.resolve("total") == "total"
    assert glossary.metrics.resolve("revenues") is None  # exact, never a guess


def test_find_terms_respects_word_boundaries(glossary) -> None:  # type: ignore[no-untyped-def]
    assert glossary.find_terms("a going concern for the board") == []
    hits = glossary.find_terms("Net sales of ACME CN via e-commerce")
    found = {(h.type, h.code) for h in hits}
    assert (TermType.METRIC, "revenue") in found
    assert (TermType.ENTITY, "acme_cn") in found  # longest match wins over "ACME"
    assert (TermType.ENTITY, "acme") not in found
    assert (TermType.CHANNEL, "online") in found


def test_alias_claimed_twice_names_both() -> None:
    doc = tomllib.loads(
        '[metrics.revenue]\nlabel="Revenue"\naliases=["sales"]\n'
        '[metrics.net_sales]\nlabel="Net sales"\naliases=["Sales"]\n'
    )
    with pytest.raises(GlossaryError, match=r"'revenue' and 'net_sales'"):
        parse_glossary(doc)


def test_bad_kind_and_unknown_parent_are_errors() -> None:
    with pytest.raises(GlossaryError, match="kind 'money'"):
        parse_glossary({"metrics": {"x": {"label": "X", "kind": "money"}}})
    with pytest.raises(GlossaryError, match="unknown parent 'nobody'"):
        parse_glossary({"entities": {"x": {"label": "X", "parent": "nobody"}}})


def test_render_round_trips(glossary, tmp_path: Path) -> None:  # type: ignore[no-untyped-def]
    path = tmp_path / "g.toml"
    path.write_text(render_glossary(glossary), encoding="utf-8")
    again = load_glossary(path)
    assert sorted(again.terms(), key=repr) == sorted(glossary.terms(), key=repr)
    assert again.fiscal_year_start_month == glossary.fiscal_year_start_month


def test_readme_glossary_example_loads() -> None:
    text = README.read_text(encoding="utf-8")
    blocks = re.findall(r"```toml\n(.*?)```", text, flags=re.S)
    glossary_blocks = [b for b in blocks if "[metrics." in b]
    assert glossary_blocks, "README must show a full glossary example"
    glossary = parse_glossary(tomllib.loads(glossary_blocks[0]))
    assert glossary.metrics.terms and glossary.entities.terms and glossary.channels.terms
