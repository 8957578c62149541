"""Benchmark the graph domain: roll-ups over a large entity tree and a 20-node derivation.

Builds a workspace whose glossary holds a 5-level entity tree (default 10,000 entities: 1 root,
10, 100, 1,000, and the rest as leaves) and whose fact store holds N facts (default 1,000,000:
every entity x 5 metrics x periods x 2 channels, integer values, fixed seed, about 1% of them
confidential), written through the fact store in batches. Then, alternating in one run:

* ``Workspace.graph.roll_up`` at the root and at a level-3 node (p50, as a public asker), against
  a plain recursive SQL CTE over the same SQLite file that sums the same leaves' facts at the same
  level (``SUM(CAST(value AS INTEGER))``): both sums must agree exactly;
* ``Workspace.graph.derive`` over a 20-node derivation tree, against 5 primary-key SELECTs and
  the same arithmetic written by hand with fractions.

    python bench/bench_graph.py [--facts 1000000] [--entities 10000] [--queries 30]
"""

from __future__ import annotations

import argparse
import itertools
import random
import sqlite3
import statistics
import tempfile
import time
from collections.abc import Callable, Iterator
from decimal import Decimal
from fractions import Fraction
from pathlib import Path

from ragspine import Principal, Workspace
from ragspine.graph.derive import DeriveNode, DeriveStatus
from ragspine.graph.rollup import RollUpStatus
from ragspine.security import Sensitivity, max_visible_level
from ragspine.structured.facts import Fact, Scale

METRICS = [f"m{i}" for i in range(5)]
CHANNELS = ["total", "online"]
DERIVATIONS = {  # 1 + 7 + 7 + 5 = 20 nodes in the tree of `top`
    "top": "(d1 + d2) / m0 * 100",
    "d1": "m0 + m1 - m2 * 2",
    "d2": "m3 - m4 + 1",
}
PUBLIC = Principal.of("public")
BATCH = 50_000

CTE = """
WITH RECURSIVE below(code) AS (
    SELECT ? UNION ALL
    SELECT p.code FROM bench_entity_parent p JOIN below ON p.parent = below.code
)
SELECT SUM(CAST(f.value AS INTEGER)) FROM below
JOIN facts f ON f.metric = ? AND f.entity = below.code AND f.period = ? AND f.channel = ?
WHERE f.sensitivity <= ?
  AND NOT EXISTS (SELECT 1 FROM bench_entity_parent c WHERE c.parent = below.code)
"""


