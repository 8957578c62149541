"""The safe loader: limits, plain types, duplicate keys and the DSL header checks."""

from __future__ import annotations

import time
import warnings
from pathlib import Path

import pytest
from wf_builders import edge, export, node

from ragspine.errors import ConfigError, WorkflowError
from ragspine.workflows import PreviewLimits, WorkflowVersionWarning, preview
from ragspine.workflows.dsl import load_dsl, load_plain, read_source

BILLION_LAUGHS = "\n".join(
    [
        'lol0: &l0 ["lol", "lol", "lol", "lol", "lol", "lol", "lol", "lol", "lol", "lol"]',
        *(f"lol{i}: &l{i} [{', '.join([f'*l{i - 1}'] * 10)}]" for i in range(1, 10)),
    ]
)
SECRET = "Zq8-planted-value-4471"


def test_billion_laughs_fails_fast_with_a_clear_error() -> None:
    started = time.perf_counter()
    with pytest.raises(WorkflowError, match="billion laughs"):
        load_plain(BILLION_LAUGHS)
    assert time.perf_counter() - started < 1.0


def test_billion_laughs_is_stopped_by_the_expansion_limit_itself() -> None:
    # A loader without the expansion budget accepts the bomb: the limit is what protects us.
    lifted = PreviewLimits(max_alias_expansion=10**12)
    assert len(load_plain(BILLION_LAUGHS, limits=lifted)["lol9"]) == 10


def test_alias_count_is_capped() -> None:
    text = "base: &b x\nitems:\n" + "".join("  - *b\n" for _ in range(101))
    with pytest.raises(WorkflowError, match="more than 100 YAML aliases"):
        load_plain(text)
    assert len(load_plain(text, limits=PreviewLimits(max_aliases=200))["items"]) == 101


def test_small_aliases_are_plain_values() -> None:
    assert load_plain("a: &x {k: 1}\nb: *x\n") == {"a": {"k": 1}, "b": {"k": 1}}


@pytest.mark.parametrize("text", ["a: " + "[" * 70 + "]" * 70, "{a: " * 70 + "1" + "}" * 70])
def test_yaml_nesting_depth_is_capped(text: str) -> None:
    with pytest.raises(WorkflowError, match="nests deeper than 64"):
        load_plain(text)


def test_json_nesting_depth_is_capped_even_past_the_recursion_limit() -> None:
    for depth in (70, 100_000):
        with pytest.raises(WorkflowError, match="nests deeper than 64"):
            load_plain('{"a": ' + "[" * depth + "]" * depth + "}")


@pytest.mark.parametrize(
    "text",
    [f"a: 1\nb: {SECRET}\na: {SECRET}\n", f'{{"a": "{SECRET}", "a": "{SECRET}"}}'],
)
def test_duplicate_keys_are_rejected_without_echoing_values(text: str) -> None:
    with pytest.raises(WorkflowError, match="duplicate") as info:
        load_plain(text)
    assert SECRET not in str(info.value)


@pytest.mark.parametrize(
    "text",
    [
        f"a: !!python/object:os.system {SECRET}\n",
        f"a: !!binary {SECRET}\n",
        f"a: !!set {{{SECRET}: null}}\n",
        f"a: !custom {SECRET}\n",
        f"base: &b {{k: {SECRET}}}\nc:\n  <<: *b\n",
    ],
)
def test_only_plain_types_are_built(text: str) -> None:
    with pytest.raises(WorkflowError) as info:
        load_plain(text)
    assert SECRET not in str(info.value)


def test_scalars_resolve_like_yaml_safe_load() -> None:
    text = "a: 1\nb: 1.5\nc: true\nd: null\ne: '0.3.1'\nf: 0.3.1\ng: 2024-01-02\nh: 0x10\n"
    assert load_plain(text) == {
        "a": 1,
        "b": 1.5,
        "c": True,
        "d": None,
        "e": "0.3.1",
        "f": "0.3.1",
        "g": "2024-01-02",
        "h": 16,
    }


def test_invalid_yaml_names_the_line_not_the_value() -> None:
    with pytest.raises(WorkflowError, match="near line 3") as info:
        load_plain(f"a: 1\nb: [{SECRET}\n")
    assert SECRET not in str(info.value)


