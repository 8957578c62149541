"""Running ``ragspine`` in process for CLI tests."""

from __future__ import annotations

import pytest

from ragspine.cli import main


def run(capsys: pytest.CaptureFixture[str], *argv: str) -> tuple[int, str, str]:
    """Exit code, stdout and stderr of ``ragspine ARGV``."""
    code = main(list(argv))
    out, err = capsys.readouterr()
    return code, out, err


def fails_cleanly(capsys: pytest.CaptureFixture[str], *argv: str) -> str:
    """Run a command that must fail: exit 2, one ``ragspine: error:`` line, no traceback."""
    code, out, err = run(capsys, *argv)
    assert code == 2, err
    assert err.startswith("ragspine: error: ") and err.count("\n") == 1, err
    assert "Traceback" not in out + err
    return err
