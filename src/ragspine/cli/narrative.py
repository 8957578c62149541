"""CLI commands of the narrative channel: ingest, libraries, library, search, reembed."""

from __future__ import annotations

import argparse
import json
import sys
from collections.abc import Sequence
from typing import Any, TypeVar

from ragspine.cli.common import (
    add_principal_arguments,
    add_quiet_argument,
    command_group,
    open_workspace,
    principal_from,
    question_of,
)
from ragspine.errors import ConfigError
from ragspine.narrative.index.embed.settings import DEFAULT_EMBED_BATCH, EmbedSettings
from ragspine.narrative.ingest.ingestor import DocumentOutcome, IngestReport, parse_meta_pairs
from ragspine.narrative.retrieve.modes import RetrievalMode
from ragspine.narrative.retrieve.options import SearchOptions
from ragspine.narrative.retrieve.snippets import format_locator
from ragspine.progress import progress_bar
from ragspine.workspace import Workspace

OptionsT = TypeVar("OptionsT", bound=SearchOptions)


class _Progress:
    """Progress bars on stderr for a document ingest and its embedding (off with ``--quiet``
    or when stderr is not a terminal); failures are listed in the summary on stdout."""

    def __init__(self, quiet: bool) -> None:
        self._quiet = quiet
        self._documents: Any = None
        self._embedding: Any = None

    def documents(self, done: int, total: int | None, outcome: DocumentOutcome) -> None:
        if self._documents is None:
            self._documents = progress_bar(total, desc="documents", unit="doc", quiet=self._quiet)
        self._documents.update(done - self._documents.n)

    def embedding(self, done: int, total: int) -> None:
        bar = self._embedding
        if bar is None or bar.total != total or done < bar.n:
            if bar is not None:
                bar.close()
            # Texts found in the embedding cache start the bar (``initial``), so chunks/s and
            # the ETA count only texts the model embeds.
            bar = self._embedding = progress_bar(
                total,
                desc="embedding",
                unit="chunk",
                quiet=self._quiet,
                leave=False,
                initial=done,
            )
        bar.update(done - bar.n)

    def __enter__(self) -> _Progress:
        return self

    def __exit__(self, *exc: object) -> None:
        for bar in (self._embedding, self._documents):
            if bar is not None:
                bar.close()


def _embed_settings(workspace: Workspace, args: argparse.Namespace) -> None:
    """Apply ``--embed-batch`` / ``--threads`` (see :func:`_embedding_options`)."""
    workspace.embed_settings = EmbedSettings(batch_size=args.embed_batch, threads=args.threads)


def _finish(report: IngestReport) -> int:
    if report.created_library:
        print(f"created library {report.library_id}", file=sys.stderr)
    print(report.summary())
    return 1 if report.failures else 0


def _ingest_docs(args: argparse.Namespace) -> int:
    with open_workspace(args, create=True) as workspace, _Progress(args.quiet) as progress:
        _embed_settings(workspace, args)
        report = workspace.ingest_documents(
            args.paths,
            library=args.library,
            metadata=parse_meta_pairs(args.meta),
            sensitivity=args.sensitivity,
            window=args.window,
            progress=progress.documents,
            vectors=args.vectors,
            embed_progress=progress.embedding,
        )
    return _finish(report)


def _ingest_beir(args: argparse.Namespace) -> int:
    with open_workspace(args, create=True) as workspace, _Progress(args.quiet) as progress:
        _embed_settings(workspace, args)
        report = workspace.ingest_beir(
            args.folder,
            library=args.library,
            progress=progress.documents,
            vectors=args.vectors,
            embed_progress=progress.embedding,
        )
    return _finish(report)


def _reembed(args: argparse.Namespace) -> int:
    with open_workspace(args) as workspace, _Progress(args.quiet) as bars:
        _embed_settings(workspace, args)
        count = workspace.reembed(args.library, progress=bars.embedding)
    print(f"library {args.library}: {count} vectors re-embedded")
    return 0


def _library_vectors(args: argparse.Namespace) -> int:
    with open_workspace(args) as workspace, _Progress(args.quiet) as bars:
        _embed_settings(workspace, args)
        library = workspace.set_library_vectors(
            args.name, args.state == "on", progress=bars.embedding
        )
    print(f"library {library.library_id}: vectors {'on' if library.vectors else 'off'}")
    return 0


