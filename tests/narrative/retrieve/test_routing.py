"""Library routing, fallback to every library, and multi-index retrieval."""

from __future__ import annotations

from collections.abc import Sequence

import pytest

from ragspine.errors import ConfigError, QueryError
from ragspine.narrative.retrieve.multi_index import MultiIndexRetriever
from ragspine.narrative.retrieve.profile_router import LibraryProfile, ProfileRouter
from ragspine.narrative.retrieve.routing import RoutingCause, route_libraries
from ragspine.narrative.retrieve.snippets import LibraryHit

LIBRARIES = {
    "annual_reports": "Annual reports and financial statements: revenue, profit, margins by region",
    "hr_policies": "Human resources policies: parental leave, hiring, payroll and benefits",
    "product_docs": "Product manuals and release notes for the software platform",
}
REGISTERED = list(LIBRARIES)


def description_router(descriptions: dict[str, str], *, margin: float = 1.0) -> ProfileRouter:
    """A profile router that knows the libraries by their descriptions (and ids) alone."""
    profiles = [LibraryProfile(library_id, {}) for library_id in descriptions]
    return ProfileRouter(profiles, descriptions=descriptions, margin=margin)


class Raising:
    def route(self, question: str) -> Sequence[str]:
        raise RuntimeError("model offline")


class Fixed:
    def __init__(self, names: Sequence[str] | None) -> None:
        self.names = names

    def route(self, question: str) -> Sequence[str]:
        return self.names  # type: ignore[return-value]


@pytest.mark.parametrize(
    ("question", "expected"),
    [
        ("What was the operating profit margin in EMEA?", ["annual_reports"]),
        ("How many weeks of parental leave do employees get?", ["hr_policies"]),
        ("Which release introduced the new manual?", ["product_docs"]),
        ("revenue and payroll", ["annual_reports", "hr_policies"]),
    ],
)
def test_router_picks_libraries_from_descriptions(question: str, expected: list[str]) -> None:
    assert description_router(LIBRARIES).route(question) == expected


def test_router_uses_library_id_words_and_stems() -> None:
    router = description_router({"clinicalTrials": "studies", "genetics": "genes and mutations"})
    assert router.route("trial outcomes") == ["clinicalTrials"]
    assert router.route("a mutation in one gene") == ["genetics"]


def test_router_scores_are_deterministic_and_margin_applies() -> None:
    question = "revenue, profit and payroll"
    assert description_router(LIBRARIES, margin=0.0).route(question) == ["annual_reports"]
    assert description_router(LIBRARIES, margin=1.5).route(question) == [
        "annual_reports",
        "hr_policies",
    ]
    scores = description_router(LIBRARIES).scores(question)
    assert scores == description_router(LIBRARIES).scores(question)
    profiles = [LibraryProfile(library_id, {}) for library_id in LIBRARIES]
    capped = ProfileRouter(profiles, descriptions=LIBRARIES, margin=50.0, max_libraries=1)
    assert capped.route(question) == ["annual_reports"]


def test_router_with_no_overlap_picks_nothing_and_decision_falls_back() -> None:
    router = description_router(LIBRARIES)
    assert router.route("weather tomorrow") == []
    decision = route_libraries(router, "weather tomorrow", REGISTERED)
    assert decision.libraries == tuple(REGISTERED)
    assert decision.fallback and decision.cause is RoutingCause.ROUTER_EMPTY


@pytest.mark.parametrize(
    ("router", "cause", "words"),
    [
        (Raising(), RoutingCause.ROUTER_FAILED, "RuntimeError"),
        (Fixed([]), RoutingCause.ROUTER_EMPTY, "no library"),
        (Fixed(None), RoutingCause.ROUTER_EMPTY, "no library"),
        (Fixed(["annual_reports", "ghost"]), RoutingCause.ROUTER_UNKNOWN, "ghost"),
    ],
)
def test_routing_failure_covers_every_registered_library(
    router: object, cause: RoutingCause, words: str
) -> None:
    decision = route_libraries(router, "q", REGISTERED)  # type: ignore[arg-type]
    assert decision.libraries == tuple(REGISTERED)
    assert decision.fallback is True
    assert decision.cause is cause
    assert words in decision.reason
    assert "model offline" not in decision.reason


def test_routed_and_explicit_decisions() -> None:
    routed = route_libraries(Fixed(["product_docs", "annual_reports"]), "q", REGISTERED)
    assert routed.libraries == ("annual_reports", "product_docs")
    assert not routed.fallback and routed.cause is RoutingCause.ROUTED
    explicit = route_libraries(Raising(), "q", REGISTERED, explicit=["hr_policies"])
    assert explicit.libraries == ("hr_policies",) and explicit.cause is RoutingCause.EXPLICIT
    with pytest.raises(QueryError, match="ghost"):
        route_libraries(None, "q", REGISTERED, explicit=["ghost"])
    none = route_libraries(None, "q", REGISTERED)
    assert none.libraries == tuple(REGISTERED) and none.cause is RoutingCause.NO_ROUTER
    empty = route_libraries(None, "q", [])
    assert empty.libraries == () and empty.cause is RoutingCause.NO_LIBRARIES


