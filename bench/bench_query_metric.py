"""Benchmark the structured channel at scale.

Builds a workspace with N synthetic facts (default 1,000,000), then measures ingestion rows/s,
``query_metric`` p50/p99 latency and queries/s for found and not_found lookups (glossary and
period normalization included), and, in the same run, a bare SQLite primary-key SELECT on the same
table as the baseline, printing the ratio.

    python bench/bench_query_metric.py [--facts 1000000] [--queries 20000]
"""

from __future__ import annotations

import argparse
import random
import statistics
import tempfile
import time
from collections.abc import Callable
from datetime import date
from decimal import Decimal
from pathlib import Path

from ragspine import Principal, Workspace
from ragspine.glossary import Glossary, MetricKind, Term, TermType, render_glossary
from ragspine.security import Sensitivity
from ragspine.structured.facts import Fact, Scale

PERIODS = [f"FY{y}" for y in range(2015, 2025)] + [
    f"FY{y}-Q{q}" for y in range(2015, 2025) for q in range(1, 5)
]


def build_glossary(metrics: int, entities: int) -> Glossary:
    terms = [
        Term(TermType.METRIC, f"metric_{i}", f"Metric {i}", (f"m{i}",), "USD", MetricKind.CURRENCY)
        for i in range(metrics)
    ]
    terms += [
        Term(TermType.ENTITY, f"entity_{i}", f"Entity {i}", (f"E{i}",)) for i in range(entities)
    ]
    terms += [Term(TermType.CHANNEL, c, c.title()) for c in ("online", "retail")]
    return Glossary.from_terms(terms)


def percentile(values: list[float], q: float) -> float:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, int(q * len(ordered)))]


def timed(fn: Callable[[], object], count: int) -> list[float]:
    samples = []
    clock = time.perf_counter_ns
    for _ in range(count):
        start = clock()
        fn()
        samples.append((clock() - start) / 1000)
    return samples


def report(name: str, samples: list[float]) -> float:
    p50 = statistics.median(samples)
    print(
        f"{name:<34} p50 {p50:8.2f} us   p99 {percentile(samples, 0.99):8.2f} us   "
        f"{1e6 / statistics.fmean(samples):10,.0f} queries/s"
    )
    return p50


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--facts", type=int, default=1_000_000)
    parser.add_argument("--queries", type=int, default=20_000)
    args = parser.parse_args()

    channels = ["total", "online", "retail"]
    per_entity = len(PERIODS) * len(channels)
    metrics = 100
    entities = max(1, -(-args.facts // (metrics * per_entity)))
    glossary = build_glossary(metrics, entities)
    rng = random.Random(7)

    with tempfile.TemporaryDirectory() as tmp:
        ws = Workspace.open(Path(tmp) / "ws")
        ws.glossary_path.write_text(render_glossary(glossary), encoding="utf-8")

        def facts() -> list[Fact]:
            out = []
            for n in range(args.facts):
                m, rest = divmod(n, entities * per_entity)
                e, rest = divmod(rest, per_entity)
                p, c = divmod(rest, len(channels))
                out.append(
                    Fact(
                        f"metric_{m}",
                        f"entity_{e}",
                        PERIODS[p],
                        channels[c],
                        Decimal(rng.randrange(10**9)) / 100,
                        "USD",
                        "USD",
                        Scale.THOUSAND,
                        "synthetic",
                        f"row {n}",
                        Sensitivity.INTERNAL,
                        "2024-12-31",
                        "now",
                    )
                )
            return out

        rows = facts()
        start = time.perf_counter()
        ws.facts.write(rows)
        elapsed = time.perf_counter() - start
        print(
            f"facts: {ws.facts.count():,}  ingestion {len(rows) / elapsed:,.0f} rows/s "
            f"({elapsed:.1f} s)"
        )

        principal = Principal.of("internal")
        ref = date(2025, 1, 15)
        keys = [rows[rng.randrange(len(rows))] for _ in range(args.queries)]
        found_args = [
            (
                f"Metric {f.metric.split('_')[1]}",
                f"E{f.entity.split('_')[1]}",
                f.period.replace("-", " "),
                None if f.channel == "total" else f.channel.upper(),
            )
            for f in keys
        ]
        missing_args = [(a[0], a[1], "FY2031", a[3]) for a in found_args]
        del rows

        it = iter(found_args * 2)
        for a in found_args[:2000]:  # warm the period cache and page cache like a live service
            ws.query_metric(*a, principal=principal, reference_date=ref)
        it = iter(found_args)
        found = timed(
            lambda: ws.query_metric(*next(it), principal=principal, reference_date=ref),
            len(found_args),
        )
        it = iter(missing_args)
        missing = timed(
            lambda: ws.query_metric(*next(it), principal=principal, reference_date=ref),
            len(missing_args),
        )
        conn = ws.facts._conn
        sql = "SELECT value FROM facts WHERE metric=? AND entity=? AND period=? AND channel=?"
        raw_keys = iter([(f.metric, f.entity, f.period, f.channel) for f in keys])
        cur = conn.cursor()
        baseline = timed(lambda: cur.execute(sql, next(raw_keys)).fetchone(), len(keys))
        assert (
            ws.query_metric(*found_args[0], principal=principal, reference_date=ref).status
            == "found"
        )

        print()
        p50_found = report("query_metric found", found)
        p50_missing = report("query_metric not_found", missing)
        p50_base = report("baseline: bare SQLite PK SELECT", baseline)
        print(
            f"\nratio found/baseline {p50_found / p50_base:.1f}x, "
            f"not_found/baseline {p50_missing / p50_base:.1f}x"
        )
        ws.close()


if __name__ == "__main__":
    main()