def _library_delete(args: argparse.Namespace) -> int:
    if not args.yes:
        if not sys.stdin.isatty():
            raise ConfigError(
                f"deleting library {args.name!r} cannot be undone: pass --yes to confirm"
            )
        answer = input(f"delete library {args.name!r} and all its documents? [y/N] ")
        if answer.strip().lower() not in ("y", "yes"):
            print("nothing deleted", file=sys.stderr)
            return 1
    with open_workspace(args) as workspace:
        documents = workspace.delete_library(args.name)
    print(f"deleted library {args.name} ({documents} documents)")
    return 0


def _document_delete(args: argparse.Namespace) -> int:
    with open_workspace(args) as workspace:
        deleted = workspace.delete_documents(args.library, args.doc_ids)
    for doc_id in deleted:
        print(f"deleted {args.library}/{doc_id}")
    return 0


def _libraries(args: argparse.Namespace) -> int:
    with open_workspace(args) as workspace:
        libraries = workspace.libraries(principal=principal_from(args))
    for library in libraries:
        print(
            f"{library.library_id}\t{library.documents} documents\t{library.chunks} chunks\t"
            f"{library.default_sensitivity.label}\t{library.description}"
        )
    return 0


def _library_create(args: argparse.Namespace) -> int:
    with open_workspace(args) as workspace:
        library = workspace.create_library(
            args.name,
            description=args.description,
            default_sensitivity=args.sensitivity,
            vectors=args.vectors,
        )
    vectors = " with vectors" if library.vectors else ""
    print(f"created library {library.library_id}{vectors}")
    return 0


def _library_describe(args: argparse.Namespace) -> int:
    with open_workspace(args) as workspace:
        description = workspace.describe_library(args.name, principal=principal_from(args))
    print(json.dumps(description, indent=2, ensure_ascii=False))
    return 0


def add_search_arguments(parser: argparse.ArgumentParser, *, default_top_k: int) -> None:
    """Options shared by ``search`` and ``ask`` (see :func:`search_options`), with the shared
    ``--clearance`` / ``--group`` of every reading command."""
    parser.add_argument("--library", action="append", help="library to search (repeatable)")
    parser.add_argument(
        "--mode",
        default=RetrievalMode.BM25.value,
        help=f"retrieval mode: {', '.join(m.value for m in RetrievalMode)} (default bm25; "
        "hybrid and vector need ragspine[onnx] and a library with vectors)",
    )
    parser.add_argument(
        "--top-k", type=int, default=default_top_k, help=f"snippets (default {default_top_k})"
    )
    parser.add_argument(
        "--filter",
        action="append",
        metavar="EXPR",
        help='metadata filter, e.g. "year>=2020" or "region in [EMEA,APAC]" (repeatable, ANDed)',
    )
    parser.add_argument(
        "--extract-filters",
        action="store_true",
        help="also filter by glossary entities named in the question",
    )
    add_principal_arguments(parser)
    parser.add_argument("--lexical-weight", type=float, default=1.0, help="hybrid RRF weight")
    parser.add_argument("--vector-weight", type=float, default=1.0, help="hybrid RRF weight")
    parser.add_argument(
        "--near-duplicates",
        type=float,
        metavar="JACCARD",
        help="drop snippets at least this similar to a better one (e.g. 0.9)",
    )
    parser.add_argument(
        "--diversity", type=float, metavar="W", help="reorder by MMR with this weight (0..1)"
    )
    parser.add_argument("--json", action="store_true", help="print one JSON object")


def search_options(args: argparse.Namespace, kind: type[OptionsT]) -> OptionsT:
    """The options (:class:`SearchOptions` or :class:`AnswerOptions`) named by
    :func:`add_search_arguments`."""
    return kind(
        libraries=args.library or None,
        mode=args.mode,
        top_k=args.top_k,
        filters=args.filter or None,
        extract_filters=args.extract_filters,
        lexical_weight=args.lexical_weight,
        vector_weight=args.vector_weight,
        near_duplicates=args.near_duplicates,
        diversity=args.diversity,
    )


