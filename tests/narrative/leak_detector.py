"""A leak detector for everything a reading caller receives from the narrative channel.

It builds the same small workspace twice, in two folders. In the *present* run a unique secret
word is planted where a public asker must never see it (a restricted heading that is also the
document's first H1 and so its title, a confidential sub-heading, restricted sub-headings spelled
unlike their sidecar keys, restricted and confidential text, hidden documents, the descriptions
of libraries above the asker's level) and extra hidden material is added. In the *absent* run
the same places hold a decoy word and the extra hidden material is left out; what the asker may
see is identical. (Hidden sections sit where they do not shift the numbering of visible chunks
and sections, which is positional.)

Then it asks both workspaces the same questions as one principal through every reading surface
(``search`` and ``ask`` in every mode, with and without routing and library names, their
``to_dict()`` forms and the CLI's ``--json`` output, ``libraries``, ``library describe``) and
asserts two things:

1. the secret word appears nowhere in what the present run returns (the caller's own question
   echoed back excepted), and
2. the two runs return byte-identical outputs (timings and creation times aside), so no count,
   score, note, routing decision or error depends on what the caller cannot see.
"""

from __future__ import annotations

import contextlib
import dataclasses
import io
import json
import re
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from hashing_embedder import HashingEmbedder

from ragspine import Principal, RagSpineError, Workspace
from ragspine.cli import main

SECRET = "Zebra7731"
DECOY = "Quagga5550"
QUESTIONS = (
    SECRET,
    f"{SECRET} programme budget",
    "Okapi programme",
    "budget plan",
    "salary plan",
    "merger salary budget",
    f"compensation {SECRET}",
    "board minutes budget",
    "archive records",
)
MODES = ("bm25", "lexical", "economy", "hybrid", "vector", "auto")
LIBRARIES = ("reports", "archive", "vault", "minutes")


def _write(path: Path, text: str, meta: dict[str, object] | None = None) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(text, encoding="utf-8")
    if meta is not None:
        path.with_name(path.name + ".meta.json").write_text(json.dumps(meta), encoding="utf-8")


def build_workspace(root: Path, word: str, *, extra_hidden: bool, location: str = "ws") -> None:
    """Write the documents under ``root/docs`` and ingest them into ``location`` (a folder under
    ``root``, or a PostgreSQL URL).

    ``word`` goes wherever a public asker must not look; ``extra_hidden`` adds hidden material
    (documents, paragraphs, a library's documents) that leaves the visible part unchanged.
    """
    docs = root / "docs"
    hidden_more = (
        f"\n\nThe {word} budget plan doubles the salary plan budget. " * 3 if extra_hidden else ""
    )
    _write(
        docs / "reports" / "plan.md",
        f"# {word} Okapi programme\n\n"
        f"The {word} programme budget stays between the two founders.{hidden_more}\n\n"
        "# Budget overview\n\n"
        "The budget plan for 2024 is 12 million. The salary plan follows next year.\n\n"
        "Travel costs fall as the budget plan moves meetings online.\n\n"
        f"## Compensation {word}\n\n"
        f"The salary plan {word} raises pay by 7 percent.{hidden_more}\n\n"
        # restricted sections spelled unlike their sidecar keys: a soft hyphen and a zero-width
        # space in the heading, inline emphasis, a soft hyphen in the key
        f"## Sal\u00adary review {word}\n\nThe salary review {word} freezes the budget plan.\n\n"
        f"## Merger\u200b talks {word}\n\nThe merger talks {word} price the salary budget.\n\n"
        f"## **Merger** plan {word}\n\nThe merger plan {word} sets the budget.\n\n"
        f"## Board pay {word}\n\nThe board pay {word} budget plan is frozen.\n",
        {
            "section_sensitivity": {
                f"{word} Okapi programme": "restricted",
                f"Compensation {word}": "confidential",
                f"Salary review {word}": "restricted",
                f"Merger talks {word}": "restricted",
                f"Merger plan {word}": "restricted",
                f"Board p\u00aday {word}": "restricted",
            }
        },
    )
    _write(
        docs / "reports" / "notes.md",
        "# Public notes\n\nThe budget plan covers salary, travel and the board minutes.\n",
    )
    _write(docs / "minutes" / "open.txt", "Minutes of the open board meeting on the budget.\n")
    if extra_hidden:
        _write(
            docs / "reports" / "deal.txt",
            f"The merger {word} and its salary budget plan.\n\nBoard minutes on the merger.\n",
            {"sensitivity": "restricted"},
        )
        _write(
            docs / "reports" / "board.md",
            f"# Board {word}\n\nBoard minutes on the budget plan and {word}.\n",
            {"sensitivity": "confidential"},
        )
        _write(docs / "archive" / "old.txt", f"Archive records of the {word} budget.\n")
        _write(docs / "vault" / "keys.txt", f"The vault keeps the {word} merger budget.\n")
    with contextlib.chdir(root):
        ws = _open(location)
        ws.create_library("reports", description="Quarterly business reports", vectors=True)
        ws.create_library("archive", description="Archive records")
        ws.create_library(  # seen through its public document; its description is confidential
            "minutes", description=f"{word} board minutes", default_sensitivity="confidential"
        )
        ws.ingest_documents([Path("docs") / "reports"], library="reports")
        ws.ingest_documents([Path("docs") / "minutes"], library="minutes", sensitivity="public")
        if extra_hidden:  # a library only cleared readers know of, and hidden documents
            ws.create_library(
                "vault", description=f"{word} merger files", default_sensitivity="confidential"
            )
            ws.ingest_documents([Path("docs") / "vault"], library="vault")
            ws.ingest_documents(
                [Path("docs") / "archive"], library="archive", sensitivity="confidential"
            )
    ws.close()


