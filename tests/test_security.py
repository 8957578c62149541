from __future__ import annotations

import pytest

from ragspine.errors import ConfigError
from ragspine.security import Principal, Sensitivity, max_visible_level, visible


@pytest.mark.parametrize("clearance", list(Sensitivity))
def test_restricted_is_never_visible(clearance: Sensitivity) -> None:
    principal = Principal(clearance, frozenset({"finance"}))
    assert not visible(principal, Sensitivity.RESTRICTED)
    assert not visible(principal, "restricted", ["finance"])


def test_clearance_orders_levels() -> None:
    internal = Principal.of("internal")
    assert visible(internal, "public") and visible(internal, Sensitivity.INTERNAL)
    assert not visible(internal, "confidential")
    assert max_visible_level(internal) == Sensitivity.INTERNAL
    assert max_visible_level(Principal.of("restricted")) == Sensitivity.CONFIDENTIAL


def test_groups_narrow_visibility() -> None:
    alice = Principal.of("confidential", ["finance"])
    assert visible(alice, "internal", ["finance", "legal"])
    assert not visible(alice, "internal", ["legal"])
    assert visible(alice, "internal", [])


def test_unknown_level_names_valid_levels() -> None:
    with pytest.raises(ConfigError, match="public, internal, confidential, restricted"):
        Sensitivity.parse("secret")
