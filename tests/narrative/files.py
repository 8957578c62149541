"""Small document files generated for tests (no fixtures from elsewhere)."""

from __future__ import annotations

import json
from collections.abc import Iterable, Mapping
from pathlib import Path


def write_beir_corpus(folder: Path, records: Iterable[Mapping[str, object]]) -> Path:
    """Write ``records`` to ``folder/corpus.jsonl``, one JSON object a line; ``folder``."""
    folder.mkdir(parents=True, exist_ok=True)
    with (folder / "corpus.jsonl").open("w", encoding="utf-8") as out:
        for record in records:
            out.write(json.dumps(record) + "\n")
    return folder


def _pdf_text_stream(lines: list[str]) -> bytes:
    body = ["BT", "/F1 12 Tf", "72 720 Td", "14 TL"]
    for line in lines:
        escaped = line.replace("\\", "\\\\").replace("(", "\\(").replace(")", "\\)")
        body.append(f"({escaped}) Tj T*")
    body.append("ET")
    return "\n".join(body).encode("latin-1")


def write_pdf(path: Path, pages: list[list[str]]) -> Path:
    """Write a minimal valid PDF with one text page per entry of ``pages``."""
    objects: list[bytes] = []
    page_ids = [3 + 2 * i for i in range(len(pages))]
    font_id = 3 + 2 * len(pages)
    objects.append(b"<< /Type /Catalog /Pages 2 0 R >>")
    kids = " ".join(f"{pid} 0 R" for pid in page_ids)
    objects.append(f"<< /Type /Pages /Kids [{kids}] /Count {len(pages)} >>".encode())
    for index, lines in enumerate(pages):
        content_id = page_ids[index] + 1
        objects.append(
            f"<< /Type /Page /Parent 2 0 R /MediaBox [0 0 612 792] /Contents {content_id} 0 R "
            f"/Resources << /Font << /F1 {font_id} 0 R >> >> >>".encode()
        )
        stream = _pdf_text_stream(lines)
        objects.append(f"<< /Length {len(stream)} >>\nstream\n".encode() + stream + b"\nendstream")
    objects.append(b"<< /Type /Font /Subtype /Type1 /BaseFont /Helvetica >>")
    out = bytearray(b"%PDF-1.4\n")
    offsets = []
    for number, body in enumerate(objects, start=1):
        offsets.append(len(out))
        out += f"{number} 0 obj\n".encode() + body + b"\nendobj\n"
    xref = len(out)
    out += f"xref\n0 {len(objects) + 1}\n0000000000 65535 f \n".encode()
    for offset in offsets:
        out += f"{offset:010d} 00000 n \n".encode()
    out += (
        f"trailer\n<< /Size {len(objects) + 1} /Root 1 0 R >>\nstartxref\n{xref}\n%%EOF\n".encode()
    )
    path.write_bytes(bytes(out))
    return path


def write_docx(path: Path) -> Path:
    """Write a .docx with a title, two headings, paragraphs and a table."""
    import docx

    document = docx.Document()
    document.add_heading("Quarterly review", level=1)
    document.add_paragraph("Revenue grew 3.5% in the quarter. Costs were flat.")
    document.add_heading("Outlook", level=2)
    document.add_paragraph("We expect growth in the U.S. market.")
    table = document.add_table(rows=1, cols=2)
    table.rows[0].cells[0].text = "Region"
    table.rows[0].cells[1].text = "Europe"
    document.save(str(path))
    return path
