"""CLI commands of the narrative channel: ingest, libraries, library, search."""

from __future__ import annotations

import argparse
import json
import sys

from ragspine.cli import command_group
from ragspine.narrative.ingest import DocumentOutcome, IngestReport, parse_meta_pairs
from ragspine.narrative.modes import RetrievalMode
from ragspine.narrative.snippets import format_locator
from ragspine.security import Principal
from ragspine.workspace import Workspace


def _progress(done: int, total: int | None, outcome: DocumentOutcome) -> None:
    detail = f" ({outcome.chunks} chunks)" if outcome.chunks else ""
    reason = f": {outcome.reason}" if outcome.reason else ""
    of_total = f"/{total}" if total else ""
    print(
        f"[{done}{of_total}] {outcome.status.value} {outcome.source}{detail}{reason}",
        file=sys.stderr,
    )


def _beir_progress(done: int, total: int | None, outcome: DocumentOutcome) -> None:
    if done % 1000 == 0 or outcome.reason:
        _progress(done, total, outcome)


def _finish(report: IngestReport) -> int:
    if report.created_library:
        print(f"created library {report.library_id}", file=sys.stderr)
    print(report.summary())
    return 1 if report.failures else 0


def _ingest_docs(args: argparse.Namespace) -> int:
    workspace = Workspace.open(args.workspace)
    report = workspace.ingest_documents(
        args.paths,
        library=args.library,
        metadata=parse_meta_pairs(args.meta),
        sensitivity=args.sensitivity,
        window=args.window,
        progress=_progress,
    )
    return _finish(report)


def _ingest_beir(args: argparse.Namespace) -> int:
    workspace = Workspace.open(args.workspace)
    report = workspace.ingest_beir(args.folder, library=args.library, progress=_beir_progress)
    return _finish(report)


def _libraries(args: argparse.Namespace) -> int:
    workspace = Workspace.open(args.workspace)
    for library in workspace.libraries():
        print(
            f"{library.library_id}\t{library.documents} documents\t{library.chunks} chunks\t"
            f"{library.default_sensitivity.label}\t{library.description}"
        )
    return 0


def _library_create(args: argparse.Namespace) -> int:
    workspace = Workspace.open(args.workspace)
    library = workspace.create_library(
        args.name, description=args.description, default_sensitivity=args.sensitivity
    )
    print(f"created library {library.library_id}")
    return 0


def _library_describe(args: argparse.Namespace) -> int:
    workspace = Workspace.open(args.workspace)
    print(json.dumps(workspace.describe_library(args.name), indent=2, ensure_ascii=False))
    return 0


def _search(args: argparse.Namespace) -> int:
    workspace = Workspace.open(args.workspace)
    result = workspace.search(
        args.question,
        libraries=args.library or None,
        mode=args.mode,
        top_k=args.top_k,
        filters=args.filter or None,
        principal=Principal.of(args.clearance),
    )
    if args.json:
        print(json.dumps(result.to_dict(), indent=2, ensure_ascii=False))
        return 0
    for rank, snippet in enumerate(result.snippets, start=1):
        print(
            f"{rank}. [{snippet.score:.4f}] {snippet.library_id}/{snippet.doc_id} "
            f"({format_locator(snippet.source_locator)})"
        )
        print(f"   {snippet.text}")
    if not result.snippets:
        print("no matching chunks", file=sys.stderr)
    return 0


def register(subparsers: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    """Add the narrative-channel commands."""
    kinds = command_group(subparsers, "ingest", "ingest facts or documents into the workspace")

    docs = kinds.add_parser("docs", help="ingest .txt/.md/.html/.pdf/.docx files or folders")
    docs.add_argument("paths", nargs="+", metavar="PATH")
    docs.add_argument("--library", required=True, help="target library (created if missing)")
    docs.add_argument(
        "--meta", action="append", default=[], metavar="KEY=VALUE", help="document metadata"
    )
    docs.add_argument("--sensitivity", help="sensitivity of these documents (else the default)")
    docs.add_argument(
        "--window", type=int, default=0, metavar="N", help="sentence-window chunks: ±N sentences"
    )
    docs.set_defaults(func=_ingest_docs)

    beir = kinds.add_parser("beir", help="ingest a BEIR corpus folder (corpus.jsonl)")
    beir.add_argument("folder", metavar="DIR")
    beir.add_argument("--library", required=True)
    beir.set_defaults(func=_ingest_beir)

    subparsers.add_parser("libraries", help="list document libraries").set_defaults(func=_libraries)
    library = subparsers.add_parser("library", help="create or describe a library")
    actions = library.add_subparsers(dest="action", metavar="ACTION")
    actions.required = True
    create = actions.add_parser("create", help="create a library")
    create.add_argument("name")
    create.add_argument("--description", default="", help="what the library holds (for routing)")
    create.add_argument("--sensitivity", default="public", help="default document sensitivity")
    create.set_defaults(func=_library_create)
    describe = actions.add_parser("describe", help="show a library's settings and counts")
    describe.add_argument("name")
    describe.set_defaults(func=_library_describe)

    search = subparsers.add_parser("search", help="search document libraries")
    search.add_argument("question")
    search.add_argument("--library", action="append", help="library to search (repeatable)")
    search.add_argument(
        "--mode",
        default=RetrievalMode.BM25.value,
        help=f"retrieval mode: {', '.join(m.value for m in RetrievalMode)} (default bm25)",
    )
    search.add_argument("--top-k", type=int, default=10)
    search.add_argument(
        "--filter",
        action="append",
        metavar="EXPR",
        help='metadata filter, e.g. "year>=2020" or "region in [EMEA,APAC]" (repeatable, ANDed)',
    )
    search.add_argument("--clearance", default="public", help="the asker's clearance level")
    search.add_argument("--json", action="store_true", help="print one JSON object")
    search.set_defaults(func=_search)
