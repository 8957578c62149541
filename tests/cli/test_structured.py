"""The structured channel's CLI commands, run through ``ragspine.cli.app``."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any, ClassVar

import pytest

import ragspine
from cli.runner import fails_cleanly, run
from ragspine.cli import structured as commands


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


class FakeBar:
    """Records what the CLI does with a progress bar."""

    made: ClassVar[list[FakeBar]] = []

    def __init__(self, total: int | None, *, desc: str, unit: str, quiet: bool) -> None:
        self.total, self.desc, self.unit, self.quiet = total, desc, unit, quiet
        self.n = 0
        self.closed = False
        FakeBar.made.append(self)

    def __enter__(self) -> FakeBar:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    def update(self, step: int) -> None:
        self.n += step

    def close(self) -> None:
        self.closed = True


@pytest.mark.parametrize("quiet", [False, True])
def test_ingest_commands_show_progress_unless_quiet(
    ws: str,
    tmp_path: Path,
    capsys: pytest.CaptureFixture[str],
    monkeypatch: pytest.MonkeyPatch,
    quiet: bool,
) -> None:
    monkeypatch.setattr(commands, "progress_bar", FakeBar)
    FakeBar.made = []
    src = tmp_path / "f.csv"
    src.write_text("metric,entity,period,value\nrevenue,acme,FY2024,1\nrevenue,acme,FY2023,2\n")
    flag = ["--quiet"] if quiet else []
    assert run(capsys, "--workspace", ws, "ingest", "facts", str(src), *flag)[0] == 0
    sample = str(Path(ragspine.__file__).parent / "data" / "convfinqa_sample.json")
    assert run(capsys, "--workspace", ws, "ingest", "convfinqa", sample, *flag)[0] == 0
    seen = [(b.desc, b.unit, b.n, b.total, b.quiet, b.closed) for b in FakeBar.made]
    assert seen == [
        ("checking f.csv", "rows", 2, 2, quiet, True),
        ("writing facts", "facts", 2, 2, quiet, True),
        ("reading convfinqa_sample.json", "filings", 12, 12, quiet, True),
        ("writing facts", "facts", 136, 136, quiet, True),
    ]


def test_progress_is_silent_off_a_terminal(
    ws: str, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    src = tmp_path / "f.csv"
    src.write_text("metric,entity,period,value\nrevenue,acme,FY2024,1\n")
    code, out, err = run(capsys, "--workspace", ws, "ingest", "facts", str(src))
    assert (code, out, err) == (0, "facts: 1 added, 0 replaced, 0 unchanged\n", "")


def test_ingest_tatqa_reports_what_it_skipped(
    ws: str, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    from conftest import shared_data

    source = shared_data("tatqa", "tatqa_dataset_dev.json")
    code, out, _ = run(capsys, "--workspace", ws, "ingest", "tatqa", str(source), "--quiet")
    assert code == 0
    assert "documents: 278" in out and "column header is not a period" in out
    assert "library tatqa: 278 added" in out
    bad = tmp_path / "bad.json"
    bad.write_text('{"not": "a list"}', "utf-8")
    err = fails_cleanly(capsys, "--workspace", ws, "ingest", "tatqa", str(bad))
    assert "expected a list of TAT-QA documents" in err


def test_ingest_convfinqa_puts_the_text_in_the_library_named(
    ws: str, capsys: pytest.CaptureFixture[str]
) -> None:
    sample = str(Path(ragspine.__file__).parent / "data" / "convfinqa_sample.json")
    code, out, _ = run(capsys, "--workspace", ws, "ingest", "convfinqa", sample, "--quiet")
    assert code == 0 and "library convfinqa: 12 added" in out
    args = ("--workspace", ws, "ingest", "convfinqa", sample, "--library", "10k", "--quiet")
    code, out, _ = run(capsys, *args)
    assert code == 0 and "library 10k: 12 added" in out
    code, out, _ = run(capsys, *args)
    assert code == 0 and "library 10k: 0 added, 12 unchanged" in out


def test_an_interrupted_dataset_import_leaves_nothing_and_says_so(
    capsys: pytest.CaptureFixture[str], tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A CLI attack: Ctrl-C midway through `ingest tatqa` left the facts and some documents
    and printed only 'interrupted'. The import is one transaction: interrupted as it writes
    its facts (after its documents), it leaves nothing, and runs again whole."""
    from ragspine.stores.backend import SQLiteBackend

    source = tmp_path / "one.json"
    table = [["", "2019"], ["Revenue", "5"]]
    paragraphs = [{"uid": "p1", "order": 1, "text": "Revenue grew in 2019."}]
    document = {"table": {"uid": "one", "table": table}, "paragraphs": paragraphs}
    source.write_text(json.dumps([document]), "utf-8")
    real = SQLiteBackend.import_stores

    class Interrupted:
        def __init__(self, facts: Any) -> None:
            self.facts = facts

        def write(self, facts: Any) -> None:
            self.facts.write(facts)
            raise KeyboardInterrupt

    def interrupted(self: SQLiteBackend, chunks: Any) -> tuple[Any, Any]:
        facts, glossary = real(self, chunks)
        return Interrupted(facts), glossary

    monkeypatch.setattr(SQLiteBackend, "import_stores", interrupted)
    ws = str(tmp_path / "ws")
    code, _, err = run(capsys, "--workspace", ws, "ingest", "tatqa", str(source), "--quiet")
    assert code == 130 and "lands whole or not at all" in err, err
    assert "Traceback" not in err
    monkeypatch.undo()
    code, _, err = run(capsys, "--workspace", ws, "library", "describe", "tatqa")
    assert code == 2 and "unknown library 'tatqa'" in err, err
    code, out, _ = run(capsys, "--workspace", ws, "ingest", "tatqa", str(source), "--quiet")
    assert code == 0 and "1 added" in out and "library tatqa: 1 added" in out, out


