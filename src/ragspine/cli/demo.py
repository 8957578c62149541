"""``ragspine demo``: both channels over the bundled ConvFinQA sample (real filings, MIT)."""

from __future__ import annotations

import argparse
from importlib import resources
from pathlib import Path

from ragspine.cli.structured import print_import, print_summary
from ragspine.security import Principal
from ragspine.stores.backend import SQLiteBackend
from ragspine.workspace import Workspace

DEMO_LIBRARY = "filings"
METRIC_QUESTIONS = (
    ("revenue", "IP", "FY2006", None),
    ("operating profit", "IP", "2005", None),
    ("revenue", "IP", "FY2010", None),
    ("revenue", "IP", "FY2006", "wholesale"),
)
NARRATIVE_QUESTION = "Why did consumer packaging operating profits decline?"
ASK_QUESTIONS = (
    "What was IP's revenue in 2006?",  # structured: a metric, an entity, a period
    NARRATIVE_QUESTION,  # narrative: a cue word, no metric ("operating profits" is no alias)
    "Why did IP's operating profit change from 2005 to 2006?",  # composite: both
    "What was IP's revenue in 2010?",  # structured, refused: no stored fact
)


def run_demo(workspace: str | Path) -> None:
    """Ingest the sample into ``workspace`` and print structured, narrative and composite
    answers and a refusal."""
    sample = resources.files("ragspine").joinpath("data/convfinqa_sample.json")
    with resources.as_file(sample) as path, Workspace.init(workspace) as ws:
        shown = ws.path.resolve() if isinstance(ws.backend, SQLiteBackend) else ws.location
        print(f"Workspace: {shown}")  # a database by its URL, without its password
        print("Bundled sample: 12 ConvFinQA filings (MIT, see ragspine/data/NOTICE.convfinqa)")
        print("\n== Structured channel: facts from the filings' tables")
        result, summary, report = ws.ingest_convfinqa(Path(path), library=DEMO_LIBRARY)
        print_import(result)
        print_summary(summary)
        principal = Principal.of("internal")
        for metric, entity, period, channel in METRIC_QUESTIONS:
            asked = f"metric={metric!r} entity={entity!r} period={period!r}"
            asked += f" channel={channel!r}" if channel else ""
            print(f"\n? {asked}")
            res = ws.query_metric(metric, entity, period, channel, principal=principal)
            print(f"[{res.status.value}] {res.text}")
            if res.source_doc_id:
                print(f"  source: {res.source_doc_id} | locator: {res.locator}")

        print("\n== Narrative channel: the filings' text as a document library")
        print(f"library {DEMO_LIBRARY!r}: each filing's text before and after its table")
        if report is not None:
            print(report.summary())

        print("\n== Asking in plain language: the route comes from the question")
        for question in ASK_QUESTIONS:
            answer = ws.ask(question, principal=principal)
            print(f"\n? {question}")
            print(f"[{answer.route}, {answer.status.value}] {answer.route_reason}")
            print(answer.render())


def _demo(args: argparse.Namespace) -> int:
    run_demo(args.workspace)
    return 0


def register(subparsers: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    """Add the ``demo`` command."""
    subparsers.add_parser(
        "demo", help="ingest the bundled ConvFinQA sample and answer questions on both channels"
    ).set_defaults(func=_demo)
