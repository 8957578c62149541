"""API keys: printed once, stored hashed, listed without secrets, revoked for good."""

from __future__ import annotations

import contextlib
import io
import json
from pathlib import Path

import pytest

from ragspine import Workspace
from ragspine.cli import main
from ragspine.errors import ConfigError
from ragspine.security import Sensitivity
from ragspine.service.keys import KEYS_FILE, KeyStore


def _run(*argv: str) -> tuple[int, str, str]:
    out, err = io.StringIO(), io.StringIO()
    with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
        code = main(list(argv))
    return code, out.getvalue(), err.getvalue()


def test_keys_create_prints_the_key_once_and_stores_only_its_digest(tmp_path: Path) -> None:
    Workspace.init(tmp_path / "ws").close()
    ws = str(tmp_path / "ws")
    code, out, err = _run(
        "--workspace",
        ws,
        "keys",
        "create",
        "--name",
        "fin",
        "--clearance",
        "internal",
        "--group",
        "finance",
    )
    assert code == 0 and "shown only once" in err
    secret = out.strip()
    assert secret.startswith("rsk_")
    stored = (tmp_path / "ws" / KEYS_FILE).read_text()
    random_part = secret[len("rsk_") :].split("_", 1)[1]  # token_urlsafe may hold "_" itself
    assert secret not in stored and random_part not in stored
    key = KeyStore(tmp_path / "ws").authenticate(secret)
    assert key is not None and key.principal.clearance is Sensitivity.INTERNAL
    assert key.principal.groups == frozenset({"finance"}) and not key.admin
    code, listed, _ = _run("--workspace", ws, "keys", "list", "--json")
    (row,) = json.loads(listed)
    assert row["name"] == "fin" and "digest" not in row and secret not in listed
    assert _run("--workspace", ws, "keys", "revoke", "fin")[0] == 0
    assert KeyStore(tmp_path / "ws").authenticate(secret) is None
    code, _, err = _run("--workspace", ws, "keys", "revoke", "fin")
    assert code == 2 and "no live key named 'fin'" in err


def test_a_key_cannot_be_restricted_and_names_are_unique(tmp_path: Path) -> None:
    keys = KeyStore(tmp_path)
    with pytest.raises(ConfigError, match="at most confidential"):
        keys.create("x", clearance="restricted")
    keys.create("x")
    with pytest.raises(ConfigError, match="exists"):
        keys.create("x")


def test_a_server_sees_keys_made_and_revoked_after_it_started(tmp_path: Path) -> None:
    server_side = KeyStore(tmp_path)
    assert server_side.authenticate("rsk_a_b") is None
    _, secret = KeyStore(tmp_path).create("late")
    assert server_side.authenticate(secret) is not None
    KeyStore(tmp_path).revoke("late")
    assert server_side.authenticate(secret) is None


def test_serve_without_the_workspace_is_a_clear_error(tmp_path: Path) -> None:
    code, _, err = _run("--workspace", str(tmp_path / "none"), "serve")
    assert code == 2 and "traceback" not in err.lower() and str(tmp_path / "none") in err
