"""No restricted text, count or title reaches a caller over HTTP (contracts 4, 10 and 11).

The narrative leak detector's two workspaces (``leak_detector.py``: a secret word planted where a
public or internal reader must not see it, and a twin holding a decoy instead) are each served by
uvicorn on a real loopback socket. Every reading route (``/v1/search`` in every mode and library
choice, ``/v1/ask``, ``/v1/libraries`` and each library's description) is called with the key of
a reader who may not see the secret: the secret never appears and both servers answer byte for
byte the same. The reverse proofs show the check fails when a route asks as anyone but the key.
"""

from __future__ import annotations

import json
from collections.abc import Callable, Iterator
from contextlib import ExitStack

import httpx
import pytest
from leak_detector import (
    LIBRARIES,
    MODES,
    QUESTIONS,
    SECRET,
    Runs,
    _open,
    _without_question,
    build_runs,
    normalize,
)
from live_server import serving

from ragspine.security import Principal
from ragspine.service import guard
from ragspine.service.app import create_app
from ragspine.service.guard import Limits
from ragspine.service.keys import KeyStore

READERS = {"public": ("public", ()), "internal": ("internal", ("finance",))}


@pytest.fixture(scope="module")
def runs(tmp_path_factory: pytest.TempPathFactory) -> Runs:
    made = build_runs(tmp_path_factory.mktemp("http-leaks"))
    for root in (made.present, made.absent):
        keys = KeyStore(root / "ws")
        for name, (clearance, groups) in {**READERS, "cleared": ("confidential", ())}.items():
            _, secret = keys.create(name, clearance=clearance, groups=groups)
            (root / f"{name}.key").write_text(secret)
    return made


Request = tuple[str, str, dict[str, object] | None]


def requests() -> Iterator[tuple[str, Request]]:
    """Every reading call, labelled."""
    yield "libraries", ("GET", "/v1/libraries", None)
    for name in LIBRARIES:
        yield f"describe {name}", ("GET", f"/v1/libraries/{name}", None)
    for question in QUESTIONS:
        for mode in MODES:
            for names in (None, ["reports"], ["vault"], ["archive", "reports"]):
                body = {"question": question, "mode": mode, "libraries": names, "top_k": 20}
                yield f"search {question!r} {mode} {names}", ("POST", "/v1/search", body)
        yield f"ask {question!r}", ("POST", "/v1/ask", {"question": question, "top_k": 10})
        yield (
            f"ask narrative {question!r}",
            (
                "POST",
                "/v1/ask",
                {"question": question, "channel": "narrative", "mode": "hybrid"},
            ),
        )


def _text(response: httpx.Response) -> str:
    try:
        data = _without_question(response.json())
    except ValueError:
        return f"{response.status_code} {response.text}"
    return f"{response.status_code} {json.dumps(data, sort_keys=True, ensure_ascii=False)}"


def http_outputs(runs: Runs, reader: str, only: Callable[[str], bool]) -> dict[str, list[str]]:
    """Label -> [present output, absent output] over two live servers."""
    outputs: dict[str, list[str]] = {}
    with ExitStack() as stack:
        for root in (runs.present, runs.absent):
            ws = _open(root / "ws")
            stack.callback(ws.close)
            url = stack.enter_context(serving(create_app(ws, limits=Limits(rate=0))))
            key = (root / f"{reader}.key").read_text()
            client = stack.enter_context(
                httpx.Client(base_url=url, headers={"X-API-Key": key}, timeout=30)
            )
            for label, (method, path, body) in requests():
                if only(label):
                    response = client.request(method, path, json=body)
                    outputs.setdefault(label, []).append(normalize(_text(response)))
    return outputs


def assert_no_http_leak(
    runs: Runs, reader: str, only: Callable[[str], bool] = lambda label: True
) -> int:
    """Fail when the secret reaches ``reader`` or an answer differs between the two servers."""
    compared = 0
    for label, (seen, expected) in http_outputs(runs, reader, only).items():
        assert not seen.startswith("5"), f"{label}: server error {seen}"
        assert SECRET.casefold() not in seen.casefold(), f"{label}: the secret leaks:\n{seen}"
        assert seen == expected, (
            f"{label}: depends on content {reader} may not see:\n"
            f"--- secret present\n{seen}\n--- secret absent\n{expected}"
        )
        compared += 1
    return compared


@pytest.mark.parametrize("reader", sorted(READERS))
def test_no_route_leaks_restricted_text_counts_or_titles(runs: Runs, reader: str) -> None:
    assert assert_no_http_leak(runs, reader) >= 200


def test_the_check_sees_the_secret_when_the_key_may(runs: Runs) -> None:
    """Meaningful: a confidential key's answers hold the confidential heading."""
    with pytest.raises(AssertionError, match="the secret leaks"):
        assert_no_http_leak(runs, "cleared", only=lambda label: label.startswith("search "))


def test_routes_asking_as_anyone_but_the_key_are_caught(
    runs: Runs, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Reverse proof: a service that took a higher clearance than its key's fails the check."""
    monkeypatch.setattr(
        guard.Caller, "principal", property(lambda self: Principal.of("confidential"))
    )
    with pytest.raises(AssertionError, match="the secret leaks"):
        assert_no_http_leak(runs, "public", only=lambda label: label.startswith("search "))
