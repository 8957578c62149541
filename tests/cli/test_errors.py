"""A CLI user never sees a traceback: bugs, broken pipes and bad input end in one line."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

from conftest import shared_data
from ragspine.cli import app as cli


def test_an_unexpected_exception_is_one_line(
    monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str], tmp_path: Path
) -> None:
    def broken(args: object) -> int:
        raise ValueError("something the code did not expect")

    parser = cli.build_parser()
    args = parser.parse_args(["--workspace", str(tmp_path), "libraries"])
    monkeypatch.setattr(cli, "build_parser", lambda: parser)
    monkeypatch.setattr(parser, "parse_args", lambda argv=None: args)
    args.func = broken
    monkeypatch.delenv("RAGSPINE_DEBUG", raising=False)
    assert cli.main([]) == 1
    err = capsys.readouterr().err
    assert err.startswith("ragspine: internal error: ValueError: something the code did not")
    assert "Traceback" not in err and err.count("\n") == 1


def test_a_closed_pipe_ends_quietly() -> None:
    source = shared_data("dify", "document_chat_template.yml")
    proc = subprocess.Popen(
        [sys.executable, "-m", "ragspine.cli", "workflow", "preview", str(source), "--json"],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
    )
    assert proc.stdout is not None and proc.stderr is not None
    proc.stdout.close()  # the reader went away, like `| head -0`
    err = proc.stderr.read().decode()
    assert proc.wait(timeout=60) == 0
    assert err == ""


def test_long_inputs_are_cut_in_error_messages(
    capsys: pytest.CaptureFixture[str], tmp_path: Path
) -> None:
    ws = ["--workspace", str(tmp_path / "ws")]
    assert cli.main([*ws, "init"]) == 0
    assert cli.main([*ws, "library", "create", "bad name " * 10_000]) == 2
    err = capsys.readouterr().err
    assert "invalid library name" in err and "…" in err and len(err) < 400


def test_other_libraries_warnings_stay_off_a_commands_stderr() -> None:
    """A review: the database driver's 'discarding closed connection' and 'error ignored in
    rollback' lines (logging's last resort) came before the one line a command ends with."""
    code = (
        "import logging; from ragspine.cli import app; app._log_to_stderr(); "
        "logging.getLogger('psycopg.pool').warning('discarding closed connection'); "
        "logging.getLogger('ragspine.narrative').warning('a ragspine notice')"
    )
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=60)
    assert done.stderr == "ragspine: a ragspine notice\n", done.stderr
