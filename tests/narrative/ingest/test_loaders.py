"""Each loader yields sections with heading paths, pages and paragraph indexes."""

from __future__ import annotations

import time
from pathlib import Path

import pytest
from files import write_docx, write_pdf

from ragspine.errors import IngestError
from ragspine.narrative.ingest.loaders import load_document


def _flat(doc):  # type: ignore[no-untyped-def]
    return [(s.heading_path, p.text, p.page) for s in doc.sections for p in s.paragraphs]


def test_text_paragraphs(tmp_path: Path) -> None:
    path = tmp_path / "notes.txt"
    path.write_text("First para\nstill first.\n\n\nSecond para.", encoding="utf-8")
    doc = load_document(path)
    assert doc.title == "notes"
    assert _flat(doc) == [((), "First para\nstill first.", None), ((), "Second para.", None)]


def test_markdown_headings(tmp_path: Path) -> None:
    path = tmp_path / "report.md"
    path.write_text(
        "# Annual report\n\nIntro text.\n\n## Revenue\n\nRevenue grew.\n\n"
        "Setext\n------\n\n```\n# not a heading\n```\n\n# Other\n\nEnd.\n",
        encoding="utf-8",
    )
    doc = load_document(path)
    assert doc.title == "Annual report"
    assert _flat(doc) == [
        (("Annual report",), "Intro text.", None),
        (("Annual report", "Revenue"), "Revenue grew.", None),
        (("Annual report", "Setext"), "# not a heading", None),
        (("Other",), "End.", None),
    ]


def test_markdown_headings_are_stored_as_plain_text(tmp_path: Path) -> None:
    """Inline markup and invisible characters never reach a stored heading (nor its matching)."""
    path = tmp_path / "plan.md"
    path.write_text(
        "# **Merger** talks\n\nA.\n\n## Sal\u00adary Review\n\nB.\n\n"
        '## Merger\u200b  talks\n\nC.\n\n## [The *pay* plan](https://x.example/a "t")\n\nD.\n\n'
        "## The `a*b` and \\*starred\\* __fy_2024_plan__ ~~old~~ <b>bold</b>\n\nE.\n\n"
        "_Setext_ ![chart](c.png)\n------\n\nF.\n",
        encoding="utf-8",
    )
    doc = load_document(path)
    assert doc.title == "Merger talks"
    assert [section.heading_path[-1] for section in doc.sections] == [
        "Merger talks",
        "Salary Review",
        "Merger talks",
        "The pay plan",
        "The a*b and *starred* fy_2024_plan old bold",
        "Setext chart",
    ]


def test_overlong_markdown_headings_keep_their_markup_quickly(tmp_path: Path) -> None:
    path = tmp_path / "long.md"
    path.write_text("# " + "**a " * 25_000 + "\n\nText.\n", encoding="utf-8")
    started = time.perf_counter()
    ((heading,),) = [section.heading_path for section in load_document(path).sections]
    assert time.perf_counter() - started < 2  # stripping it would take about a minute
    assert heading == ("**a " * 25_000).strip()


def test_html_headings_drop_invisible_characters(tmp_path: Path) -> None:
    path = tmp_path / "page.html"
    path.write_text("<h1>Sal&shy;ary\u200b <em>Review</em></h1><p>Text.</p>", encoding="utf-8")
    assert _flat(load_document(path)) == [(("Salary Review",), "Text.", None)]


def test_html_headings_and_blocks(tmp_path: Path) -> None:
    path = tmp_path / "page.html"
    path.write_text(
        "<html><head><title>The page</title><style>p {}</style></head><body>"
        "<h1>Results</h1><p>Sales &amp; margins rose.</p><script>var x;</script>"
        "<h2>Europe</h2><ul><li>Italy grew.</li><li>Spain fell.</li></ul></body></html>",
        encoding="utf-8",
    )
    doc = load_document(path)
    assert doc.title == "The page"
    assert _flat(doc) == [
        (("Results",), "Sales & margins rose.", None),
        (("Results", "Europe"), "Italy grew.", None),
        (("Results", "Europe"), "Spain fell.", None),
    ]


def test_pdf_pages(tmp_path: Path) -> None:
    path = write_pdf(tmp_path / "filing.pdf", [["Revenue grew 3.5%."], ["Cash flow was strong."]])
    doc = load_document(path)
    flat = _flat(doc)
    assert [(heading, page) for heading, _, page in flat] == [(("page 1",), 1), (("page 2",), 2)]
    assert "Revenue grew 3.5%." in flat[0][1]
    assert "Cash flow was strong." in flat[1][1]


def test_docx_headings_and_tables(tmp_path: Path) -> None:
    doc = load_document(write_docx(tmp_path / "review.docx"))
    assert doc.title == "Quarterly review"
    assert _flat(doc) == [
        (("Quarterly review",), "Revenue grew 3.5% in the quarter. Costs were flat.", None),
        (("Quarterly review", "Outlook"), "We expect growth in the U.S. market.", None),
        (("Quarterly review", "Outlook"), "Region | Europe", None),
    ]


def test_unsupported_and_broken_files_are_ingest_errors(tmp_path: Path) -> None:
    (tmp_path / "a.xyz").write_text("x")
    with pytest.raises(IngestError, match=r"unsupported file type '\.xyz'"):
        load_document(tmp_path / "a.xyz")
    (tmp_path / "b.pdf").write_bytes(b"not a pdf at all")
    with pytest.raises(IngestError, match=r"b\.pdf"):
        load_document(tmp_path / "b.pdf")
    (tmp_path / "c.docx").write_bytes(b"PK nonsense")
    with pytest.raises(IngestError, match=r"c\.docx"):
        load_document(tmp_path / "c.docx")
    (tmp_path / "d.txt").write_bytes(b"\xff\xfe\xfa")
    with pytest.raises(IngestError, match="UTF-8"):
        load_document(tmp_path / "d.txt")