def _open(location: str | Path) -> Workspace:
    """The workspace at ``location``, embedding with the deterministic test embedder."""
    ws = Workspace.open(location)
    ws.vector_indexes.use_embedder(HashingEmbedder())
    return ws


def _call(produce: Callable[[], object]) -> object:
    """What a caller receives: the value, or the error's type and message."""
    try:
        return produce()
    except RagSpineError as exc:
        return {"error": type(exc).__name__, "message": str(exc)}


def _cli(root: Path, location: str, *argv: str) -> str:
    """Run the ``ragspine`` command in ``root``; return its exit code, stdout and stderr."""
    out, err = io.StringIO(), io.StringIO()
    with contextlib.chdir(root), contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
        try:
            code = main(["--workspace", location, *argv])
        except SystemExit as exc:  # a usage error
            code = exc.code  # type: ignore[assignment]
    stdout = out.getvalue()
    with contextlib.suppress(ValueError):
        stdout = _dump(_without_question(json.loads(stdout)))
    return f"exit {code}\n{stdout}\n{err.getvalue()}"


_TIMINGS = re.compile(r'"seconds": [0-9.e-]+')
_CREATED = re.compile(r'"created_at": "[^"]*"')


def normalize(text: str) -> str:
    """Zero timings and creation times, which differ between any two runs."""
    return _CREATED.sub('"created_at": ""', _TIMINGS.sub('"seconds": 0', text))


def _dump(value: object) -> str:
    if isinstance(value, str):
        return value
    return json.dumps(value, indent=1, ensure_ascii=False, sort_keys=True, default=repr)


def _without_question(data: object) -> object:
    """A ``to_dict()`` form without the caller's own question echoed back."""
    if isinstance(data, dict):
        return {k: _without_question(v) for k, v in data.items() if k != "question"}
    return data


def _cli_clearance(principal: Principal) -> list[str]:
    """The CLI options naming ``principal`` (none for public, the default)."""
    if principal == Principal():
        return []
    groups = [arg for group in sorted(principal.groups) for arg in ("--group", group)]
    return ["--clearance", principal.clearance.label, *groups]


Reader = Callable[[Workspace, Principal], object]


