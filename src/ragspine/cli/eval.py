"""CLI commands of evaluation: ``ragspine eval retrieval``."""

from __future__ import annotations

import argparse
import json
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from pathlib import Path

from ragspine.cli.common import (
    add_principal_arguments,
    add_quiet_argument,
    open_workspace,
    principal_from,
)
from ragspine.eval.qa import DATASETS, run_qa_eval
from ragspine.eval.retrieval import load_qrels, load_queries, run_retrieval_eval
from ragspine.narrative.retrieve.options import SearchOptions
from ragspine.progress import progress_bar


@contextmanager
def _bar(desc: str, unit: str, quiet: bool) -> Iterator[Callable[[int, int], None]]:
    """A progress bar on a terminal, as ``progress(done, total)`` for an evaluation."""
    with progress_bar(None, desc=desc, unit=unit, quiet=quiet) as bar:

        def advance(done: int, total: int) -> None:
            bar.total = total
            bar.update(done - bar.n)

        yield advance


def _eval_retrieval(args: argparse.Namespace) -> int:
    with open_workspace(args) as workspace, _bar("searching", "query", args.quiet) as advance:
        report = run_retrieval_eval(
            workspace,
            library=args.library,
            queries=load_queries(args.queries),
            qrels=load_qrels(args.qrels),
            options=SearchOptions(
                mode=args.mode,
                lexical_weight=args.lexical_weight,
                vector_weight=args.vector_weight,
            ),
            principal=principal_from(args),
            progress=advance,
        )
    if args.json:
        payload = {
            "library": report.library,
            "mode": report.mode,
            "queries": report.queries,
            "metrics": {name: round(value, 4) for name, value in report.metrics.items()},
        }
        print(json.dumps(payload))
        return 0
    print(f"library {report.library}, mode {report.mode}, {report.queries} judged queries")
    for name, value in report.metrics.items():
        print(f"{name:>11}  {value:.4f}" if name != "qps" else f"{name:>11}  {value:.1f}")
    return 0


def _eval_qa(args: argparse.Namespace) -> int:
    with _bar("asking", "question", args.quiet) as advance:
        report = run_qa_eval(args.dataset, args.file, limit=args.limit, progress=advance)
    payload = report.to_dict()
    if args.json:
        print(json.dumps({"overall": payload["overall"], "by_type": payload["by_type"]}))
    else:
        print(f"{args.dataset}: {len(report.outcomes)} questions")
        header = "exact refused wrong fabricated answered questions"
        print(f"{'group':<24} {header}")
        for name, counts in [("overall", payload["overall"]), *payload["by_type"].items()]:
            print(
                f"{name:<24} {counts['exact']:5d} {counts['refused']:7d} {counts['wrong']:5d} "
                f"{counts['fabricated']:10d} {counts['answered']:8d} {counts['questions']:9d}"
            )
    if args.show == "wrong":
        for o in report.outcomes:
            if o.wrong:
                print(
                    f"WRONG {o.item.qid}: {o.item.question!r} gold={list(o.item.gold)} "
                    f"answer={list(o.predicted)} route={o.route} derivation={o.derivation!r}"
                )
    return 0


def register(subparsers: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    """Add the evaluation commands."""
    evaluate = subparsers.add_parser("eval", help="evaluate retrieval or answers")
    kinds = evaluate.add_subparsers(dest="kind", metavar="KIND")
    kinds.required = True
    retrieval = kinds.add_parser("retrieval", help="nDCG@10, Recall@100, MRR@10 and queries/s")
    retrieval.add_argument("--library", required=True)
    retrieval.add_argument("--queries", required=True, help="BEIR queries.jsonl")
    retrieval.add_argument(
        "--qrels", required=True, help="BEIR qrels TSV (query-id corpus-id score)"
    )
    retrieval.add_argument(
        "--mode",
        default="bm25",
        help="retrieval mode: economy, bm25, lexical, vector, hybrid or auto (default bm25)",
    )
    retrieval.add_argument("--lexical-weight", type=float, default=1.0, help="hybrid RRF weight")
    retrieval.add_argument("--vector-weight", type=float, default=1.0, help="hybrid RRF weight")
    retrieval.add_argument("--json", action="store_true", help="print one JSON object")
    add_principal_arguments(retrieval)
    add_quiet_argument(retrieval)
    retrieval.set_defaults(func=_eval_retrieval)

    qa = kinds.add_parser(
        "qa", help="answer TAT-QA or ConvFinQA questions in a scratch workspace and score them"
    )
    qa.add_argument("--dataset", required=True, choices=DATASETS)
    qa.add_argument("file", type=Path, help="the dataset's JSON file")
    qa.add_argument("--limit", type=int, help="only the first N questions")
    qa.add_argument("--json", action="store_true", help='print {"overall": ..., "by_type": ...}')
    qa.add_argument("--show", choices=("wrong",), help="list the wrong answers with gold")
    add_quiet_argument(qa)
    qa.set_defaults(func=_eval_qa)
