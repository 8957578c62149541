"""``Workspace.graph``: roll-ups, comparisons and derivations as one explicit surface.

Inputs are glossary spellings and period strings, normalized like ``query_metric`` does; an
unknown one is a :class:`~ragspine.errors.QueryError` whose suggestions come from the glossary or
the period grammar only. Facts are read at the asker's level through the fact store, so what a
principal may not see is read exactly like what is missing.
"""

from __future__ import annotations

from collections.abc import Sequence
from datetime import date
from functools import lru_cache
from pathlib import Path
from typing import TYPE_CHECKING

from ragspine.errors import PeriodError, QueryError, quote_input
from ragspine.glossary import DEFAULT_CHANNEL, Glossary, Vocabulary
from ragspine.graph.compare import CompareResult, compare
from ragspine.graph.derive import DeriveResult, derive
from ragspine.graph.hierarchy import Hierarchy
from ragspine.graph.neighbourhood import EdgeList, Neighbourhood
from ragspine.graph.relations import Edge, EdgeKind, Origin
from ragspine.graph.rollup import RollUpAxis, RollUpResult, roll_up
from ragspine.periods import PERIOD_EXAMPLES, parse_period, suggest_periods
from ragspine.security import Principal, max_visible_level
from ragspine.stores.sqlite.errors import translate_read_errors

if TYPE_CHECKING:
    from ragspine.workspace import Workspace

MAX_ITEMS = 1000
"""A comparison of more entity x period items than this is refused."""

_level_of = lru_cache(maxsize=256)(max_visible_level)


def hierarchies(glossary: Glossary) -> tuple[Hierarchy, Hierarchy]:
    """The entity and channel trees of ``glossary``."""
    return (
        Hierarchy.of("entity", {t.code: t.parent for t in glossary.entities.terms.values()}),
        Hierarchy.of("channel", {t.code: t.parent for t in glossary.channels.terms.values()}),
    )


def _code(vocabulary: Vocabulary, raw: str) -> str:
    code = vocabulary.resolve(raw)
    if code is None:
        suggestions = vocabulary.suggest(raw)
        hint = f"; known values close to it: {', '.join(suggestions)}" if suggestions else ""
        raise QueryError(f"unknown {vocabulary.type} {quote_input(raw)}{hint}")
    return code


