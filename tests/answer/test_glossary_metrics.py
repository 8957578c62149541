"""A metric the glossary names exactly is never answered with a shorter stored row inside its
name (found by a sixth adversarial pass; the test fails on the code before it)."""

from __future__ import annotations

from decimal import Decimal
from pathlib import Path

import pytest

from ragspine import Principal, Workspace
from ragspine.answer.types import AnswerStatus
from ragspine.security import Sensitivity
from ragspine.structured.facts import Fact, Scale

GLOSSARY = """
[metrics.cash]
label = "Cash"
unit = "USD"
kind = "currency"

[metrics.cash_eq]
label = "Cash and cash equivalents"
unit = "USD"
kind = "currency"

[entities.acme]
label = "ACME Corp"
aliases = ["ACME"]
"""


def _fact(metric: str, value: str, sensitivity: Sensitivity) -> Fact:
    return Fact(
        metric, "acme", "FY2019", "total", Decimal(value), "USD", "USD", Scale.MILLION,
        "acme-2019.pdf", f"p. 9, {metric}", sensitivity,
    )  # fmt: skip


@pytest.mark.parametrize("hidden", [True, False])
def test_a_glossary_metric_without_a_visible_figure_is_not_a_shorter_row(
    tmp_path: Path, hidden: bool
) -> None:
    """'ACME's cash and cash equivalents in 2019' was answered with the row Cash (9) when
    the glossary's 'Cash and cash equivalents' had no figure the asker may see; it is not
    found, in the same words whether its figure is confidential or absent (no oracle)."""
    folder = tmp_path / "ws"
    folder.mkdir()
    (folder / "glossary.toml").write_text(GLOSSARY, encoding="utf-8")
    ws = Workspace.open(folder)
    facts = [_fact("cash", "9", Sensitivity.PUBLIC)]
    if hidden:
        facts.append(_fact("cash_eq", "19", Sensitivity.CONFIDENTIAL))
    ws.facts.write(facts)
    public = ws.ask(
        "What was ACME's cash and cash equivalents in 2019?", principal=Principal.of("public")
    )
    assert public.status is not AnswerStatus.ANSWERED and not public.figures, public.text
    assert "9" not in public.text.replace("2019", ""), public.text
    cash = ws.ask("What was ACME's cash in 2019?", principal=Principal.of("public"))
    assert "was 9 million" in cash.text, cash.text
    if hidden:
        seen = ws.ask(
            "What was ACME's cash and cash equivalents in 2019?",
            principal=Principal.of("confidential"),
        )
        assert "was 19 million" in seen.text, seen.text
    ws.close()
