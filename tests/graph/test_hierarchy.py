"""Hierarchies from the glossary and the cycle finder; cycles and unknown parents fail at load."""

from __future__ import annotations

import tomllib
from pathlib import Path

import pytest

from graph.builders import GLOSSARY
from ragspine.errors import GlossaryError, QueryError
from ragspine.glossary import load_glossary, parse_glossary
from ragspine.graph.api import hierarchies
from ragspine.graph.hierarchy import Hierarchy, find_cycle


def test_find_cycle() -> None:
    assert find_cycle({}) is None
    assert find_cycle({"a": ["b"], "b": ["c"], "c": []}) is None
    assert find_cycle({"a": ["a"]}) == ["a", "a"]
    assert find_cycle({"a": ["b"], "b": ["c"], "c": ["a"], "x": ["a"]}) == ["a", "b", "c", "a"]
    # A diamond is not a cycle.
    assert find_cycle({"a": ["b", "c"], "b": ["d"], "c": ["d"], "d": []}) is None


def test_find_cycle_is_iterative_on_deep_chains() -> None:
    chain = {f"n{i}": [f"n{i + 1}"] for i in range(20_000)}
    assert find_cycle(chain) is None
    chain["n20000"] = ["n0"]
    cycle = find_cycle(chain)
    assert cycle is not None and cycle[0] == cycle[-1] and len(cycle) == 20_002


def test_trees_of_the_glossary() -> None:
    entities, channels = hierarchies(parse_glossary(tomllib.loads(GLOSSARY)))
    assert entities.roots() == ("group",)
    assert entities.children["group"] == ("eu", "us")
    assert entities.children["eu"] == ("de", "fr", "it")
    assert entities.leaves_under("group") == ("de", "fr", "it", "us")
    assert entities.leaves_under("us") == ("us",)
    assert entities.subtree("group") == ("group", "eu", "de", "fr", "it", "us")
    assert entities.path_to_root("fr") == ("fr", "eu", "group")
    assert channels.leaves_under("all_sales") == ("online", "retail")
    with pytest.raises(QueryError, match="entity 'nobody' is not in the glossary"):
        entities.leaves_under("nobody")


def test_a_deep_tree_needs_no_recursion() -> None:
    parents: dict[str, str | None] = {"n0": None}
    parents.update({f"n{i}": f"n{i - 1}" for i in range(1, 5000)})
    tree = Hierarchy.of("entity", parents)
    assert tree.leaves_under("n0") == ("n4999",)
    assert len(tree.path_to_root("n4999")) == 5000


@pytest.mark.parametrize("section", ["entities", "channels"])
def test_parent_cycles_fail_at_load_naming_the_cycle(section: str) -> None:
    document = {
        section: {
            "a": {"label": "A", "parent": "c"},
            "b": {"label": "B", "parent": "a"},
            "c": {"label": "C", "parent": "b"},
        }
    }
    kind = section[:-3] + "y" if section == "entities" else section[:-1]
    with pytest.raises(GlossaryError, match=f"{kind} parents form a cycle: a -> c -> b -> a"):
        parse_glossary(document)


def test_a_channel_with_an_unknown_parent_fails_at_load() -> None:
    with pytest.raises(GlossaryError, match="channel 'web' names unknown parent 'nowhere'"):
        parse_glossary({"channels": {"web": {"label": "Web", "parent": "nowhere"}}})


def test_a_parent_may_live_in_another_glossary_file(tmp_path: Path) -> None:
    (tmp_path / "a.toml").write_text('[entities.acme]\nlabel = "ACME"\nparent = "holding"\n')
    (tmp_path / "b.toml").write_text('[entities.holding]\nlabel = "Holding"\n')
    glossary = load_glossary(tmp_path / "a.toml", tmp_path / "b.toml")
    assert glossary.entities.terms["acme"].parent == "holding"
    with pytest.raises(GlossaryError, match=r"a\.toml.*unknown parent 'holding'"):
        load_glossary(tmp_path / "a.toml")
