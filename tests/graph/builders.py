"""Small workspaces for graph tests: a glossary text and facts written through the fact store."""

from __future__ import annotations

from collections.abc import Iterable
from decimal import Decimal
from pathlib import Path

from ragspine import Principal, Workspace
from ragspine.security import Sensitivity
from ragspine.structured.facts import Fact, Scale

PUBLIC = Principal.of("public")
INTERNAL = Principal.of("internal")
CONFIDENTIAL = Principal.of("confidential")

GLOSSARY = """
[metrics.revenue]
label = "Revenue"
unit = "USD"
kind = "currency"

[metrics.cogs]
label = "Cost of goods sold"
unit = "USD"
kind = "currency"

[metrics.headcount]
label = "Headcount"
unit = "people"
kind = "count"

[metrics.gross_profit]
label = "Gross profit"
unit = "USD"
kind = "currency"
derivation = "revenue - cogs"

[metrics.gross_margin]
label = "Gross margin"
unit = "%"
kind = "percent"
derivation = "gross_profit / revenue * 100"

[metrics.revenue_per_head]
label = "Revenue per head"
unit = "USD"
kind = "currency"
derivation = "revenue / headcount"

[entities.group]
label = "ACME Group"

[entities.eu]
label = "ACME Europe"
parent = "group"

[entities.us]
label = "ACME US"
parent = "group"

[entities.de]
label = "ACME Germany"
parent = "eu"

[entities.fr]
label = "ACME France"
parent = "eu"

[entities.it]
label = "ACME Italy"
parent = "eu"

[channels.all_sales]
label = "All sales"

[channels.online]
label = "Online"
parent = "all_sales"

[channels.retail]
label = "Retail"
parent = "all_sales"
"""


def fact(
    metric: str,
    entity: str,
    value: str,
    *,
    period: str = "FY2024",
    channel: str = "total",
    unit: str = "USD",
    currency: str = "USD",
    scale: Scale = Scale.ONE,
    sensitivity: Sensitivity = Sensitivity.PUBLIC,
) -> Fact:
    return Fact(
        metric,
        entity,
        period,
        channel,
        Decimal(value),
        unit,
        currency,
        scale,
        f"report-{entity}",
        f"report-{entity}.csv row {metric}",
        sensitivity,
        "2024-12-31",
    )


def make_workspace(path: Path, facts: Iterable[Fact] = (), glossary: str = GLOSSARY) -> Workspace:
    """A workspace at ``path`` with ``glossary`` as its glossary and ``facts`` stored."""
    ws = Workspace.open(path)
    ws.glossary_path.write_text(glossary, encoding="utf-8")
    ws.facts.write(list(facts))
    return ws