def print_notices(notices: Sequence[str]) -> None:
    """Each notice (e.g. ``auto`` searched a library lexically) as a ``note:`` line on stderr,
    before the results."""
    for notice in notices:
        print(f"note: {notice}", file=sys.stderr)


def _search(args: argparse.Namespace) -> int:
    with open_workspace(args) as workspace:
        result = workspace.search(
            question_of(args), search_options(args, SearchOptions), principal=principal_from(args)
        )
    print_notices(result.notices)
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
    _vectors_option(docs)
    _embedding_options(docs)
    add_quiet_argument(docs)
    docs.set_defaults(func=_ingest_docs)

    beir = kinds.add_parser("beir", help="ingest a BEIR corpus folder (corpus.jsonl)")
    beir.add_argument("folder", metavar="DIR")
    beir.add_argument("--library", required=True)
    _vectors_option(beir)
    _embedding_options(beir)
    add_quiet_argument(beir)
    beir.set_defaults(func=_ingest_beir)

    libraries = subparsers.add_parser(
        "libraries", help="list the document libraries the asker sees, with visible counts"
    )
    add_principal_arguments(libraries)
    libraries.set_defaults(func=_libraries)
    library = subparsers.add_parser("library", help="create or describe a library")
    actions = library.add_subparsers(dest="action", metavar="ACTION")
    actions.required = True
    create = actions.add_parser("create", help="create a library")
    create.add_argument("name")
    create.add_argument("--description", default="", help="what the library holds (for routing)")
    create.add_argument("--sensitivity", default="public", help="default document sensitivity")
    create.add_argument(
        "--vectors",
        action="store_true",
        help="embed chunks at ingest for hybrid/vector search (needs ragspine[onnx])",
    )
    create.set_defaults(func=_library_create)
    vectors = actions.add_parser("vectors", help="turn a library's vectors on or off")
    vectors.add_argument("name")
    vectors.add_argument("state", choices=["on", "off"])
    _embedding_options(vectors)
    add_quiet_argument(vectors)
    vectors.set_defaults(func=_library_vectors)
    delete = actions.add_parser(
        "delete", help="delete a library with all its documents, chunks and indexes"
    )
    delete.add_argument("name")
    delete.add_argument("--yes", action="store_true", help="do not ask for confirmation")
    delete.set_defaults(func=_library_delete)
    describe = actions.add_parser(
        "describe", help="show a library's settings and the counts of what the asker may see"
    )
    describe.add_argument("name")
    add_principal_arguments(describe)
    describe.set_defaults(func=_library_describe)

    search = subparsers.add_parser("search", help="search document libraries")
    search.add_argument("question")
    add_search_arguments(search, default_top_k=10)
    search.set_defaults(func=_search)

    reembed = subparsers.add_parser(
        "reembed", help="rebuild a library's vectors with the installed embedding model"
    )
    reembed.add_argument("--library", required=True)
    _embedding_options(reembed)
    add_quiet_argument(reembed)
    reembed.set_defaults(func=_reembed)

    document = subparsers.add_parser("document", help="manage single documents of a library")
    document_actions = document.add_subparsers(dest="action", metavar="ACTION")
    document_actions.required = True
    doc_delete = document_actions.add_parser(
        "delete", help="delete documents (with their chunks) from a library"
    )
    doc_delete.add_argument("doc_ids", nargs="+", metavar="DOC_ID")
    doc_delete.add_argument("--library", required=True)
    doc_delete.set_defaults(func=_document_delete)


def _vectors_option(parser: argparse.ArgumentParser) -> None:
    parser.add_argument(
        "--vectors",
        action=argparse.BooleanOptionalAction,
        default=None,
        help="turn the library's vectors on/off (default: keep its setting; new: off)",
    )


def _embedding_options(parser: argparse.ArgumentParser) -> None:
    parser.add_argument(
        "--embed-batch",
        type=int,
        default=DEFAULT_EMBED_BATCH,
        metavar="N",
        help=f"texts per embedding-model call (default {DEFAULT_EMBED_BATCH}, fastest and "
        "smallest in memory on 2 cores; larger batches use more memory)",
    )
    parser.add_argument(
        "--threads",
        type=int,
        default=None,
        metavar="N",
        help="embedding-model threads (default: one per core)",
    )
