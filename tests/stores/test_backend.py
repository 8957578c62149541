"""Workspace locations: a folder or sqlite:/// URL opens the SQLite stores; others are errors."""

from __future__ import annotations

import threading
from pathlib import Path

import pytest

from ragspine import Workspace
from ragspine.cli import main
from ragspine.errors import ConfigError, StoreError
from ragspine.stores.backend import DB_FILENAME, SQLiteBackend, sqlite_folder


def test_a_folder_path_and_a_sqlite_url_name_the_same_folder(tmp_path: Path) -> None:
    folder = tmp_path / "ws"
    assert sqlite_folder(folder) == folder
    assert sqlite_folder(str(folder)) == folder
    assert sqlite_folder(f"sqlite://{folder}") == folder  # sqlite:///abs/path
    assert sqlite_folder("sqlite://relative/ws") == Path("relative/ws")
    assert sqlite_folder("sqlite:///srv/my%20ws") == Path("/srv/my ws")
    assert sqlite_folder("SQLite:///srv/ws") == Path("/srv/ws")
    assert sqlite_folder("~/ws") == Path.home() / "ws"
    assert sqlite_folder("C:/data/ws") == Path("C:/data/ws")  # a drive letter is no scheme


def test_workspace_open_accepts_a_sqlite_url(tmp_path: Path) -> None:
    folder = tmp_path / "ws"
    with Workspace.open(f"sqlite://{folder}") as ws:
        assert ws.path == folder and ws.backend == SQLiteBackend(folder)
        ws.create_library("notes")
    assert (folder / DB_FILENAME).is_file()
    with Workspace.open(folder, create=False) as again:
        assert [lib.library_id for lib in again.libraries()] == ["notes"]


def test_an_unreachable_postgresql_server_is_a_clear_error_without_the_password() -> None:
    url = "postgresql://ragspine:s3cret-pw@127.0.0.1:1/ragspine"
    with pytest.raises(StoreError, match="unreachable") as caught:
        Workspace.open(url)
    assert "s3cret-pw" not in str(caught.value) and ":***@" in str(caught.value)
    assert "check that the server is running" in str(caught.value)


def test_another_scheme_names_the_input_and_the_accepted_forms(tmp_path: Path) -> None:
    with pytest.raises(ConfigError) as caught:
        Workspace.open("mysql://db.example/ragspine")
    message = str(caught.value)
    assert "'mysql://db.example/ragspine'" in message
    assert "a folder path, sqlite:///path/to/folder or postgresql://" in message
    for bad in ("sqlite://", "sqlite:///srv/ws?mode=ro"):
        with pytest.raises(ConfigError, match="use sqlite:///path/to/folder"):
            Workspace.open(bad)


def test_folder_errors_are_unchanged(tmp_path: Path) -> None:
    a_file = tmp_path / "file"
    a_file.write_text("x")
    with pytest.raises(ConfigError, match="is a file: pass a folder with --workspace"):
        Workspace.open(a_file)
    with pytest.raises(ConfigError, match="no RAGSpine workspace at"):
        Workspace.open(tmp_path / "missing", create=False)
    assert not (tmp_path / "missing").exists()


def test_the_cli_takes_a_url_and_reports_a_bad_one_without_a_traceback(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    folder = tmp_path / "ws"
    assert main(["--workspace", f"sqlite://{folder}", "init"]) == 0
    assert (folder / DB_FILENAME).is_file()
    capsys.readouterr()
    code = main(["--workspace", "postgresql://me:pw@127.0.0.1:1/x", "libraries"])
    _, err = capsys.readouterr()
    assert code != 0 and "Traceback" not in err and "unreachable" in err and ":pw@" not in err


def test_threads_creating_one_new_workspace_at_once_all_succeed(tmp_path: Path) -> None:
    """Several connections creating the same new workspace at the same moment (two ingests
    started together on a fresh folder): every store's tables, version rows and the switch to
    write-ahead logging happen once, and nobody fails."""
    for round_ in range(15):
        folder = tmp_path / f"ws{round_}"
        barrier = threading.Barrier(6)
        errors: list[str] = []

        def create(
            folder: Path = folder, barrier: threading.Barrier = barrier, errors: list[str] = errors
        ) -> None:
            barrier.wait()
            try:
                with Workspace.open(folder) as ws:
                    ws.libraries()
            except Exception as exc:  # any error is the failure under test
                errors.append(f"{type(exc).__name__}: {exc}")

        threads = [threading.Thread(target=create) for _ in range(6)]
        for thread in threads:
            thread.start()
        for thread in threads:
            thread.join()
        assert errors == [], errors
