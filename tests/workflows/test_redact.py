"""Credential screening of titles, app names and ids."""

from __future__ import annotations

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
