"""Benchmark ``Workspace.ask`` on the structured route against a bare ``query_metric``.

Builds the workspace of ``bench_graph.py`` (its generator: a 5-level tree of entities, N facts,
default 1,000,000, fixed seed, about 1% confidential) and then, alternating in one run, times:

* ``Workspace.ask("What was the Metric m0 of Entity e4_17 in FY2019?")`` as a public asker: the
  question read through the glossary (terms, period, cues), the route chosen, one lookup, the
  answer rebuilt from the stored fact with its citation;
* ``Workspace.query_metric("m0", "e4_17", "FY2019")``, the same lookup without the question
  (the baseline), on the same entities in the same order.

Both answer the same fact (checked). The goal is ask p50 <= 0.5 ms at 1M facts.

    python bench/bench_ask.py [--facts 1000000] [--entities 10000] [--queries 2000]
"""

from __future__ import annotations

import argparse
import random
import statistics
import tempfile
import time
from pathlib import Path

from bench_graph import PUBLIC, batches, build_tree, generate, glossary_text, periods_for
from ragspine import Workspace
from ragspine.answer.types import AnswerStatus


def percentile_ms(samples: list[float], q: float) -> float:
    ordered = sorted(samples)
    return ordered[min(len(ordered) - 1, int(q * len(ordered)))] * 1000


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--facts", type=int, default=1_000_000)
    parser.add_argument("--entities", type=int, default=10_000)
    parser.add_argument("--queries", type=int, default=2000, help="timed calls of each kind")
    parser.add_argument("--seed", type=int, default=13)
    args = parser.parse_args()

    with tempfile.TemporaryDirectory() as scratch:
        ws = Workspace.open(Path(scratch) / "ws")
        parents = build_tree(args.entities)
        ws.glossary_path.write_text(glossary_text(parents), encoding="utf-8")
        start = time.perf_counter()
        written = sum(
            ws.facts.write(batch).added
            for batch in batches(generate(parents, args.facts, args.seed))
        )
        print(
            f"generated {len(parents):,} entities, {written:,} facts "
            f"in {time.perf_counter() - start:.1f} s"
        )
        period = periods_for(max(1, args.facts // len(parents)))[0]
        leaves = [code for code in parents if code.startswith("e4_")]
        rng = random.Random(args.seed)
        picks = [rng.choice(leaves) for _ in range(args.queries)]
        questions = [f"What was the Metric m0 of Entity {code} in {period}?" for code in picks]

        warm = time.perf_counter()
        first = ws.ask(questions[0], principal=PUBLIC)
        print(
            f"first ask (glossary of {len(parents):,} entities loaded, term pattern built): "
            f"{time.perf_counter() - warm:.2f} s"
        )
        assert first.route == "structured", first.route_reason
        agree = 0
        for question, code in zip(questions[:50], picks[:50], strict=True):
            answer = ws.ask(question, principal=PUBLIC)
            bare = ws.query_metric("m0", code, period, principal=PUBLIC)
            figure = answer.figures[0].result if answer.figures else None
            assert (figure.value if figure else None) == bare.value, (question, answer.text)
            agree += answer.status is AnswerStatus.ANSWERED
        print(f"ask and query_metric agree on 50 of 50 questions ({agree} found, rest hidden)")

        ours: list[float] = []
        base: list[float] = []
        clock = time.perf_counter
        for question, code in zip(questions, picks, strict=True):  # alternate: shared machine
            t0 = clock()
            ws.ask(question, principal=PUBLIC)
            t1 = clock()
            ws.query_metric("m0", code, period, principal=PUBLIC)
            t2 = clock()
            ours.append(t1 - t0)
            base.append(t2 - t1)
        ask_p50, base_p50 = statistics.median(ours) * 1000, statistics.median(base) * 1000
        print(
            f"ask, structured route: p50 {ask_p50:.3f} ms, p99 {percentile_ms(ours, 0.99):.3f} ms "
            f"({args.queries:,} questions, {written:,} facts)"
        )
        print(
            f"query_metric (baseline, same run): p50 {base_p50:.3f} ms, "
            f"p99 {percentile_ms(base, 0.99):.3f} ms"
        )
        goal = "met" if ask_p50 <= 0.5 else "missed"
        print(f"ask / query_metric p50: {ask_p50 / base_p50:.1f}x; goal ask p50 <= 0.5 ms: {goal}")
        ws.close()


if __name__ == "__main__":
    main()
