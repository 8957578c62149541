"""A small workspace for the generation tests: the example glossary, a few facts, one report
with numbers in its text, and an ``llm.toml`` pointing at the fake endpoint."""

from __future__ import annotations

from collections.abc import Collection, Mapping, Sequence
from decimal import Decimal
from pathlib import Path

from fake_openai import FakeEndpoint
from ragspine import Principal, Workspace
from ragspine.answer.guard import DraftSentence, GuardDecision, GuardVerdict
from ragspine.security import Sensitivity
from ragspine.structured.facts import Fact, Scale
from ragspine.workspace import example_glossary_text

PUBLIC = Principal.of("public")
CONFIDENTIAL = Principal.of("confidential")

REPORT = """# ACME annual report 2024

## Results

ACME revenue rose 12% in FY2024 because online demand grew strongly in every region.

## Costs

Net income improved after cost savings of 40 million in the plants.

## Outlook

The board expects 3 new plants in Europe next year.
"""
SECRET = "Project Zeppelin: ACME revenue will fall 55% because of the lawsuit in Europe.\n"


def fact(metric: str, period: str, value: str) -> Fact:
    return Fact(
        metric, "acme", period, "total", Decimal(value), "USD", "USD", Scale.ONE,
        f"acme-{period}.pdf", f"p. 4, {metric}", Sensitivity.PUBLIC,
    )  # fmt: skip


FACTS = [fact("revenue", "FY2023", "161529.1"), fact("revenue", "FY2024", "179260.3")]


def build(folder: Path, endpoint: FakeEndpoint, *, stream: bool = False) -> Workspace:
    folder.mkdir(parents=True)
    (folder / "glossary.toml").write_text(example_glossary_text(), encoding="utf-8")
    (folder / "llm.toml").write_text(
        f'base_url = "{endpoint.base_url}"\nmodel = "tiny"\ntimeout = 5\n'
        f"max_retries = 1\nstream = {'true' if stream else 'false'}\n",
        encoding="utf-8",
    )
    docs = folder.parent / "docs"
    docs.mkdir(exist_ok=True)
    (docs / "annual.md").write_text(REPORT, encoding="utf-8")
    (docs / "zeppelin.md").write_text(SECRET, encoding="utf-8")
    ws = Workspace.open(folder)
    ws.facts.write(FACTS)
    ws.ingest_documents([docs / "annual.md"], library="reports")
    ws.ingest_documents([docs / "zeppelin.md"], library="reports", sensitivity="restricted")
    return ws


def guard_off(
    sentences: Sequence[DraftSentence],
    evidence: Mapping[int, str],
    fact_values: Collection[Decimal] = (),
) -> tuple[GuardDecision, ...]:
    """A deliberately broken guard (every sentence kept), for the reverse-proof runs."""
    return tuple(GuardDecision(i, GuardVerdict.KEPT, s.markers) for i, s in enumerate(sentences, 1))