def test_router_validation() -> None:
    profiles = [LibraryProfile(library_id, {}) for library_id in LIBRARIES]
    with pytest.raises(ConfigError):
        ProfileRouter([LibraryProfile("a", {}), LibraryProfile("a", {})])
    with pytest.raises(ConfigError):
        ProfileRouter(profiles, margin=-1.0)
    with pytest.raises(ConfigError):
        ProfileRouter(profiles, max_libraries=0)


# ---- multi-index retrieval --------------------------------------------------------------------

INDEX = {
    "annual_reports": ["ar-1", "ar-2", "ar-3"],
    "hr_policies": ["hr-1", "hr-2"],
    "product_docs": ["pd-1"],
}


class Recorder:
    def __init__(self) -> None:
        self.calls: list[tuple[str, int]] = []

    def __call__(self, library_id: str, question: str, top_k: int) -> list[LibraryHit]:
        self.calls.append((library_id, top_k))
        return [
            LibraryHit(c, 1.0 / (n + 1), library_id="wrong-tag")
            for n, c in enumerate(INDEX[library_id])
        ][:top_k]


def test_multi_index_searches_routed_libraries_and_fuses() -> None:
    search = Recorder()
    retriever = MultiIndexRetriever(search, REGISTERED, router=description_router(LIBRARIES))
    result = retriever.retrieve("parental leave", top_k=5)
    assert search.calls == [("hr_policies", 5)]
    assert [(h.library_id, h.chunk_id) for h in result.hits] == [
        ("hr_policies", "hr-1"),
        ("hr_policies", "hr-2"),
    ]
    assert result.trace.routing is not None and result.trace.routing.libraries == ("hr_policies",)
    assert result.trace.stage_names == ("route", "search:hr_policies", "fuse")


def test_multi_index_falls_back_to_all_libraries_when_router_raises() -> None:
    search = Recorder()
    retriever = MultiIndexRetriever(search, REGISTERED, router=Raising(), candidates_per_library=2)
    result = retriever.retrieve("anything", top_k=4)
    assert [c[0] for c in search.calls] == REGISTERED
    assert result.decision.fallback and result.trace.routing is not None
    assert result.trace.routing.cause == "router_failed"
    # rank-1 hits tie; library order breaks the tie
    assert [(h.library_id, h.chunk_id) for h in result.hits] == [
        ("annual_reports", "ar-1"),
        ("hr_policies", "hr-1"),
        ("product_docs", "pd-1"),
        ("annual_reports", "ar-2"),
    ]
    assert result.trace.stage("fuse").candidates_in == 5
    assert all(h.library_id in REGISTERED for h in result.hits)


def test_multi_index_explicit_libraries_and_weights() -> None:
    search = Recorder()
    retriever = MultiIndexRetriever(
        search, REGISTERED, router=Raising(), weights={"product_docs": 2.0}
    )
    result = retriever.retrieve("q", top_k=2, libraries=["annual_reports", "product_docs"])
    assert [c[0] for c in search.calls] == ["annual_reports", "product_docs"]
    assert [h.chunk_id for h in result.hits] == ["pd-1", "ar-1"]
    assert not result.decision.fallback
    with pytest.raises(ConfigError):
        MultiIndexRetriever(search, REGISTERED, weights={"ghost": 1.0})
    with pytest.raises(QueryError):
        MultiIndexRetriever(search, REGISTERED, k=0)


def test_distinctive_terms_describe_a_library_well_enough_to_route_to_it() -> None:
    from ragspine.narrative.retrieve.profile_router import distinctive_terms

    texts = {
        "cardio": [
            "Heart failure and cardiac arrest.",
            "Cardiac output in heart disease.",
            "Blood pressure and the heart.",
            "Cardiac imaging of the heart.",
        ],
        "onco": [
            "Tumour growth in breast cancer.",
            "Cancer cells and tumour suppressors.",
            "Chemotherapy for cancer.",
            "Tumour imaging in cancer patients.",
        ],
    }
    profile = distinctive_terms(texts, top_n=3, min_documents=2)
    assert profile["cardio"][:2] == ("heart", "cardiac")
    assert "cancer" in profile["onco"] and "imag" not in profile["onco"]
    router = description_router({lib: " ".join(words) for lib, words in profile.items()})
    assert router.route("Does the tumour respond to treatment?") == ["onco"]


def test_routed_libraries_fuse_evenly_unless_weighted() -> None:
    router = description_router(LIBRARIES, margin=1.5)
    question = "revenue, profit and payroll"
    plain = MultiIndexRetriever(Recorder(), REGISTERED, router=router).retrieve(question)
    weighted = MultiIndexRetriever(
        Recorder(), REGISTERED, router=router, weights={"annual_reports": 3.0}
    ).retrieve(question)
    assert plain.decision.libraries == ("annual_reports", "hr_policies")
    assert [h.chunk_id for h in plain.hits][:2] == ["ar-1", "hr-1"]
    assert [h.chunk_id for h in weighted.hits][:3] == ["ar-1", "ar-2", "ar-3"]
    # on a fallback the weights stay even
    fallback = MultiIndexRetriever(Recorder(), REGISTERED, router=Raising()).retrieve(question)
    assert [h.chunk_id for h in fallback.hits][:3] == ["ar-1", "hr-1", "pd-1"]
