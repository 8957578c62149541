"""The structured channel's CLI commands, run through ``ragspine.cli.main``."""

from __future__ import annotations

from pathlib import Path

import pytest

from ragspine.cli import main


def run(capsys: pytest.CaptureFixture[str], *argv: str) -> tuple[int, str, str]:
    code = main(list(argv))
    out, err = capsys.readouterr()
    return code, out, err


@pytest.fixture()
def ws(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> str:
    workspace = str(tmp_path / "ws")
    assert run(capsys, "--workspace", workspace, "init")[0] == 0
    return workspace


def test_metric_asks_as_public_unless_told(
    ws: str, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    src = tmp_path / "acme.csv"
    src.write_text(
        "metric,entity,period,value,sensitivity\nrevenue,acme,FY2024,12,internal\n",
        encoding="utf-8",
    )
    assert run(capsys, "--workspace", ws, "ingest", "facts", str(src))[0] == 0
    ask = ["--workspace", ws, "metric", "--metric", "revenue", "--entity", "acme"]
    code, out, _ = run(capsys, *ask, "--period", "FY2024")
    assert code == 0 and out.startswith("[not_found]")
    code, out, _ = run(capsys, *ask, "--period", "FY2024", "--clearance", "internal")
    assert code == 0 and out.startswith("[found] ACME Corp's Revenue in FY2024 was 12 US dollars.")
