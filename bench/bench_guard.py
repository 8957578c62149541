"""Benchmark the guard stage on a generated reply of about 1,000 words.

A synthetic reply (fixed seed) of sentences citing ``[1]``..``[5]`` of five passages, most of
its numbers in the cited passage and some not, goes through what ``ask --provider openai`` runs
after the model answers: :func:`ragspine.answer.generate.parse_reply` (sentences and markers)
and :func:`ragspine.answer.guard.guard_sentences` (the decisions), then the answer is built
(:func:`ragspine.answer.generate.answer_from_reply`). Alternating in one run, the baseline is one
pass of the number regex over the reply (:func:`ragspine.answer.guard.numbers_in`), the least any
numeric check must do. The goal is guard p50 < 2 ms for 1,000 words.

    python bench/bench_guard.py [--words 1000] [--rounds 2000]
"""

from __future__ import annotations

import argparse
import random
import statistics
import time

from ragspine.answer.generate import answer_from_reply, parse_reply
from ragspine.answer.guard import guard_sentences, numbers_in
from ragspine.llm.provider import Generation
from ragspine.narrative.retrieve.snippets import Snippet

WORDS = [
    "revenue",
    "margin",
    "demand",
    "region",
    "plant",
    "cost",
    "savings",
    "board",
    "growth",
    "quarter",
    "online",
]


def passages(rng: random.Random) -> list[str]:
    texts = []
    for _ in range(5):
        words = [rng.choice(WORDS) for _ in range(120)]
        for i in range(0, 120, 12):
            words[i] = f"{rng.randint(1, 99_999):,}.{rng.randint(0, 9)}"
        texts.append(" ".join(words) + ".")
    return texts


def reply_text(rng: random.Random, texts: list[str], words: int) -> str:
    sentences, count = [], 0
    while count < words:
        marker = rng.randint(1, 5)
        known = numbers_in(texts[marker - 1])
        body = [rng.choice(WORDS) for _ in range(16)]
        body[3] = known[rng.randrange(len(known))]
        body[9] = str(rng.randint(1, 500)) if rng.random() < 0.2 else rng.choice(WORDS)
        sentences.append(" ".join(body).capitalize() + f". [{marker}]")
        count += len(body) + 1
    return " ".join(sentences)


def percentile_ms(samples: list[float], q: float) -> float:
    ordered = sorted(samples)
    return ordered[min(len(ordered) - 1, int(q * len(ordered)))] * 1000


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--words", type=int, default=1000)
    parser.add_argument("--rounds", type=int, default=2000)
    args = parser.parse_args()
    rng = random.Random(16)
    texts = passages(rng)
    text = reply_text(rng, texts, args.words)
    evidence = dict(enumerate(texts, start=1))
    snippets = [
        Snippet(t, f"lib:doc#{i}", "doc", f"p{i}", "lib", 1.0, t) for i, t in enumerate(texts)
    ]
    reply = Generation(text)
    drafts = parse_reply(text)
    decisions = guard_sentences(drafts, evidence)
    kept = sum(d.kept for d in decisions)
    print(f"reply: {len(text.split())} words, {len(drafts)} sentences, {kept} kept by the guard")

    guard, whole, baseline = [], [], []
    for _ in range(args.rounds):
        start = time.perf_counter()
        guard_sentences(parse_reply(text), evidence)
        guard.append(time.perf_counter() - start)
        start = time.perf_counter()
        answer_from_reply(reply, snippets)
        whole.append(time.perf_counter() - start)
        start = time.perf_counter()
        numbers_in(text)
        baseline.append(time.perf_counter() - start)
    p50 = percentile_ms(guard, 0.5)
    print(f"parse + guard: p50 {p50:.3f} ms, p99 {percentile_ms(guard, 0.99):.3f} ms")
    print(
        f"answer_from_reply (parse, guard, sources): p50 {percentile_ms(whole, 0.5):.3f} ms, "
        f"p99 {percentile_ms(whole, 0.99):.3f} ms"
    )
    base = statistics.median(baseline) * 1000
    print(f"numbers_in over the reply (baseline, same run): p50 {base:.3f} ms")
    print(f"goal parse + guard p50 < 2 ms: {'met' if p50 < 2 else 'NOT met'} ({p50:.3f} ms)")


if __name__ == "__main__":
    main()