def build_tree(entities: int) -> dict[str, str | None]:
    """code -> parent: levels of 1, b, b**2, b**3 nodes (b = entities ** 0.25), then leaves."""
    branching = max(2, round(entities**0.25))
    parents: dict[str, str | None] = {"e0_0": None}
    level = ["e0_0"]
    for depth in range(1, 4):
        level_nodes = [f"e{depth}_{i}" for i in range(len(level) * branching)]
        for index, code in enumerate(level_nodes):
            parents[code] = level[index // branching]
        level = level_nodes
    leaves = max(entities - len(parents), len(level))
    for index in range(leaves):
        parents[f"e4_{index}"] = level[index % len(level)]
    return parents


def glossary_text(parents: dict[str, str | None]) -> str:
    lines = []
    for metric in METRICS:
        lines += [f"[metrics.{metric}]", f'label = "Metric {metric}"', 'unit = "USD"', ""]
    for metric, derivation in DERIVATIONS.items():
        lines += [
            f"[metrics.{metric}]",
            f'label = "Derived {metric}"',
            f'derivation = "{derivation}"',
            "",
        ]
    lines += ["[channels.online]", 'label = "Online"', ""]
    for code, parent in parents.items():
        lines += [f"[entities.{code}]", f'label = "Entity {code}"']
        if parent is not None:
            lines.append(f'parent = "{parent}"')
        lines.append("")
    return "\n".join(lines)


def periods_for(per_entity: int) -> list[str]:
    count = max(1, -(-per_entity // (len(METRICS) * len(CHANNELS))))
    return [f"FY{2000 + i}" for i in range(count)]


def generate(parents: dict[str, str | None], facts: int, seed: int) -> Iterator[Fact]:
    rng = random.Random(seed)
    per_entity = max(1, facts // len(parents))
    combos = list(itertools.product(METRICS, periods_for(per_entity), CHANNELS))[:per_entity]
    for code in parents:
        for metric, period, channel in combos:
            secret = rng.random() < 0.01
            yield Fact(
                metric,
                code,
                period,
                channel,
                Decimal(rng.randrange(1, 1_000_000)),
                "USD",
                "USD",
                Scale.ONE,
                "bench",
                f"bench row {code} {metric} {period} {channel}",
                Sensitivity.CONFIDENTIAL if secret else Sensitivity.PUBLIC,
            )


def batches(facts: Iterator[Fact]) -> Iterator[list[Fact]]:
    while batch := list(itertools.islice(facts, BATCH)):
        yield batch


def p50_ms(samples: list[float]) -> float:
    return statistics.median(samples) * 1000


def timed(fn: Callable[[], object]) -> float:
    start = time.perf_counter()
    fn()
    return time.perf_counter() - start


def count_nodes(node: DeriveNode) -> int:
    return 1 + sum(count_nodes(child) for child in node.children)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--facts", type=int, default=1_000_000)
    parser.add_argument("--entities", type=int, default=10_000)
    parser.add_argument("--queries", type=int, default=30, help="timed calls per measurement")
    parser.add_argument("--seed", type=int, default=13)
    parser.add_argument("--workdir", type=Path, help="keep the workspace here (default: temp)")
    args = parser.parse_args()

    with tempfile.TemporaryDirectory() as scratch:
        folder = args.workdir or Path(scratch) / "ws"
        ws = Workspace.open(folder)
        parents = build_tree(args.entities)
        ws.glossary_path.write_text(glossary_text(parents), encoding="utf-8")
        start = time.perf_counter()
        written = 0
        for batch in batches(generate(parents, args.facts, args.seed)):
            written += ws.facts.write(batch).added
        elapsed = time.perf_counter() - start
        print(
            f"generated {len(parents):,} entities (5 levels), {written:,} facts "
            f"({ws.facts.count():,} stored) in {elapsed:.1f} s "
            f"({written / max(elapsed, 1e-9):,.0f} facts/s through FactStore.write)"
        )
        db = sqlite3.connect(ws.db_path)
        db.execute("DROP TABLE IF EXISTS bench_entity_parent")
        db.execute("CREATE TABLE bench_entity_parent (code TEXT PRIMARY KEY, parent TEXT)")
        db.execute("CREATE INDEX bench_entity_parent_parent ON bench_entity_parent (parent)")
        db.executemany("INSERT INTO bench_entity_parent VALUES (?, ?)", parents.items())
        db.commit()

        level = max_visible_level(PUBLIC)
        period = periods_for(max(1, args.facts // len(parents)))[-1]
        mid = "e2_0"
        glossary_start = time.perf_counter()
        ws.graph.roll_up("m0", "e0_0", period, principal=PUBLIC)  # loads glossary and trees
        print(
            f"first roll-up (glossary of {len(parents):,} entities loaded): "
            f"{time.perf_counter() - glossary_start:.2f} s"
        )

        for node, name in (("e0_0", "root"), (mid, "level-3 node")):
            ours_samples: list[float] = []
            cte_samples: list[float] = []
            result = ws.graph.roll_up("m0", node, period, principal=PUBLIC)
            cte_sum = None
            for _ in range(args.queries):  # alternate: a loaded machine slows both alike
                ours_samples.append(
                    timed(lambda node=node: ws.graph.roll_up("m0", node, period, principal=PUBLIC))
                )
                cte_samples.append(
                    timed(
                        lambda node=node: db.execute(
                            CTE, (node, "m0", period, "total", level)
                        ).fetchone()
                    )
                )
            cte_sum = db.execute(CTE, (node, "m0", period, "total", level)).fetchone()[0]
            leaves = len(result.lineage) + len(result.missing)
            assert result.value == Decimal(cte_sum), (result.value, cte_sum)
            ours, cte = p50_ms(ours_samples), p50_ms(cte_samples)
            status = "partial" if result.status is RollUpStatus.PARTIAL else result.status.value
            print(
                f"roll_up at the {name} ({leaves:,} leaves, {len(result.missing):,} not visible, "
                f"{status}): ragspine p50 {ours:.2f} ms | recursive SQL CTE (baseline) p50 "
                f"{cte:.2f} ms | ratio {ours / cte:.2f}x | sums agree exactly: {result.value}"
            )

        # The first leaf whose five inputs are all visible (about 5% of leaves have a hidden one).
        for index in range(len(parents)):
            entity = f"e4_{index}"
            derived = ws.graph.derive("top", entity, period, principal=PUBLIC)
            if derived.status is DeriveStatus.FOUND or f"e4_{index + 1}" not in parents:
                break
        nodes = count_nodes(derived.tree)
        keys = [(m, entity, period, "total", level) for m in METRICS]

        def by_hand() -> Fraction | None:
            rows = [
                db.execute(
                    "SELECT value FROM facts WHERE metric=? AND entity=? AND period=? AND "
                    "channel=? AND sensitivity<=?",
                    key,
                ).fetchone()
                for key in keys
            ]
            if any(row is None for row in rows):
                return None
            m0, m1, m2, m3, m4 = (Fraction(Decimal(row[0])) for row in rows)
            return ((m0 + m1 - m2 * 2) + (m3 - m4 + 1)) / m0 * 100

        ours_samples, hand_samples = [], []
        for _ in range(args.queries):
            ours_samples.append(
                timed(lambda: ws.graph.derive("top", entity, period, principal=PUBLIC))
            )
            hand_samples.append(timed(by_hand))
        expected = by_hand()
        if derived.status is DeriveStatus.FOUND:
            assert derived.value is not None and derived.value.value == expected
        else:
            assert expected is None
        ours, hand = p50_ms(ours_samples), p50_ms(hand_samples)
        print(
            f"derive over a {nodes}-node derivation tree ({derived.status.value}): ragspine p50 "
            f"{ours:.3f} ms | 5 PK SELECTs + hand-written fractions (baseline) p50 {hand:.3f} ms "
            f"| ratio {ours / hand:.2f}x | values agree exactly"
        )
        db.close()
        ws.close()


if __name__ == "__main__":
    main()
