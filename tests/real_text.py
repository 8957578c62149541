"""Real text from ``../shared/data`` for equivalence tests, addressed by reference, never copied.

A reference is ``"<dataset>:<key>:<field>"``; :func:`real_strings` yields ``(reference, text)``
in a fixed order, so fixtures store references and outputs, not the data itself.
"""

from __future__ import annotations

import json
from collections.abc import Iterator

from conftest import shared_data

MAX_CHARS = 400
"""Long abstracts are cut here: enough for every token shape, small fixtures."""


def _scifact_docs(limit: int) -> Iterator[dict[str, str]]:
    with (shared_data("scifact") / "corpus.jsonl").open(encoding="utf-8") as lines:
        for count, line in enumerate(lines):
            if count >= limit:
                return
            yield json.loads(line)


def scifact_docs(limit: int) -> list[dict[str, str]]:
    """The first ``limit`` SciFact corpus records (``_id``, ``title``, ``text``)."""
    return list(_scifact_docs(limit))


def scifact_queries(limit: int) -> list[dict[str, str]]:
    """The first ``limit`` SciFact queries (``_id``, ``text``)."""
    with (shared_data("scifact") / "queries.jsonl").open(encoding="utf-8") as lines:
        return [json.loads(line) for _, line in zip(range(limit), lines, strict=False)]


def _cranfield(limit: int) -> Iterator[tuple[str, str, str]]:
    raw = (shared_data("cranfield") / "cran.all.1400").read_text(encoding="utf-8")
    for record in raw.split(".I ")[1 : limit + 1]:
        number, _, body = record.partition("\n")
        fields: dict[str, list[str]] = {}
        current = ""
        for line in body.splitlines():
            if line.startswith(".") and len(line) == 2:
                current = line[1]
                continue
            fields.setdefault(current, []).append(line)
        for name in ("T", "W"):
            yield number.strip(), name, "\n".join(fields.get(name, []))


def _tatqa(limit: int) -> Iterator[tuple[str, str]]:
    data = json.loads((shared_data("tatqa") / "tatqa_dataset_dev.json").read_text("utf-8"))
    for item in data[:limit]:
        for paragraph in item["paragraphs"]:
            yield f"{paragraph['uid']}/{paragraph['order']}", paragraph["text"]
        for r, row in enumerate(item["table"]["table"]):
            yield f"{item['table']['uid']}/row{r}", " ".join(row)


def real_strings() -> list[tuple[str, str]]:
    """About 600 real strings: SciFact titles, abstracts and claims, Cranfield titles and
    abstracts, TAT-QA paragraphs and table rows (numbers such as ``$ 1,452.4`` and ``(27.1)``)."""
    out: list[tuple[str, str]] = []
    for doc in scifact_docs(120):
        out.append((f"scifact:{doc['_id']}:title", doc["title"]))
        out.append((f"scifact:{doc['_id']}:text", doc["text"][:MAX_CHARS]))
    for query in scifact_queries(80):
        out.append((f"scifact-query:{query['_id']}:text", query["text"]))
    for number, name, text in _cranfield(80):
        out.append((f"cranfield:{number}:{name}", text[:MAX_CHARS]))
    for key, text in _tatqa(12):
        out.append((f"tatqa:{key}:text", text[:MAX_CHARS]))
    return out
