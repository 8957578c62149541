"""Credential screening of titles, app names and ids."""

from __future__ import annotations

import random
import string
from typing import Any

import pytest

from ragspine.workflows.redact import MASK, looks_sensitive, screen_text


@pytest.mark.parametrize(
    ("text", "secret"),
    [
        ("Call sk-proj-AbCdEf0123456789xyz now", "sk-proj-AbCdEf0123456789xyz"),
        ("key app-Xk3lP9qR2sT5uV8wY1zA4bC7", "app-Xk3lP9qR2sT5uV8wY1zA4bC7"),
        ("Authorization: Bearer 9f8e7d6c5b4a3f2e", "9f8e7d6c5b4a3f2e"),
        ("Basic dXNlcjpwYXNzd29yZA==", "dXNlcjpwYXNzd29yZA=="),
        ("see https://bob:hunter2@example.com/x ok", "hunter2"),
        ("GET https://api.example.com/v1?foo=1&api_key=zzz123 end", "zzz123"),
        ("https://h.example.com/p?sig=abc&x=1", "sig=abc"),
        ("password=hunter2", "hunter2"),
        ("client_secret: s3cr3t!", "s3cr3t!"),
        ("AKIAIOSFODNN7EXAMPLE", "AKIAIOSFODNN7EXAMPLE"),
        ("ghp_abcdefghijklmnopqrstuvwxyz012345", "ghp_abcdefghijklmnopqrstuvwxyz012345"),
        ("xoxb-1234567890-abcdefghij", "xoxb-1234567890-abcdefghij"),
        ("AIzaSyA1b2C3d4E5f6G7h8I9j0KlMnOpQrStUvW", "AIzaSyA1b2C3d4E5f6G7h8I9j0KlMnOpQrStUvW"),
        ("jwt eyJhbGciOiJIUzI1NiJ9.eyJzdWIiOiIxIn0.sig_part", "eyJzdWIiOiIxIn0"),
        ("token a8f3k2m9x7q1z5w3e6r4t8y2", "a8f3k2m9x7q1z5w3e6r4t8y2"),
        ("random 7hT9kQ2mX4pL8vN1bR6cW3zY5sD0fG", "7hT9kQ2mX4pL8vN1bR6cW3zY5sD0fG"),
        ("hash f8e44422cfa5b9a6ac1f2d3b43ef1069", "f8e44422cfa5b9a6ac1f2d3b43ef1069"),
    ],
)
def test_credentials_are_masked(text: str, secret: str) -> None:
    screened = screen_text(text)
    assert secret not in screened
    assert MASK in screened


@pytest.mark.parametrize(
    "text",
    [
        "LLM 2",
        "条件分支 2",
        "Knowledge Retrieval v2",
        "Knowledge_Retrieval_v2_helper_function",
        "ThisIsALongCamelCaseName",
        "https://example.com/docs/page",
        "langgenius/volcengine_maas/volcengine_maas",
        "deepseek-v3-250324",
        "GPT-4o summary v1.2.3",
        "Basic authentication",
        "Token counter",
        "1739087643444-fdc117e5-9c2d-4b3d-9fac-c1f030b8435d-1739111295209-target",
        "1739191682740017391916827400",
        "1739191682740start",
        "019f0000-0000-7000-8000-000000000001",
        "",
    ],
)
def test_ordinary_titles_and_ids_pass_unchanged(text: str) -> None:
    assert screen_text(text) == text
    assert not looks_sensitive(text)


def _token(rng: random.Random, alphabet: str, length: int) -> str:
    return "".join(rng.choice(alphabet) for _ in range(length))


_ALNUM = string.ascii_letters + string.digits


@pytest.mark.parametrize(
    ("kind", "make"),
    [
        ("bearer of letters", lambda r: "Bearer " + _token(r, string.ascii_letters, 16)),
        ("google oauth", lambda r: "ya29." + _token(r, _ALNUM + "-_", 60)),
        ("aws secret", lambda r: "aws secret " + _token(r, _ALNUM + "+/", 40)),
        ("telegram", lambda r: f"bot{r.randint(10**8, 10**10)}:" + _token(r, _ALNUM + "-_", 35)),
        ("shopify", lambda r: "shpat_" + _token(r, "0123456789abcdef", 32)),
        ("npm", lambda r: "npm_" + _token(r, _ALNUM, 36)),
        (
            "webhook path",
            lambda r: (
                "https://hooks.example.com/services/T"
                + _token(r, string.ascii_uppercase + string.digits, 8)
                + "/B"
                + _token(r, string.ascii_uppercase + string.digits, 8)
                + "/"
                + _token(r, _ALNUM, 24)
            ),
        ),
        ("pass", lambda r: "db pass: " + _token(r, _ALNUM, 10)),
    ],
)
def test_generated_credentials_of_each_shape_are_masked(kind: str, make: Any) -> None:
    """A review planted these shapes in 200 random samples each and found Telegram tokens (43),
    16-letter bearer tokens (18), webhook path tokens (16), npm tokens (11) and AWS secret keys
    (8) copied into titles unmasked."""
    rng = random.Random(kind)
    leaked = []
    for _ in range(200):
        text = make(rng)
        secret = text.split()[-1]  # the token (a webhook: its last segment)
        secret = secret.rsplit("/", 1)[-1] if secret.startswith("https") else secret
        if secret in screen_text(f"Node {text} end"):
            leaked.append(text)
    assert leaked == [], leaked[:3]
