"""A database URL's password never reaches a message, however the URL is written (a review
found it in the serve banner, after '?password=', in an unparseable URL and in the driver's
own words)."""

from __future__ import annotations

import pytest

from ragspine.stores.postgres.database import postgres_error, redacted_url, url_secrets

SECRET = "Sec9ret%zz x"


@pytest.mark.parametrize(
    "url",
    [
        f"postgresql://ragspine:{SECRET}@127.0.0.1:55433/b1",
        f"postgresql://ragspine@127.0.0.1:55433/c1?sslmode=require&password={SECRET}",
        f"postgresql://ragspine:{SECRET}@[::1/b1",  # no parser reads it
        f"host=127.0.0.1 password='{SECRET}' dbname=b1",
    ],
)
def test_no_form_of_the_url_shows_its_password(url: str) -> None:
    assert SECRET in url_secrets(url) or SECRET.split()[0] in " ".join(url_secrets(url))
    assert "Sec9ret" not in redacted_url(url)

    class OperationalError(Exception):  # psycopg's name; its message quotes the URL
        pass

    quoted = OperationalError(f'invalid percent-encoded token: "{SECRET}" in URI: "{url}"')
    message = str(postgres_error(quoted, url))
    assert "Sec9ret" not in message and "unreachable" in message


def test_a_url_without_a_password_is_unchanged() -> None:
    for url in ("postgresql://u@h:5432/d", "postgresql:///d?sslmode=require"):
        assert redacted_url(url) == url and url_secrets(url) == []
