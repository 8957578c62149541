"""The security boundary: sensitivity levels, principals and the one visibility rule.

Every module that decides whether a caller may see a fact, chunk, parent, window, graph node or
preview calls :func:`visible`. Nothing else in the code base compares sensitivities.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass
from enum import IntEnum

from ragspine.errors import ConfigError


class Sensitivity(IntEnum):
    """Ordered sensitivity levels; ``RESTRICTED`` is never visible to anyone."""

    PUBLIC = 0
    INTERNAL = 1
    CONFIDENTIAL = 2
    RESTRICTED = 3

    @classmethod
    def parse(cls, raw: str | Sensitivity) -> Sensitivity:
        """Parse a level name (case-insensitive); the error lists the valid names."""
        if isinstance(raw, Sensitivity):
            return raw
        try:
            return cls[str(raw).strip().upper()]
        except KeyError:
            names = ", ".join(level.label for level in cls)
            raise ConfigError(f"unknown sensitivity {raw!r}: use one of {names}") from None

    @property
    def label(self) -> str:
        return self.name.lower()


@dataclass(frozen=True, slots=True)
class Principal:
    """Who asks: a clearance level and the groups they belong to."""

    clearance: Sensitivity = Sensitivity.PUBLIC
    groups: frozenset[str] = frozenset()
    name: str = "anonymous"

    @classmethod
    def of(
        cls, clearance: str | Sensitivity = "public", groups: Iterable[str] = (), name: str = ""
    ) -> Principal:
        """Build a principal from a level name and group names."""
        return cls(Sensitivity.parse(clearance), frozenset(groups), name or "anonymous")


PUBLIC = Principal()


def visible(
    principal: Principal,
    sensitivity: Sensitivity | int | str,
    allowed_groups: Iterable[str] | None = None,
) -> bool:
    """Return whether ``principal`` may see an item of ``sensitivity``.

    ``restricted`` is never visible. When ``allowed_groups`` is given and non-empty, the principal
    must also belong to one of them.
    """
    level = Sensitivity.parse(sensitivity) if isinstance(sensitivity, str) else sensitivity
    if level >= Sensitivity.RESTRICTED or level > principal.clearance:
        return False
    if allowed_groups:
        return not principal.groups.isdisjoint(allowed_groups)
    return True


def max_visible_level(principal: Principal) -> int:
    """The highest sensitivity value ``principal`` may see, for pushing the check into SQL.

    Derived from :func:`visible` so the rule lives in one place.
    """
    return max((lvl for lvl in Sensitivity if visible(principal, lvl)), default=-1)
