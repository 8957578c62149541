"""Document loaders: .txt, .md, .html, .pdf and .docx files into titled sections of paragraphs.

Every loader returns a :class:`LoadedDocument` whose sections carry a heading path and whose
paragraphs carry their page (PDF) and index, from which chunk locators are built. Headings are
plain text in their stored form (:func:`heading_text`): Markdown headings lose their inline
markup, and every heading goes through :func:`ragspine.text.display_text`.
"""

from __future__ import annotations

import logging
import os
import re
import stat
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from html.parser import HTMLParser
from pathlib import Path

from ragspine.errors import IngestError, MissingExtraError, quote_input
from ragspine.text import display_text


@dataclass(frozen=True, slots=True)
class Paragraph:
    """One block of text; ``page`` is 1-based for PDFs and ``None`` elsewhere."""

    text: str
    page: int | None = None


@dataclass(frozen=True, slots=True)
class Section:
    """A run of paragraphs under one heading path (outermost heading first)."""

    heading_path: tuple[str, ...]
    paragraphs: tuple[Paragraph, ...]


@dataclass(frozen=True, slots=True)
class LoadedDocument:
    """A loaded file: its title, its sections and the raw bytes its content hash is taken from."""

    title: str
    sections: tuple[Section, ...]
    content: bytes


_BLANK_LINES = re.compile(r"\n\s*\n")


def _paragraphs(text: str, page: int | None = None) -> list[Paragraph]:
    return [Paragraph(block.strip(), page) for block in _BLANK_LINES.split(text) if block.strip()]


def _decode(raw: bytes, path: Path) -> str:
    try:
        return raw.decode("utf-8-sig")
    except UnicodeDecodeError as exc:
        raise IngestError(
            f"{path}: not valid UTF-8 text (byte {exc.start}); convert the file to UTF-8"
        ) from None


def heading_text(text: str) -> str:
    """A heading as stored and shown: :func:`ragspine.text.display_text`, white space collapsed."""
    return " ".join(display_text(text).split())


class _SectionBuilder:
    """Collects paragraphs and closes a section whenever the heading path changes."""

    def __init__(self) -> None:
        self.sections: list[Section] = []
        self.headings: list[tuple[int, str]] = []
        self._pending: list[Paragraph] = []

    def heading(self, level: int, text: str) -> None:
        self.flush()
        self.headings = [(lvl, txt) for lvl, txt in self.headings if lvl < level]
        self.headings.append((level, heading_text(text)))

    def paragraph(self, text: str, page: int | None = None) -> None:
        if text.strip():
            self._pending.append(Paragraph(text.strip(), page))

    def flush(self) -> None:
        if self._pending:
            path = tuple(text for _, text in self.headings)
            self.sections.append(Section(path, tuple(self._pending)))
            self._pending = []

    def finish(self) -> tuple[Section, ...]:
        self.flush()
        return tuple(self.sections)


def load_text(path: Path, raw: bytes) -> LoadedDocument:
    """Plain text: one section, paragraphs separated by blank lines."""
    paragraphs = _paragraphs(_decode(raw, path))
    return LoadedDocument(path.stem, (Section((), tuple(paragraphs)),), raw)


_ATX = re.compile(r"^(#{1,6})\s+(.*?)\s*#*\s*$")
_FENCE = re.compile(r"^\s*(```|~~~)")
_SETEXT = re.compile(r"\s*(=+|-{2,})\s*")
_LITERAL = re.compile(r"(?<!`)(`+)(?!`)(.+?)(?<!`)\1(?!`)|\\([!-/:-@\[-`{-~])")
_SLOT = re.compile("\x00([0-9]+)\x00")
_AUTOLINK = re.compile(r"<([A-Za-z][A-Za-z0-9+.-]*:[^<>\s]*)>")
_TAG = re.compile(r"</?[A-Za-z][A-Za-z0-9-]*(?:\s[^<>]*)?/?>")
_LINK = re.compile(r"!?\[([^\[\]]*)\](?:\([^()]*\)|\[[^\[\]]*\])")
_STARS = re.compile(r"(\*{1,3}|~~)(?=\S)(.+?)(?<=\S)\1")
_UNDERSCORES = re.compile(r"(?<!\w)(_{1,3})(?=\S)(.+?)(?<=\S)\1(?!\w)")
MARKUP_LIMIT = 300
"""Longer Markdown headings keep their markup: stripping it costs time quadratic in the length,
and no real heading is that long (a sidecar key for one then names no heading and fails)."""


