"""Immutable index segments: per-term postings of a batch of documents, plus a live mask.

A segment holds documents (key, length, sensitivity level) and, for each of its terms, the rows
and term frequencies of the documents containing it (CSR layout). Every document of a segment
has the same sensitivity level (the segment's ``level``), so a search can leave whole segments
above the asker's level unread. Segments never change after they are built except for their
live mask (tombstones); merging rewrites live documents of one level into a new segment. Files
are numpy ``.npz`` / ``.npy`` read with ``allow_pickle=False``.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from itertools import chain
from pathlib import Path
from typing import Any, BinaryIO, Protocol, TypeVar

import numpy as np
import numpy.typing as npt

from ragspine.errors import StoreError

KEY_DTYPE = np.int64
MERGE_FACTOR = 4
"""Segments whose live sizes fall in the same power-of-4 tier are merged once there are 4."""
MAX_DEAD_FRACTION = 0.3
"""A segment with more tombstones than this fraction is rewritten without them at commit."""
_ARRAYS = ("keys", "lengths", "levels", "terms", "term_ptr", "post_docs", "post_tf")


class Segment:
    """One batch of documents with its postings; only ``live`` changes after construction."""

    __slots__ = (
        "deletions_dirty",
        "deletions_file",
        "keys",
        "lengths",
        "level",
        "levels",
        "live",
        "n_dead",
        "name",
        "post_docs",
        "post_tf",
        "term_ptr",
        "terms",
        "vocab",
    )

    def __init__(
        self,
        keys: npt.NDArray[np.int64],
        lengths: npt.NDArray[np.int32],
        levels: npt.NDArray[np.int8],
        terms: list[str],
        term_ptr: npt.NDArray[np.int64],
        post_docs: npt.NDArray[np.int32],
        post_tf: npt.NDArray[np.int32],
    ) -> None:
        if len(levels) and bool((levels != levels[0]).any()):
            raise StoreError("a lexical index segment mixes sensitivity levels")
        self.keys = keys
        self.lengths = lengths
        self.levels = levels
        self.level = int(levels[0]) if len(levels) else 0
        self.terms = terms
        self.vocab = {term: i for i, term in enumerate(terms)}
        self.term_ptr = term_ptr
        self.post_docs = post_docs
        self.post_tf = post_tf
        self.live = np.ones(len(keys), dtype=bool)
        self.n_dead = 0
        self.name: str | None = None
        self.deletions_file: str | None = None
        self.deletions_dirty = False

    @property
    def n_docs(self) -> int:
        return len(self.keys)

    @property
    def n_live(self) -> int:
        return len(self.keys) - self.n_dead

    def kill(self, row: int) -> None:
        """Mark the document at ``row`` deleted."""
        if self.live[row]:
            self.live[row] = False
            self.n_dead += 1
            self.deletions_dirty = True

    def postings(self, term: str) -> tuple[npt.NDArray[np.int32], npt.NDArray[np.int32]]:
        """Live rows containing ``term`` and their term frequencies."""
        i = self.vocab.get(term)
        if i is None:
            return _EMPTY_I32, _EMPTY_I32
        start, end = self.term_ptr[i], self.term_ptr[i + 1]
        docs, tf = self.post_docs[start:end], self.post_tf[start:end]
        if self.n_dead:
            keep = self.live[docs]
            return docs[keep], tf[keep]
        return docs, tf


_EMPTY_I32: npt.NDArray[np.int32] = np.empty(0, dtype=np.int32)


class TermBatch:
    """Analyzed documents as numbers: their terms in order of first use, every document's term
    ids one after another, and each document's length (its number of tokens)."""

    __slots__ = ("lengths", "term_ids", "terms")

    def __init__(
        self, terms: list[str], term_ids: npt.NDArray[np.int64], lengths: npt.NDArray[np.int32]
    ) -> None:
        self.terms = terms
        self.term_ids = term_ids
        self.lengths = lengths

    @classmethod
    def of(cls, token_lists: Sequence[Sequence[str]]) -> TermBatch:
        """The batch of documents given as token lists."""
        flat = list(chain.from_iterable(token_lists))
        vocab = {term: i for i, term in enumerate(dict.fromkeys(flat))}
        return cls(
            list(vocab),
            np.fromiter(map(vocab.__getitem__, flat), dtype=np.int64, count=len(flat)),
            np.fromiter(map(len, token_lists), dtype=np.int32, count=len(token_lists)),
        )

    def __len__(self) -> int:
        return len(self.lengths)

    def subset(self, rows: npt.NDArray[np.bool_]) -> TermBatch:
        """The documents where ``rows`` is true, in order (terms renumbered by first use)."""
        ids = self.term_ids[np.repeat(rows, self.lengths)]
        used, first = np.unique(ids, return_index=True)
        order = np.argsort(first, kind="stable")
        renumber = np.empty(len(self.terms), dtype=np.int64)
        renumber[used[order]] = np.arange(len(used))
        return TermBatch(
            [self.terms[i] for i in used[order].tolist()], renumber[ids], self.lengths[rows]
        )