class Graph:
    """Graph answers over one workspace's glossary and facts (see the module docstring)."""

    def __init__(self, workspace: Workspace) -> None:
        self._workspace = workspace
        self.path: Path = workspace.path
        # The trees of the glossary they were built from, replaced whole when it changes.
        self._trees: tuple[Glossary, Hierarchy, Hierarchy] | None = None

    # -- the relation graph (stored edges; see ragspine.graph.neighbourhood) ---------------

    def edges(
        self,
        *,
        principal: Principal,
        kind: str | EdgeKind | None = None,
        origin: str | Origin | None = None,
        verified: bool | None = None,
        node: str | None = None,
        limit: int | None = None,
    ) -> EdgeList:
        """Relation edges ``principal`` may see, narrowed by kind, origin, the verified flag
        and a node at either end (:meth:`RelationGraph.edges`)."""
        return self._workspace.relations.edges(
            principal=principal, kind=kind, origin=origin, verified=verified, node=node, limit=limit
        )

    def neighbours(
        self,
        node: str,
        *,
        principal: Principal,
        depth: int = 1,
        kind: str | EdgeKind | None = None,
        origin: str | Origin | None = None,
        verified: bool | None = None,
    ) -> Neighbourhood:
        """The nodes within ``depth`` visible edges of ``node`` (:meth:`RelationGraph.neighbours`);
        ``.picture()`` draws it."""
        return self._workspace.relations.neighbours(
            node, principal=principal, depth=depth, kind=kind, origin=origin, verified=verified
        )

    def verify_edge(self, edge_id: str, *, by: Principal) -> Edge:
        """A named person confirms a (model-derived) edge they may see."""
        return self._workspace.relations.verify_edge(edge_id, by=by)

    def trees(self, glossary: Glossary) -> tuple[Hierarchy, Hierarchy]:
        """The entity and channel trees of ``glossary`` (built once per glossary)."""
        cached = self._trees
        if cached is None or cached[0] is not glossary:
            cached = self._trees = (glossary, *hierarchies(glossary))
        return cached[1], cached[2]

    def _period(self, raw: str, reference_date: date | None) -> str:
        glossary = self._workspace.glossary
        reference = reference_date or date.today()
        try:
            return parse_period(raw, reference, glossary.fiscal_year_start_month).label
        except PeriodError:
            suggestions = suggest_periods(raw, reference)
            hint = ", ".join(suggestions or PERIOD_EXAMPLES)
            raise QueryError(
                f"unknown period {quote_input(raw)}; periods look like {hint}"
            ) from None

    def _channel(self, raw: str | None) -> str:
        glossary = self._workspace.glossary
        return DEFAULT_CHANNEL if raw is None else _code(glossary.channels, raw)

    @translate_read_errors
    def roll_up(
        self,
        metric: str,
        entity: str,
        period: str,
        channel: str | None = None,
        *,
        principal: Principal,
        axis: RollUpAxis | str = RollUpAxis.ENTITY,
        reference_date: date | None = None,
    ) -> RollUpResult:
        """``metric`` summed over the leaf entities under ``entity`` (``axis="channel"``: over
        the leaf channels under ``channel`` for one entity); see
        :class:`~ragspine.graph.rollup.RollUpResult`."""
        glossary = self._workspace.glossary
        try:
            chosen_axis = RollUpAxis(axis)
        except ValueError:
            valid = ", ".join(a.value for a in RollUpAxis)
            raise QueryError(f"unknown roll-up axis {quote_input(axis)}: use {valid}") from None
        entities, channels = self.trees(glossary)
        return roll_up(
            glossary,
            entities if chosen_axis is RollUpAxis.ENTITY else channels,
            self._workspace.facts,
            metric=_code(glossary.metrics, metric),
            entity=_code(glossary.entities, entity),
            period=self._period(period, reference_date),
            channel=self._channel(channel),
            max_level=_level_of(principal),
            axis=chosen_axis,
        )

    @translate_read_errors
    def derive(
        self,
        metric: str,
        entity: str,
        period: str,
        channel: str | None = None,
        *,
        principal: Principal,
        reference_date: date | None = None,
    ) -> DeriveResult:
        """``metric`` computed from its glossary derivation; see
        :class:`~ragspine.graph.derive.DeriveResult`."""
        glossary = self._workspace.glossary
        return derive(
            glossary,
            self._workspace.facts,
            metric=_code(glossary.metrics, metric),
            entity=_code(glossary.entities, entity),
            period=self._period(period, reference_date),
            channel=self._channel(channel),
            max_level=_level_of(principal),
        )

    @translate_read_errors
    def compare(
        self,
        metric: str,
        *,
        entities: Sequence[str] | None = None,
        periods: Sequence[str] | None = None,
        channel: str | None = None,
        principal: Principal,
        reference_date: date | None = None,
    ) -> CompareResult:
        """``metric`` for every entity x period (entities outer, both in the order given); see
        :class:`~ragspine.graph.compare.CompareResult`."""
        if isinstance(entities, str) or isinstance(periods, str):
            raise QueryError("entities and periods are lists: pass ['acme'], not 'acme'")
        if not entities or not periods:
            raise QueryError(
                "compare needs at least one entity and one period, and two items in all "
                "(e.g. entities=['acme', 'acme_cn'], periods=['FY2024'])"
            )
        if len(entities) * len(periods) > MAX_ITEMS:
            raise QueryError(
                f"compare of {len(entities) * len(periods):,} items: at most {MAX_ITEMS:,}"
            )
        glossary = self._workspace.glossary
        entity_codes = list(dict.fromkeys(_code(glossary.entities, e) for e in entities))
        period_labels = list(dict.fromkeys(self._period(p, reference_date) for p in periods))
        items = [(e, p) for e in entity_codes for p in period_labels]
        if len(items) < 2:
            raise QueryError(
                "compare needs two items or more: name a second entity or a second period"
            )
        return compare(
            glossary,
            self._workspace.facts,
            metric=_code(glossary.metrics, metric),
            items=items,
            channel=self._channel(channel),
            max_level=_level_of(principal),
        )