def test_multiple_documents_are_rejected() -> None:
    with pytest.raises(WorkflowError, match="exactly one"):
        load_plain("a: 1\n---\nb: 2\n")


def test_size_limit_applies_to_text_bytes_and_files(tmp_path: Path) -> None:
    text = export([node("a")], [])
    small = PreviewLimits(max_bytes=50)
    path = tmp_path / "big.yml"
    path.write_text(text)
    for source in (text, text.encode(), path):
        with pytest.raises(WorkflowError, match="over the limit of 50"):
            read_source(source, limits=small)


def test_source_kinds(tmp_path: Path) -> None:
    text = export([node("a")], [])
    path = tmp_path / "app.yml"
    path.write_text(text, encoding="utf-8")
    expected = preview(text)
    assert preview(path) == expected
    assert preview(str(path)) == expected
    assert preview(text.encode("utf-8")) == expected
    with pytest.raises(ConfigError, match="not found"):
        preview(tmp_path / "missing.yml")
    with pytest.raises(WorkflowError, match="not UTF-8"):
        preview(b"app: \xff\xfe\n")


def test_json_exports_are_accepted() -> None:
    import json

    import yaml

    doc = yaml.safe_load(export([node("a"), node("b")], [edge("a", "b", edge_id="e1")]))
    result = preview(json.dumps(doc))
    assert [n.id for n in result.nodes] == ["a", "b"]
    assert [e.id for e in result.edges] == ["e1"]


@pytest.mark.parametrize("version", ["0.1.0", "0.3.1", "0.6.0"])
def test_supported_versions_load_without_warning(version: str) -> None:
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        assert load_dsl(export([node("a")], [], version=version)).warnings == ()


def test_newer_version_warns_but_loads() -> None:
    with pytest.warns(WorkflowVersionWarning, match="newer than 0.6.0"):
        result = preview(export([node("a")], [], version="0.7.2"))
    assert result.warnings and len(result.nodes) == 1


@pytest.mark.parametrize(
    ("changes", "message"),
    [
        ({"version": 0.3}, "must be a string"),
        ({"version": 1}, "must be a string"),
        ({"version": "banana"}, "MAJOR.MINOR.PATCH"),
        ({"version": "0.0.9"}, "older than 0.1.0"),
        ({"kind": "rag_pipeline"}, "kind 'app'"),
        ({"mode": "chat"}, "app.mode must be one of workflow, advanced-chat"),
        ({"mode": "agent-chat"}, "app.mode must be one of"),
        ({"mode": SECRET}, "app.mode must be one of"),
        ({"kind": SECRET}, "kind 'app'"),
        ({"version": SECRET}, "MAJOR.MINOR.PATCH"),
    ],
)
def test_header_errors_are_clear(changes: dict, message: str) -> None:
    arguments = {"version": "0.3.1", "mode": "workflow", "kind": "app", **changes}
    with pytest.raises(WorkflowError, match=message) as info:
        load_dsl(export([node("a")], [], **arguments))
    assert SECRET not in str(info.value)


def test_missing_graph_is_an_error() -> None:
    with pytest.raises(WorkflowError, match=r"workflow\.graph"):
        load_dsl("app: {mode: workflow, name: x}\nkind: app\nversion: '0.3.1'\n")


def test_huge_integers_are_refused_clearly() -> None:
    """A review: a coordinate of 401 digits was an OverflowError and an integer of 5,001
    digits anywhere (an id, an unread field) Python's own ValueError: each an internal error,
    a 500 over HTTP."""
    far = export([node("a", "start", x=0, y=0)], []).replace("x: 0", "x: 1" + "0" * 400)
    with pytest.raises(WorkflowError, match="position x that is not finite or beyond"):
        preview(far, warn=False)
    long_number = "7" * 5001
    for text in (
        export([node("a", "start", x=0, y=0)], []) + f"unread: {long_number}\n",
        '{"kind": "app", "version": "0.3.1", "n": ' + long_number + "}",
    ):
        with pytest.raises(WorkflowError, match="integer too long to read"):
            preview(text, warn=False)