def markdown_heading(text: str) -> str:
    """The plain text of a Markdown heading: code spans and backslash escapes kept as written,
    links and images replaced by their text, emphasis and strike-through markers, autolink
    brackets and inline HTML tags removed; then :func:`heading_text`. Headings longer than
    :data:`MARKUP_LIMIT` characters keep their markup."""
    if len(text) > MARKUP_LIMIT:
        return heading_text(text)
    literals: list[str] = []

    def hold(match: re.Match[str]) -> str:
        code = match.group(2)
        if code is None:
            literals.append(match.group(3))
        else:
            spaced = code.startswith(" ") and code.endswith(" ") and code.strip()
            literals.append(code[1:-1] if spaced else code)
        return f"\x00{len(literals) - 1}\x00"

    plain = _LITERAL.sub(hold, display_text(text))  # display_text leaves no NUL to confuse
    plain = _TAG.sub("", _AUTOLINK.sub(r"\1", plain))
    for pattern, content in ((_LINK, r"\1"), (_STARS, r"\2"), (_UNDERSCORES, r"\2")):
        count = 1
        while count:  # nested markup: **[x](url)**, ***x***
            plain, count = pattern.subn(content, plain)
    return heading_text(_SLOT.sub(lambda match: literals[int(match.group(1))], plain))


def load_markdown(path: Path, raw: bytes) -> LoadedDocument:
    """Markdown: ATX and setext headings open sections; blank lines separate paragraphs."""
    lines = _decode(raw, path).splitlines()
    builder = _SectionBuilder()
    title = ""
    block: list[str] = []
    in_fence = False

    def close_block() -> None:
        if block:
            builder.paragraph("\n".join(block))
            block.clear()

    for line in lines:
        if _FENCE.match(line):
            in_fence = not in_fence
            continue
        if in_fence:
            block.append(line)
            continue
        atx = _ATX.match(line)
        if atx:
            close_block()
            level, text = len(atx.group(1)), markdown_heading(atx.group(2))
        elif len(block) == 1 and _SETEXT.fullmatch(line):
            level, text = (1 if "=" in line else 2), markdown_heading(block.pop())
        elif not line.strip():
            close_block()
            continue
        else:
            block.append(line)
            continue
        builder.heading(level, text)
        title = title or (text if level == 1 else "")
    close_block()
    return LoadedDocument(title or path.stem, builder.finish(), raw)


class _HtmlSections(HTMLParser):
    _BLOCKS = frozenset({"p", "li", "td", "th", "div", "pre", "blockquote", "dd", "dt", "caption"})
    _SKIP = frozenset({"script", "style", "noscript", "template", "head"})

    def __init__(self) -> None:
        super().__init__(convert_charrefs=True)
        self.builder = _SectionBuilder()
        self.title = ""
        self._text: list[str] = []
        self._heading_level = 0
        self._skip_depth = 0
        self._in_title = False

    def _emit(self) -> None:
        text = " ".join("".join(self._text).split())
        self._text = []
        if not text:
            return
        if self._heading_level:
            self.builder.heading(self._heading_level, text)
        else:
            self.builder.paragraph(text)

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        if tag == "title":
            self._in_title = True
        elif tag in self._SKIP:
            self._skip_depth += 1
        elif re.fullmatch(r"h[1-6]", tag):
            self._emit()
            self._heading_level = int(tag[1])
        elif tag in self._BLOCKS or tag == "br":
            self._emit()

    def handle_endtag(self, tag: str) -> None:
        if tag == "title":
            self._in_title = False
        elif tag in self._SKIP:
            self._skip_depth = max(0, self._skip_depth - 1)
        elif re.fullmatch(r"h[1-6]", tag):
            heading = " ".join("".join(self._text).split())
            self._text = []
            if heading:
                self.builder.heading(self._heading_level, heading)
                if self._heading_level == 1 and not self.title:
                    self.title = heading
            self._heading_level = 0
        elif tag in self._BLOCKS:
            self._emit()

    def handle_data(self, data: str) -> None:
        if self._in_title:
            self.title = self.title or " ".join(data.split())
        elif not self._skip_depth:
            self._text.append(data)


def load_html(path: Path, raw: bytes) -> LoadedDocument:
    """HTML: h1-h6 open sections; p, li, td and similar blocks become paragraphs."""
    parser = _HtmlSections()
    parser.feed(_decode(raw, path))
    parser.close()
    parser._emit()
    return LoadedDocument(parser.title or path.stem, parser.builder.finish(), raw)


def load_pdf(path: Path, raw: bytes) -> LoadedDocument:
    """PDF: one section per page (PDFs carry no reliable headings); locators name the page."""
    try:
        import io

        from pypdf import PdfReader
        from pypdf.errors import PdfReadError
    except ImportError:
        raise MissingExtraError("loading PDF files", "docs") from None
    # pypdf logs what it repairs ("invalid pdf header", "EOF marker not found") on its own
    # logger; a file it cannot read is reported once, by the error below
    logging.getLogger("pypdf").setLevel(logging.ERROR)
    try:
        reader = PdfReader(io.BytesIO(raw))
        if reader.is_encrypted:
            raise IngestError(f"{path}: the PDF is encrypted; decrypt it before ingesting")
        sections = []
        for number, page in enumerate(reader.pages, start=1):
            paragraphs = _paragraphs(page.extract_text() or "", number)
            if paragraphs:
                sections.append(Section((f"page {number}",), tuple(paragraphs)))
        metadata = reader.metadata
        title = str(metadata.get("/Title") or "") if metadata else ""
    except (PdfReadError, ValueError, KeyError, TypeError) as exc:
        raise IngestError(
            f"{path}: unreadable PDF ({exc}); check the file is a valid PDF"
        ) from None
    return LoadedDocument(title or path.stem, tuple(sections), raw)


