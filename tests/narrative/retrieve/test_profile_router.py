"""Library profiles and the profile router (query likelihood over library content)."""

from __future__ import annotations

import json

import pytest

from ragspine.errors import ConfigError
from ragspine.narrative.retrieve.profile_router import LibraryProfile, ProfileRouter
from ragspine.narrative.retrieve.routing import RoutingCause, route_libraries

TEXTS = {
    "cardiology": [
        "Heart failure patients with reduced ejection fraction.",
        "Cardiac arrest outcomes after resuscitation.",
        "Blood pressure lowering reduces stroke in hypertension.",
    ],
    "oncology": [
        "Tumour suppressor genes in breast cancer.",
        "Chemotherapy response of metastatic tumours.",
        "Cancer stem cells resist radiation.",
    ],
    "infectious": [
        "Vaccination lowers influenza infection rates.",
        "Antibiotic resistance in bacterial infection.",
        "Malaria transmission by mosquitoes.",
    ],
}


def router(**kwargs: object) -> ProfileRouter:
    profiles = [LibraryProfile.from_texts(lib, texts) for lib, texts in TEXTS.items()]
    return ProfileRouter(profiles, **kwargs)  # type: ignore[arg-type]


@pytest.mark.parametrize(
    ("question", "expected"),
    [
        ("Does chemotherapy shrink breast tumours?", ["oncology"]),
        ("Is hypertension linked to heart failure?", ["cardiology"]),
        ("Do vaccines prevent influenza infections?", ["infectious"]),
    ],
)
def test_profile_router_picks_the_library_whose_content_fits(
    question: str, expected: list[str]
) -> None:
    assert router().route(question) == expected


def test_margin_widens_the_pick_and_unknown_words_pick_nothing() -> None:
    question = "cancer patients with infection"
    assert len(router(margin=0.0).route(question)) == 1
    assert router(margin=50.0).route(question) == list(TEXTS)
    assert router().route("quarterly dividend policy") == []
    decision = route_libraries(router(), "quarterly dividend policy", list(TEXTS))
    assert decision.fallback and decision.cause is RoutingCause.ROUTER_EMPTY


def test_descriptions_and_library_names_count_as_evidence() -> None:
    plain = router(margin=0.5)
    described = router(margin=0.5, descriptions={"infectious": "epidemiology of outbreaks"})
    assert plain.route("outbreaks") == []
    assert described.route("outbreaks") == ["infectious"]
    assert plain.route("oncology") == ["oncology"]


def test_scores_are_deterministic_and_ordered() -> None:
    scores = router().scores("tumour infection")
    assert scores == router().scores("tumour infection")
    assert [s.score for s in scores] == sorted((s.score for s in scores), reverse=True)


def test_profile_round_trips_through_json_and_validates() -> None:
    profile = LibraryProfile.from_texts("lib", ["Revenue grew; revenue fell."])
    assert profile.term_counts["revenu"] == 2
    again = LibraryProfile.from_dict(json.loads(json.dumps(profile.to_dict())))
    assert again == profile
    with pytest.raises(ConfigError):
        LibraryProfile.from_dict({"library_id": 3})
    with pytest.raises(ConfigError, match="without a profile"):
        ProfileRouter([profile], descriptions={"ghost": "x"})
    with pytest.raises(ConfigError, match="unique"):
        ProfileRouter([profile, profile])