class SegmentBuilder:
    """Collects analyzed documents compactly until they become a :class:`Segment`."""

    __slots__ = ("keys", "lengths", "levels", "rows", "term_ids", "tfs", "vocab")

    def __init__(self) -> None:
        self.keys: list[int] = []
        self.lengths: list[npt.NDArray[np.int32]] = []
        self.levels: list[int] = []
        self.vocab: dict[str, int] = {}
        self.term_ids: list[npt.NDArray[np.int64]] = []
        self.rows: list[npt.NDArray[np.int32]] = []
        self.tfs: list[npt.NDArray[np.int32]] = []

    def __len__(self) -> int:
        return len(self.keys)

    def add(self, key: int, tokens: Sequence[str], level: int) -> None:
        """Append one document given its tokens."""
        self.extend([key], [tokens], level)

    def extend(self, keys: Sequence[int], token_lists: Sequence[Sequence[str]], level: int) -> None:
        """Append documents given their tokens (one list per key), all at ``level``."""
        self.extend_batch(keys, TermBatch.of(token_lists), level)

    def extend_batch(self, keys: Sequence[int], batch: TermBatch, level: int) -> None:
        """Append the documents of ``batch`` (one per key), all at ``level``."""
        if not keys:
            return
        vocab = self.vocab
        for term in batch.terms:  # new terms numbered in order of first use
            if term not in vocab:
                vocab[term] = len(vocab)
        if len(batch.term_ids):
            to_vocab = np.fromiter(
                map(vocab.__getitem__, batch.terms), dtype=np.int64, count=len(batch.terms)
            )
            term_ids = to_vocab[batch.term_ids]
            doc_rows = np.repeat(np.arange(len(keys), dtype=np.int64), batch.lengths)
            # One posting per (document, term) with its count: np.unique of a combined key.
            width = len(vocab)
            pairs, tfs = np.unique(doc_rows * width + term_ids, return_counts=True)
            self.rows.append((pairs // width + len(self.keys)).astype(np.int32))
            self.term_ids.append(pairs % width)
            self.tfs.append(tfs.astype(np.int32))
        self.lengths.append(batch.lengths)
        self.keys.extend(keys)
        self.levels.extend([level] * len(keys))

    def build(self) -> Segment:
        """The segment holding every document added so far."""
        return _csr(
            np.asarray(self.keys, dtype=KEY_DTYPE),
            _joined(self.lengths, np.int32),
            np.asarray(self.levels, dtype=np.int8),
            list(self.vocab),
            _joined(self.term_ids, np.int64),
            _joined(self.rows, np.int32),
            _joined(self.tfs, np.int32),
        )


def extend_by_level(
    builders: dict[int, SegmentBuilder],
    keys: Sequence[int],
    batch: TermBatch,
    levels: Sequence[int],
) -> None:
    """Append the documents of ``batch`` (one per key) to the builder of each one's level (a
    segment holds one level), making builders as needed."""
    distinct = sorted(set(levels))
    level_of = np.asarray(levels, dtype=np.int8)
    for level in distinct:
        builder = builders.get(level)
        if builder is None:
            builder = builders[level] = SegmentBuilder()
        if len(distinct) == 1:
            builder.extend_batch(keys, batch, level)
            continue
        rows = level_of == level
        builder.extend_batch(
            [k for k, r in zip(keys, rows, strict=True) if r], batch.subset(rows), level
        )


def _joined(parts: list[npt.NDArray[Any]], dtype: type[np.generic]) -> npt.NDArray[Any]:
    return np.concatenate(parts).astype(dtype, copy=False) if parts else np.empty(0, dtype=dtype)


def merge_segments(segments: Sequence[Segment]) -> Segment:
    """One new segment with the live documents of ``segments`` (tombstoned ones dropped);
    they must share one level."""
    vocab: dict[str, int] = {}
    parts_terms, parts_rows, parts_tf = [], [], []
    keys, lengths, levels = [], [], []
    offset = 0
    for seg in segments:
        term_map = np.fromiter(
            (vocab.setdefault(t, len(vocab)) for t in seg.terms),
            dtype=np.int64,
            count=len(seg.terms),
        )
        new_row = np.cumsum(seg.live, dtype=np.int64) - 1 + offset
        posting_term = np.repeat(np.arange(len(seg.terms)), np.diff(seg.term_ptr))
        keep = seg.live[seg.post_docs]
        parts_terms.append(term_map[posting_term[keep]])
        parts_rows.append(new_row[seg.post_docs[keep]].astype(np.int32))
        parts_tf.append(seg.post_tf[keep])
        keys.append(seg.keys[seg.live])
        lengths.append(seg.lengths[seg.live])
        levels.append(seg.levels[seg.live])
        offset += seg.n_live
    return _csr(
        np.concatenate(keys) if keys else np.empty(0, dtype=KEY_DTYPE),
        np.concatenate(lengths) if lengths else np.empty(0, dtype=np.int32),
        np.concatenate(levels) if levels else np.empty(0, dtype=np.int8),
        list(vocab),
        np.concatenate(parts_terms) if parts_terms else np.empty(0, dtype=np.int64),
        np.concatenate(parts_rows) if parts_rows else _EMPTY_I32,
        np.concatenate(parts_tf) if parts_tf else _EMPTY_I32,
    )


def _csr(
    keys: npt.NDArray[np.int64],
    lengths: npt.NDArray[np.int32],
    levels: npt.NDArray[np.int8],
    terms: list[str],
    term_ids: npt.NDArray[np.int64],
    rows: npt.NDArray[np.int32],
    tfs: npt.NDArray[np.int32],
) -> Segment:
    """Group postings by term (rows ascending within a term), dropping terms with none."""
    counts = np.bincount(term_ids, minlength=len(terms))
    used = counts > 0
    if not used.all():
        remap = np.cumsum(used) - 1
        term_ids = remap[term_ids]
        terms = [t for t, u in zip(terms, used.tolist(), strict=True) if u]
        counts = counts[used]
    order = np.lexsort((rows, term_ids))
    term_ptr = np.zeros(len(terms) + 1, dtype=np.int64)
    np.cumsum(counts, out=term_ptr[1:])
    return Segment(keys, lengths, levels, terms, term_ptr, rows[order], tfs[order])


def write_segment(segment: Segment, out: BinaryIO) -> None:
    """Write the immutable part of ``segment`` as an uncompressed ``.npz``."""
    blob = "\n".join(segment.terms).encode("utf-8")
    np.savez(
        out,
        keys=segment.keys,
        lengths=segment.lengths,
        levels=segment.levels,
        terms=np.frombuffer(blob, dtype=np.uint8),
        term_ptr=segment.term_ptr,
        post_docs=segment.post_docs,
        post_tf=segment.post_tf,
    )


def read_segment(path: Path, deletions: Path | None) -> Segment:
    """Load a segment file and its tombstones; a damaged file raises :class:`StoreError`."""
    try:
        with np.load(path, allow_pickle=False) as data:
            arrays = {name: data[name] for name in _ARRAYS}
        dead = np.load(deletions, allow_pickle=False) if deletions is not None else None
    except (OSError, ValueError, KeyError) as exc:
        raise StoreError(
            f"lexical index file {path.name} in {path.parent} is missing or damaged ({exc}): "
            "delete that folder and rebuild the index from the chunk store"
        ) from exc
    blob = arrays["terms"].tobytes().decode("utf-8")
    terms = blob.split("\n") if len(arrays["term_ptr"]) > 1 else []
    try:
        segment = Segment(
            arrays["keys"].astype(KEY_DTYPE, copy=False),
            arrays["lengths"].astype(np.int32, copy=False),
            arrays["levels"].astype(np.int8, copy=False),
            terms,
            arrays["term_ptr"].astype(np.int64, copy=False),
            arrays["post_docs"].astype(np.int32, copy=False),
            arrays["post_tf"].astype(np.int32, copy=False),
        )
    except StoreError as exc:
        raise StoreError(
            f"lexical index file {path.name} in {path.parent} is inconsistent ({exc}): "
            "delete that folder and rebuild the index from the chunk store"
        ) from None
    n = segment.n_docs
    consistent = (
        len(segment.lengths) == n == len(segment.levels)
        and len(terms) == len(segment.term_ptr) - 1
        and int(segment.term_ptr[-1]) == len(segment.post_docs) == len(segment.post_tf)
        and (len(segment.post_docs) == 0 or int(segment.post_docs.max()) < n)
    )
    if dead is not None:
        consistent = consistent and (len(dead) == 0 or int(dead.max()) < n)
    if not consistent:
        raise StoreError(
            f"lexical index file {path.name} in {path.parent} is inconsistent: "
            "delete that folder and rebuild the index from the chunk store"
        )
    if dead is not None and len(dead):
        segment.live[dead] = False
        segment.n_dead = int(np.count_nonzero(~segment.live))
    segment.name = path.stem
    segment.deletions_file = deletions.name if deletions is not None else None
    return segment


def write_deletions(segment: Segment, out: BinaryIO) -> None:
    """Write the deleted rows of ``segment`` as an ``.npy`` of int32."""
    np.save(out, np.flatnonzero(~segment.live).astype(np.int32), allow_pickle=False)


def _tier(n: int) -> int:
    tier = 0
    while n >= MERGE_FACTOR:
        n //= MERGE_FACTOR
        tier += 1
    return tier


class Sized(Protocol):
    """What the merge policy reads of a segment (in memory or in a database)."""

    @property
    def level(self) -> int: ...

    @property
    def n_docs(self) -> int: ...

    @property
    def n_live(self) -> int: ...


S = TypeVar("S", bound=Sized)


def apply_merge_policy(
    segments: list[S],
    merge: Callable[[Sequence[S]], S] = merge_segments,  # type: ignore[assignment]
) -> list[S]:
    """Merge segments of one level and tier once MERGE_FACTOR accumulate; compact
    tombstone-heavy ones. ``merge`` makes one segment of the live documents of several."""
    segments = [
        merge([s]) if s.n_docs - s.n_live > MAX_DEAD_FRACTION * s.n_docs else s for s in segments
    ]
    while True:
        tiers: dict[tuple[int, int], list[S]] = {}
        for seg in segments:
            tiers.setdefault((seg.level, _tier(seg.n_live)), []).append(seg)
        group = next((g for _, g in sorted(tiers.items()) if len(g) >= MERGE_FACTOR), None)
        if group is None:
            return segments
        merged = merge(group)
        segments = [s for s in segments if all(s is not g for g in group)] + [merged]
