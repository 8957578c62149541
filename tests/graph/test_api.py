"""Workspace.graph: inputs normalized like query_metric, clear errors, trees follow the glossary."""

from __future__ import annotations

from datetime import date
from decimal import Decimal
from pathlib import Path

import pytest

from graph.builders import GLOSSARY, PUBLIC, fact, make_workspace
from ragspine.errors import QueryError
from ragspine.graph.api import Graph


def test_graph_is_one_object_per_workspace(tmp_path: Path) -> None:
    ws = make_workspace(tmp_path / "ws")
    assert isinstance(ws.graph, Graph) and ws.graph is ws.graph


def test_labels_aliases_and_period_spellings_are_normalized(tmp_path: Path) -> None:
    ws = make_workspace(tmp_path / "ws", [fact("revenue", "de", "1"), fact("revenue", "fr", "2")])
    result = ws.graph.roll_up("  REVENUE ", "acme europe", "fy24", principal=PUBLIC)
    assert (result.metric, result.entity, result.period) == ("revenue", "eu", "FY2024")
    relative = ws.graph.roll_up(
        "revenue", "eu", "last year", principal=PUBLIC, reference_date=date(2025, 3, 1)
    )
    assert relative.period == "FY2024" and relative.value == Decimal("3")


@pytest.mark.parametrize(
    ("args", "message"),
    [
        (("revenu", "eu", "FY2024"), "unknown metric 'revenu'; known values close to it: revenue"),
        (("revenue", "europe", "FY2024"), "unknown entity 'europe'"),
        (("revenue", "eu", "sometime"), "unknown period 'sometime'; periods look like"),
        (("revenue", "eu", "FY2024", "mail order"), "unknown channel 'mail order'"),
    ],
)
def test_unknown_inputs_are_query_errors_with_glossary_suggestions(
    tmp_path: Path, args: tuple[str, ...], message: str
) -> None:
    ws = make_workspace(tmp_path / "ws")
    with pytest.raises(QueryError, match=message):
        ws.graph.roll_up(*args, principal=PUBLIC)
    with pytest.raises(QueryError, match=message):
        ws.graph.derive(*args, principal=PUBLIC)


def test_suggestions_never_come_from_stored_facts(tmp_path: Path) -> None:
    """The glossary is public; fact keys are not: an unknown input is answered from the
    glossary alone, whatever facts are stored."""
    empty = make_workspace(tmp_path / "a")
    full = make_workspace(tmp_path / "b", [fact("revenue", "de", "1")])
    errors = []
    for ws in (empty, full):
        with pytest.raises(QueryError) as caught:
            ws.graph.roll_up("revenu", "d", "FY2024", principal=PUBLIC)
        errors.append(str(caught.value))
    assert errors[0] == errors[1]


def test_trees_follow_a_changed_glossary(tmp_path: Path) -> None:
    ws = make_workspace(tmp_path / "ws", [fact("revenue", "de", "1"), fact("revenue", "us", "5")])
    assert ws.graph.roll_up("revenue", "eu", "FY2024", principal=PUBLIC).value == 1
    moved = GLOSSARY.replace(
        'label = "ACME US"\nparent = "group"', 'label = "ACME US"\nparent = "eu"'
    )
    assert moved != GLOSSARY
    ws.glossary_path.write_text(moved, encoding="utf-8")
    ws._set_glossary(None)
    assert ws.graph.roll_up("revenue", "eu", "FY2024", principal=PUBLIC).value == 6
