"""Library routing: which libraries to search, never silently none.

A :class:`Router` (in practice
:class:`~ragspine.narrative.retrieve.profile_router.ProfileRouter`) names the libraries worth
searching; :func:`route_libraries` turns its answer into a :class:`RoutingDecision`, falling
back to every registered library when the router raises, returns nothing or names libraries
that do not exist.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from enum import StrEnum
from typing import Protocol

from ragspine.errors import QueryError


class Router(Protocol):
    """Anything that names the libraries worth searching for a question."""

    def route(self, question: str) -> Sequence[str]: ...


class RoutingCause(StrEnum):
    """Why a set of libraries was searched."""

    EXPLICIT = "explicit"
    ROUTED = "routed"
    NO_ROUTER = "no_router"
    ROUTER_FAILED = "router_failed"
    ROUTER_EMPTY = "router_empty"
    ROUTER_UNKNOWN = "router_unknown"
    NO_LIBRARIES = "no_libraries"


@dataclass(frozen=True, slots=True)
class RoutingDecision:
    """The libraries to search, in registered order, and why."""

    libraries: tuple[str, ...]
    reason: str
    fallback: bool
    cause: RoutingCause


@dataclass(frozen=True, slots=True)
class LibraryScore:
    """One library's routing score for a question."""

    library_id: str
    score: float


def route_libraries(
    router: Router | None,
    question: str,
    registered: Sequence[str],
    *,
    explicit: Sequence[str] | None = None,
) -> RoutingDecision:
    """Decide which registered libraries to search; any router failure means all of them."""
    everything = tuple(dict.fromkeys(registered))
    if explicit is not None:
        unknown = sorted(set(explicit) - set(everything))
        if unknown or not explicit:
            raise QueryError(
                f"unknown or missing libraries {unknown!r}: name one or more of "
                f"{list(everything)!r}"
            )
        chosen = [lib for lib in everything if lib in set(explicit)]
        return RoutingDecision(
            tuple(chosen), "libraries named by the caller", False, RoutingCause.EXPLICIT
        )
    if not everything:
        return RoutingDecision((), "no libraries are registered", True, RoutingCause.NO_LIBRARIES)
    if router is None:
        return RoutingDecision(
            everything,
            "no router configured: searching every library",
            False,
            RoutingCause.NO_ROUTER,
        )
    try:
        named = list(router.route(question) or ())
    except Exception as exc:  # a failing router must never stop the search
        return RoutingDecision(
            everything,
            f"router raised {type(exc).__name__}: searching every library",
            True,
            RoutingCause.ROUTER_FAILED,
        )
    if not named:
        return RoutingDecision(
            everything,
            "router picked no library: searching every library",
            True,
            RoutingCause.ROUTER_EMPTY,
        )
    unknown = sorted({str(n) for n in named if n not in everything})
    if unknown:
        return RoutingDecision(
            everything,
            f"router named unknown libraries {unknown!r}: searching every library",
            True,
            RoutingCause.ROUTER_UNKNOWN,
        )
    chosen_set = set(named)
    routed = tuple(lib for lib in everything if lib in chosen_set)
    return RoutingDecision(
        routed,
        f"router picked {len(routed)} of {len(everything)} libraries",
        False,
        RoutingCause.ROUTED,
    )