def test_ingest_lists_each_skipped_cell_and_reports_a_table_read_as_no_number(
    capsys: pytest.CaptureFixture[str], tmp_path: Path
) -> None:
    """A CLI attack: a table written in another number format ('1.234.567', '12,5%') was
    dropped with no word, and the report's counts ('49 cell is not a number') could not be
    traced to any cell. Such a table is reported, and `--skipped` lists what was left out."""
    euro = [["", "2019", "2018"], ["Revenue", "1.234.567", "1.234,5"], ["Margin", "12,5%", "9,1%"]]
    mixed = [["", "2019", "2018"], ["Revenue", "1,200", "1,23"]]
    documents = [
        {"table": {"uid": uid, "table": table}, "paragraphs": []}
        for uid, table in (("euro", euro), ("mixed", mixed))
    ]
    source = tmp_path / "two.json"
    source.write_text(json.dumps(documents), "utf-8")
    ws = str(tmp_path / "ws")
    code, out, _ = run(
        capsys, "--workspace", ws, "ingest", "tatqa", str(source), "--skipped", "--quiet"
    )
    assert code == 0, out
    assert "1  no cell of the table reads as a number" in out, out
    assert "document 'euro': no cell of the table reads as a number" in out, out
    assert "document 'mixed', column '2018', row 'Revenue': cell is not a number" in out, out


def test_a_workspace_under_a_missing_folder_is_refused_not_made(
    capsys: pytest.CaptureFixture[str], tmp_path: Path
) -> None:
    """A CLI attack: a mistyped --workspace (/nonexistent/deep/ws) silently made the whole path
    and an empty second workspace."""
    source = tmp_path / "one.json"
    source.write_text(
        json.dumps([{"table": {"uid": "one", "table": [["", "2019"], ["Revenue", "5"]]}}]), "utf-8"
    )
    missing = tmp_path / "no" / "such" / "ws"
    err = fails_cleanly(capsys, "--workspace", str(missing), "ingest", "tatqa", str(source))
    assert "does not exist" in err and not (tmp_path / "no").exists()
