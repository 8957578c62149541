"""CLI commands of the structured channel: init, ingest facts / convfinqa, metric, demo."""

from __future__ import annotations

import argparse
import json
from collections.abc import Iterable
from contextlib import ExitStack
from datetime import date
from pathlib import Path
from typing import Any

from ragspine.cli.common import (
    add_principal_arguments,
    add_quiet_argument,
    command_group,
    open_workspace,
    principal_from,
)
from ragspine.errors import ConfigError
from ragspine.glossary import read_glossary_file
from ragspine.progress import progress_bar
from ragspine.stores.backend import SQLiteBackend
from ragspine.stores.facts import WriteSummary
from ragspine.structured.convfinqa import DEFAULT_LIBRARY as CONVFINQA_LIBRARY
from ragspine.structured.convfinqa import ENTITY_MODES, ConvFinQAImport
from ragspine.structured.ingest import RowProgress
from ragspine.structured.numbers import shown
from ragspine.structured.query import MetricResult
from ragspine.structured.tatqa import DEFAULT_LIBRARY as TATQA_LIBRARY
from ragspine.structured.tatqa import TatQAImport
from ragspine.workspace import Workspace


def _reference_date(raw: str | None) -> date | None:
    if raw is None:
        return None
    try:
        return date.fromisoformat(raw)
    except ValueError:
        raise ConfigError(
            f"--reference-date {raw!r} is not an ISO date such as 2024-12-31"
        ) from None


def print_summary(summary: WriteSummary) -> None:
    print(
        f"facts: {summary.added} added, {summary.replaced} replaced, {summary.unchanged} unchanged"
    )


def print_import(result: ConvFinQAImport, *, each: bool = False) -> None:
    print(
        f"filings: {result.filings}, facts: {len(result.facts)}, "
        f"new glossary terms: {len(result.new_terms)}"
    )
    reasons = result.skip_reasons()
    if reasons:
        print("skipped:")
        for reason, count in sorted(reasons.items()):
            print(f"  {count:6d}  {reason}")
    if each:
        _print_each(((s.filing_id, s.column, s.row, s.reason) for s in result.skipped), "filing")


def _print_each(skipped: Iterable[tuple[str, str, str, str]], what: str) -> None:
    """Each thing an import left out, one per line, its names quoted (``--skipped``)."""
    for document, column, row, reason in skipped:
        where = [f"{what} {shown(document)}"]
        where += [f"column {shown(column)}"] if column else []
        where += [f"row {shown(row)}"] if row else []
        print(f"  {', '.join(where)}: {reason}")


def cmd_init(args: argparse.Namespace) -> int:
    with Workspace.init(args.workspace) as ws:
        if isinstance(ws.backend, SQLiteBackend):
            print(f"workspace ready at {ws.path} (glossary: {ws.glossary_path})")
        else:
            print(f"workspace ready in {ws.location} (glossary: ragspine glossary show / set)")
    return 0


def cmd_migrate(args: argparse.Namespace) -> int:
    before, after = Workspace.migrate(args.workspace)
    if before == after:
        print(f"schema is current (version {after})")
    else:
        print(f"schema migrated from version {before} to {after}")
    return 0


def cmd_glossary_show(args: argparse.Namespace) -> int:
    with open_workspace(args) as ws:
        text = ws.glossary_text()
    if not text:
        raise ConfigError(
            "this workspace has no hand-edited glossary: write one with "
            "'ragspine glossary set FILE'"
        )
    print(text, end="" if text.endswith("\n") else "\n")
    return 0


def cmd_glossary_set(args: argparse.Namespace) -> int:
    path: Path = args.file
    text = read_glossary_file(path)
    if text is None:
        raise ConfigError(f"glossary file {path} does not exist")
    with open_workspace(args) as ws:
        glossary = ws.set_glossary(text, name=str(path))
    print(f"glossary set from {path}: {len(glossary.terms())} terms (generated ones included)")
    return 0


class _Bars:
    """Progress bars on stderr fed by the library's ``progress(done, total)`` callbacks."""

    def __init__(self, quiet: bool) -> None:
        self._quiet = quiet
        self._stack = ExitStack()

    def __enter__(self) -> _Bars:
        return self

    def __exit__(self, *exc: object) -> None:
        self._stack.close()

    def callback(self, desc: str, unit: str) -> RowProgress:
        """A callback that shows a bar from its first call and closes it when done == total."""
        bar: Any = None

        def update(done: int, total: int | None) -> None:
            nonlocal bar
            if bar is None:
                bar = self._stack.enter_context(
                    progress_bar(total, desc=desc, unit=unit, quiet=self._quiet)
                )
            if total is not None and bar.total != total:
                bar.total = total
            bar.update(done - bar.n)
            if done == total:
                bar.close()

        return update


def cmd_ingest_facts(args: argparse.Namespace) -> int:
    with open_workspace(args, create=True) as ws, _Bars(args.quiet) as bars:
        summary = ws.ingest_facts(
            args.file,
            mapping=args.mapping,
            progress=bars.callback(f"checking {args.file.name}", "rows"),
            write_progress=bars.callback("writing facts", "facts"),
        )
    print_summary(summary)
    return 0