def load_docx(path: Path, raw: bytes) -> LoadedDocument:
    """Word: 'Heading N' and 'Title' styles open sections; table rows become paragraphs."""
    try:
        import io
        import zipfile

        import docx
    except ImportError:
        raise MissingExtraError("loading .docx files", "docs") from None
    try:
        document = docx.Document(io.BytesIO(raw))
    except (zipfile.BadZipFile, KeyError, ValueError) as exc:
        raise IngestError(f"{path}: unreadable .docx ({exc}); re-save it from Word") from None
    builder = _SectionBuilder()
    title = str(document.core_properties.title or "")
    for paragraph in document.paragraphs:
        style = paragraph.style.name if paragraph.style is not None else ""
        text = paragraph.text.strip()
        heading = re.fullmatch(r"Heading (\d)", style or "")
        if text and (heading or style == "Title"):
            builder.heading(int(heading.group(1)) if heading else 1, text)
            title = title or text
        else:
            builder.paragraph(text)
    for table in document.tables:
        for row in table.rows:
            builder.paragraph(" | ".join(cell.text.strip() for cell in row.cells))
    return LoadedDocument(title or path.stem, builder.finish(), raw)


Loader = Callable[[Path, bytes], LoadedDocument]

LOADERS: dict[str, Loader] = {
    ".txt": load_text,
    ".text": load_text,
    ".md": load_markdown,
    ".markdown": load_markdown,
    ".html": load_html,
    ".htm": load_html,
    ".pdf": load_pdf,
    ".docx": load_docx,
}


def load_document(path: Path) -> LoadedDocument:
    """Load ``path`` with the loader for its extension; errors name the file."""
    loader = LOADERS.get(path.suffix.lower())
    if loader is None:
        known = ", ".join(sorted(LOADERS))
        raise IngestError(
            f"{path}: unsupported file type {quote_input(path.suffix)}; supported: {known}"
        )
    try:
        raw = path.read_bytes()
    except OSError as exc:
        raise IngestError(f"{path}: cannot read file ({exc.strerror})") from None
    document = loader(path, raw)
    if not any(section.paragraphs for section in document.sections):
        hint = " (scanned PDFs need OCR first)" if path.suffix.lower() == ".pdf" else ""
        raise IngestError(f"{path}: no text found{hint}")
    return document


SIDECAR_SUFFIX = ".meta.json"


@dataclass(frozen=True, slots=True)
class FoundFile:
    """A file met while walking an ingest folder: to load, or skipped with the reason."""

    path: Path
    skipped: str | None = None


_NOT_REGULAR = "not a regular file (a pipe, socket or device), not read"


def _regular_file(path: Path) -> bool:
    try:
        return stat.S_ISREG(path.stat().st_mode)
    except OSError:
        return False


def iter_document_files(root: Path) -> Iterator[FoundFile]:
    """Every file under ``root`` (or ``root`` itself) in sorted order, each to load or skipped
    with a reason: unsupported types, hidden files and folders, and symbolic links that lead
    outside ``root`` (never followed). Metadata sidecars are read with their document."""
    if not root.is_dir():
        regular = _regular_file(root)
        yield FoundFile(root, None if regular else _NOT_REGULAR)
        return
    top = root.resolve()
    for dirpath, dirnames, filenames in os.walk(root, followlinks=False):
        folder = Path(dirpath)
        entries = sorted(
            [(name, True) for name in dirnames] + [(name, False) for name in filenames]
        )
        dirnames.clear()
        for name, is_dir in entries:
            path = folder / name
            if name.startswith("."):
                kind = "folder" if is_dir else "file"
                yield FoundFile(path, f"hidden {kind}, not ingested")
                continue
            if path.is_symlink():
                try:
                    target = path.resolve(strict=True)
                    target.relative_to(top)
                except (OSError, ValueError):
                    yield FoundFile(path, "symbolic link leading outside the folder, not followed")
                    continue
                if target.is_dir():
                    yield FoundFile(path, "symbolic link to a folder, not followed")
                    continue
            elif is_dir:
                dirnames.append(name)
                continue
            if not _regular_file(path):
                yield FoundFile(path, _NOT_REGULAR)
                continue
            if name.endswith(SIDECAR_SUFFIX):
                continue
            if path.suffix.lower() not in LOADERS:
                known = ", ".join(sorted(LOADERS))
                yield FoundFile(path, f"unsupported file type (supported: {known})")
                continue
            yield FoundFile(path)
