"""The trace of one search or answer: stages, routing, counts and timings — never text.

A trace holds names, library ids, counts and seconds only, and every count is over what the
asker may see: candidates in and out of each stage, and what a metadata filter dropped. Nothing
says how much was withheld for visibility, since such a count would let an asker test words
against text they may not see (contract 11); a re-check that has to withhold something means a
backend failed to push visibility down, and is logged for the operator instead. Index rebuilds
(which happen after any write, hidden documents included) are logged, not traced.
"""

from __future__ import annotations

import time
from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from dataclasses import dataclass, field, replace


@dataclass(frozen=True, slots=True)
class StageRecord:
    """One stage: how many candidates went in and out, how many the filter dropped, how long."""

    name: str
    candidates_in: int
    candidates_out: int
    dropped_by_filter: int = 0
    seconds: float = 0.0


@dataclass(frozen=True, slots=True)
class RoutingRecord:
    """Which libraries were searched and why."""

    libraries: tuple[str, ...]
    cause: str
    reason: str
    fallback: bool


@dataclass(frozen=True, slots=True)
class Trace:
    """What happened in one search or answer (counts, names and timings only)."""

    stages: tuple[StageRecord, ...] = ()
    routing: RoutingRecord | None = None
    filter: str | None = None
    notes: tuple[str, ...] = ()
    mode: str | None = None

    @property
    def stage_names(self) -> tuple[str, ...]:
        return tuple(s.name for s in self.stages)

    def stage(self, name: str) -> StageRecord:
        """The first record of stage ``name`` (KeyError when the stage did not run)."""
        for record in self.stages:
            if record.name == name:
                return record
        raise KeyError(name)

    def without_timings(self) -> Trace:
        """The same trace with every timing set to zero (for byte-identical comparisons)."""
        return replace(self, stages=tuple(replace(s, seconds=0.0) for s in self.stages))

    def merged(self, other: Trace) -> Trace:
        """This trace followed by ``other``; routing and filter come from whichever has them."""
        return Trace(
            stages=self.stages + other.stages,
            routing=self.routing or other.routing,
            filter=self.filter or other.filter,
            notes=self.notes + other.notes,
            mode=self.mode or other.mode,
        )

    def to_dict(self) -> dict[str, object]:
        """A JSON-ready form."""
        return {
            "stages": [
                {
                    "name": s.name,
                    "candidates_in": s.candidates_in,
                    "candidates_out": s.candidates_out,
                    "dropped_by_filter": s.dropped_by_filter,
                    "seconds": round(s.seconds, 6),
                }
                for s in self.stages
            ],
            "routing": None
            if self.routing is None
            else {
                "libraries": list(self.routing.libraries),
                "cause": self.routing.cause,
                "reason": self.routing.reason,
                "fallback": self.routing.fallback,
            },
            "filter": self.filter,
            "notes": list(self.notes),
            "mode": self.mode,
        }


@dataclass(slots=True)
class _Timer:
    started: float
    seconds: float = 0.0


@dataclass(slots=True)
class TraceBuilder:
    """Collects stage records while a pipeline runs; :meth:`build` freezes them."""

    stages: list[StageRecord] = field(default_factory=list)
    routing: RoutingRecord | None = None
    filter: str | None = None
    notes: list[str] = field(default_factory=list)
    clock: object = time.perf_counter

    @contextmanager
    def timed(self) -> Iterator[_Timer]:
        """Measure a block; read ``.seconds`` after it ends."""
        clock = self.clock
        timer = _Timer(clock())  # type: ignore[operator]
        try:
            yield timer
        finally:
            timer.seconds = clock() - timer.started  # type: ignore[operator]

    def add_stage(
        self,
        name: str,
        candidates_in: int,
        candidates_out: int,
        *,
        dropped_by_filter: int = 0,
        seconds: float = 0.0,
    ) -> None:
        """Record one stage (counts of visible candidates only)."""
        self.stages.append(
            StageRecord(
                name,
                int(candidates_in),
                int(candidates_out),
                int(dropped_by_filter),
                float(seconds),
            )
        )

    def set_routing(
        self, libraries: Sequence[str], cause: str, reason: str, *, fallback: bool
    ) -> None:
        """Record the routing decision."""
        self.routing = RoutingRecord(tuple(libraries), str(cause), reason, fallback)

    def note(self, text: str) -> None:
        """Add a fixed, content-free note (never pass document text here)."""
        self.notes.append(text)

    def build(self) -> Trace:
        """The frozen trace."""
        return Trace(tuple(self.stages), self.routing, self.filter, tuple(self.notes))