def _libraries(ws: Workspace, principal: Principal) -> object:
    return [dataclasses.asdict(lib) for lib in ws.libraries(principal=principal)]


def _describe(name: str) -> Reader:
    return lambda ws, principal: ws.describe_library(name, principal=principal)


def _search(question: str, **options: Any) -> Reader:
    def read(ws: Workspace, principal: Principal) -> object:
        result = ws.search(question, top_k=20, principal=principal, **options)
        return _without_question(result.to_dict(timings=False))

    return read


def _ask(question: str, *, render: bool) -> Reader:
    def read(ws: Workspace, principal: Principal) -> object:
        answer = ws.answer_narrative(question, top_k=10, principal=principal)
        return answer.render() if render else answer.to_dict(timings=False)

    return read


def outputs(
    root: Path, principal: Principal, location: str = "ws"
) -> Iterator[tuple[str, Callable[[], str]]]:
    """Every reading surface for ``principal``, as ``(label, produce the output)`` pairs."""
    who = _cli_clearance(principal)

    def api(read: Reader) -> Callable[[], str]:
        def produce() -> str:
            with contextlib.chdir(root):
                ws = _open(location)
            try:
                return _dump(_call(lambda: read(ws, principal)))
            finally:
                ws.close()

        return produce

    def cli(*argv: str) -> Callable[[], str]:
        return lambda: _cli(root, location, *argv, *who)

    yield "libraries", api(_libraries)
    yield "cli libraries", cli("libraries")
    for name in LIBRARIES:
        yield f"describe {name}", api(_describe(name))
        yield f"cli describe {name}", cli("library", "describe", name)
    for question in QUESTIONS:
        for mode in MODES:
            for names in (None, ["reports"], ["vault"], ["archive", "reports"]):
                read = _search(question, mode=mode, libraries=names)
                yield f"search {question!r} {mode} {names}", api(read)
        yield f"search {question!r} unrouted", api(_search(question, route=False))
        yield f"ask {question!r}", api(_ask(question, render=False))
        yield f"ask render {question!r}", api(_ask(question, render=True))
        yield f"cli search {question!r}", cli("search", question, "--json")
        yield f"cli ask {question!r}", cli("ask", question, "--json")


@dataclass(frozen=True, slots=True)
class Runs:
    """The two workspaces the detector compares."""

    present: Path
    absent: Path
    present_ws: str = "ws"
    absent_ws: str = "ws"
    """Where each run's workspace is: a folder under its path, or a PostgreSQL URL."""


def build_runs(tmp_path: Path, locations: tuple[str, str] = ("ws", "ws")) -> Runs:
    """Build the present and absent workspaces under ``tmp_path`` (or at ``locations``)."""
    runs = Runs(tmp_path / "present", tmp_path / "absent", *locations)
    build_workspace(runs.present, SECRET, extra_hidden=True, location=runs.present_ws)
    build_workspace(runs.absent, DECOY, extra_hidden=False, location=runs.absent_ws)
    return runs


def assert_no_leak(
    runs: Runs, principal: Principal, *, only: Callable[[str], bool] = lambda label: True
) -> int:
    """Fail when the secret reaches ``principal`` or any output differs between the runs.

    ``only`` picks the surfaces to check by label; returns how many outputs were compared.
    """
    absent = dict(outputs(runs.absent, principal, runs.absent_ws))
    compared = 0
    for label, produce in outputs(runs.present, principal, runs.present_ws):
        if not only(label):
            continue
        seen = normalize(produce())
        assert "usage:" not in seen, f"{label}: the command line refused the options:\n{seen}"
        assert SECRET.casefold() not in seen.casefold(), f"{label}: the secret leaks:\n{seen}"
        expected = normalize(absent[label]())
        assert seen == expected, (
            f"{label}: depends on content {principal.clearance.label} may not see:\n"
            f"--- secret present\n{seen}\n--- secret absent\n{expected}"
        )
        compared += 1
    return compared
