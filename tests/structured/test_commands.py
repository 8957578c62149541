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


def fails_cleanly(capsys: pytest.CaptureFixture[str], *argv: str) -> str:
    """Run a command that must fail: exit 2, one ``ragspine: error:`` line, no traceback."""
    code, out, err = run(capsys, *argv)
    assert code == 2, err
    assert err.startswith("ragspine: error: ") and err.count("\n") == 1, err
    assert "Traceback" not in out + err
    return err


PNG = bytes.fromhex("89504e470d0a1a0a0000000d49484452") + bytes(range(256))


@pytest.mark.parametrize(
    ("name", "content", "message"),
    [
        ("binary.csv", PNG, "binary.csv: is not UTF-8 text (byte 0x89 on line 1)"),
        (
            "latin1.csv",
            "metric,entity,period,value\nrevenue,ACME Zürich,FY2024,1\n".encode("latin-1"),
            "latin1.csv: is not UTF-8 text (byte 0xfc on line 2); if it is a table, save it",
        ),
        ("binary.json", PNG, "binary.json: is not UTF-8 text (byte 0x89 on line 1)"),
        (
            "cp1252.jsonl",
            '{"metric": "revenue", "entity": "acme", "period": "2024", "value": 1}\n'
            '{"metric": "revenue", "entity": "acme", "period": "2023", "value": "€1"}\n'.encode(
                "cp1252"
            ),
            "cp1252.jsonl: line 2: is not UTF-8 text (byte 0x80)",
        ),
        ("deep.json", b"[" * 100_000 + b"]" * 100_000, "deep.json: JSON nested too deeply"),
        ("long.jsonl", b'{"value": 1' + b"0" * 5000 + b"}\n", "long.jsonl: line 1: holds a number"),
    ],
)
def test_unreadable_fact_files_fail_cleanly(
    ws: str,
    tmp_path: Path,
    capsys: pytest.CaptureFixture[str],
    name: str,
    content: bytes,
    message: str,
) -> None:
    src = tmp_path / name
    src.write_bytes(content)
    err = fails_cleanly(capsys, "--workspace", ws, "ingest", "facts", str(src))
    assert message in err


@pytest.mark.parametrize(
    ("mapping", "message"),
    [
        (
            "columns = 1\n",
            'columns must be a table such as [columns] value = "Amount", not a number',
        ),
        ('defaults = "x"\n', "defaults must be a table such as [defaults]"),
        ("[defaults]\nscale = [1, 2]\n", '[defaults] scale must be a string such as "million"'),
        ("[columns]\nvalue = 3\n", "[columns] value must be a string"),
        ("[columns\n", "is not valid TOML"),
        ("[sheets]\n", "unknown sections ['sheets']"),
    ],
)
def test_malformed_mapping_files_fail_cleanly(
    ws: str, tmp_path: Path, capsys: pytest.CaptureFixture[str], mapping: str, message: str
) -> None:
    src = tmp_path / "f.csv"
    src.write_text("metric,entity,period,value\nrevenue,acme,FY2024,1\n", encoding="utf-8")
    (tmp_path / "map.toml").write_text(mapping, encoding="utf-8")
    argv = ["--workspace", ws, "ingest", "facts", str(src), "--mapping", str(tmp_path / "map.toml")]
    err = fails_cleanly(capsys, *argv)
    assert "map.toml" in err and message in err
    (tmp_path / "map.toml").write_bytes(b"\xff\xfe[\x00c\x00")
    assert "map.toml is not UTF-8 text" in fails_cleanly(capsys, *argv)


@pytest.mark.parametrize(
    ("content", "message"),
    [
        (PNG, "bad.json: is not UTF-8 text; pass a ConvFinQA JSON file"),
        (b'{"dev": [1, 2]}', "bad.json: expected ConvFinQA filings"),
        (b"[{", "bad.json: invalid JSON at line 1"),
        (
            b'{"dev": [{"id": "Single_X/2007/page_1.pdf", "doc": "text"}]}',
            "bad.json: filing 'Single_X/2007/page_1.pdf': doc.table must map column headers",
        ),
        (
            b'[{"id": "Single_X/2007/page_1.pdf", "doc": {"table": {"2007": [1, 2]}}}]',
            "bad.json: filing 'Single_X/2007/page_1.pdf': doc.table must map column headers",
        ),
    ],
)
def test_malformed_convfinqa_files_fail_cleanly(
    ws: str, tmp_path: Path, capsys: pytest.CaptureFixture[str], content: bytes, message: str
) -> None:
    src = tmp_path / "bad.json"
    src.write_bytes(content)
    err = fails_cleanly(capsys, "--workspace", ws, "ingest", "convfinqa", str(src))
    assert message in err