def cmd_ingest_convfinqa(args: argparse.Namespace) -> int:
    with open_workspace(args, create=True) as ws, _Bars(args.quiet) as bars:
        result, summary, report = ws.ingest_convfinqa(
            args.file,
            library=args.library,
            progress=bars.callback(f"reading {args.file.name}", "filings"),
            write_progress=bars.callback("writing facts", "facts"),
            entities=args.entities,
        )
    print_import(result, each=args.skipped)
    print_summary(summary)
    if report is not None:
        print(report.summary())
    return 0


def print_tatqa_import(result: TatQAImport, *, each: bool = False) -> None:
    print(
        f"documents: {result.documents}, facts: {len(result.facts)}, "
        f"new glossary terms: {len(result.new_terms)}"
    )
    print("table scales:")
    for scale, count in sorted(result.scales.items()):
        print(f"  {count:6d}  {scale}")
    reasons = result.skip_reasons()
    if reasons:
        print("skipped (reported, never guessed):")
        for reason, count in sorted(reasons.items()):
            print(f"  {count:6d}  {reason}")
    if each:
        _print_each(((s.document, s.column, s.row, s.reason) for s in result.skipped), "document")


def cmd_ingest_tatqa(args: argparse.Namespace) -> int:
    with open_workspace(args, create=True) as ws, _Bars(args.quiet) as bars:
        result, summary, report = ws.ingest_tatqa(
            args.file,
            library=args.library,
            progress=bars.callback(f"reading {args.file.name}", "documents"),
            write_progress=bars.callback("writing facts", "facts"),
        )
    print_tatqa_import(result, each=args.skipped)
    print_summary(summary)
    print(report.summary())
    return 0


def print_metric_result(result: MetricResult, as_json: bool) -> None:
    if as_json:
        print(json.dumps(result.to_dict(), indent=2, ensure_ascii=False))
        return
    print(f"[{result.status.value}] {result.text}")


def cmd_metric(args: argparse.Namespace) -> int:
    with open_workspace(args) as ws:
        result = ws.query_metric(
            args.metric,
            args.entity,
            args.period,
            args.channel,
            principal=principal_from(args),
            reference_date=_reference_date(args.reference_date),
        )
    print_metric_result(result, args.json)
    return 0


_SKIPPED_HELP = "also list each thing left out: its document, column, row and reason"


def register(subparsers: argparse._SubParsersAction) -> None:
    """Add the structured-channel commands."""
    p = subparsers.add_parser("init", help="create a workspace with an example glossary")
    p.set_defaults(func=cmd_init)
    p = subparsers.add_parser(
        "migrate", help="bring a PostgreSQL workspace's schema to this version"
    )
    p.set_defaults(func=cmd_migrate)

    glossary = command_group(subparsers, "glossary", "show or replace the workspace glossary")
    p = glossary.add_parser("show", help="print the hand-edited glossary (TOML)")
    p.set_defaults(func=cmd_glossary_show)
    p = glossary.add_parser("set", help="replace the hand-edited glossary with a TOML file")
    p.add_argument("file", type=Path)
    p.set_defaults(func=cmd_glossary_set)

    ingest = command_group(subparsers, "ingest", "ingest facts or documents into the workspace")
    p = ingest.add_parser("facts", help="ingest a CSV, XLSX, JSON or JSONL fact table")
    p.add_argument("file", type=Path)
    p.add_argument("--mapping", type=Path, help="TOML column mapping (see README)")
    add_quiet_argument(p)
    p.set_defaults(func=cmd_ingest_facts)

    p = ingest.add_parser(
        "convfinqa", help="import ConvFinQA tables as facts and their text as documents"
    )
    p.add_argument("file", type=Path)
    p.add_argument(
        "--library",
        default=CONVFINQA_LIBRARY,
        help=f"library for each filing's text (default {CONVFINQA_LIBRARY})",
    )
    p.add_argument(
        "--entities",
        choices=ENTITY_MODES,
        default="ticker",
        help="what the facts are about: the company (ticker, default) or each filing page "
        "(filing: tables of one company and year never collide)",
    )
    p.add_argument("--skipped", action="store_true", help=_SKIPPED_HELP)
    add_quiet_argument(p)
    p.set_defaults(func=cmd_ingest_convfinqa)

    p = ingest.add_parser(
        "tatqa", help="import TAT-QA tables as facts and their paragraphs as documents"
    )
    p.add_argument("file", type=Path)
    p.add_argument(
        "--library",
        default=TATQA_LIBRARY,
        help=f"library for the paragraphs (default {TATQA_LIBRARY})",
    )
    p.add_argument("--skipped", action="store_true", help=_SKIPPED_HELP)
    add_quiet_argument(p)
    p.set_defaults(func=cmd_ingest_tatqa)

    p = subparsers.add_parser(
        "metric", help="look up one fact (found / not_found / unrecognized_param)"
    )
    p.add_argument("--metric", required=True)
    p.add_argument("--entity", required=True)
    p.add_argument("--period", required=True)
    p.add_argument("--channel")
    p.add_argument("--reference-date", help="ISO date for relative periods (default today)")
    p.add_argument("--json", action="store_true", help="print one JSON object")
    add_principal_arguments(p)
    p.set_defaults(func=cmd_metric)
