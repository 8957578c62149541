"""The options of one narrative search, validated once and passed whole down to the retriever.

:class:`SearchOptions` is built by whoever takes a request (the CLI, the Python API, an HTTP
route) and flows unchanged to :meth:`~ragspine.narrative.retrieve.retriever.Retriever.search`.
Adding an option means one field here and its use in the stage that reads it.
"""

from __future__ import annotations

import dataclasses
import math
from collections.abc import Mapping
from dataclasses import dataclass
from types import MappingProxyType
from typing import Any, Self, TypeVar

from ragspine.errors import ConfigError, QueryError, quote_input
from ragspine.narrative.filters.expr import Filter, parse_filter
from ragspine.narrative.retrieve.expansion import ExpansionMode, Postprocessor
from ragspine.narrative.retrieve.fusion import DEFAULT_RRF_K, check_rrf_k
from ragspine.narrative.retrieve.modes import RetrievalMode, parse_mode
from ragspine.narrative.retrieve.postprocess import check_postprocess_options, snippet_postprocessor

MAX_TOP_K = 10_000
MAX_POSTPROCESSED_TOP_K = 1_000
"""The largest ``top_k`` with ``near_duplicates`` or ``diversity``: both compare every pair
of snippets, so their cost grows with the square of ``top_k`` (about 0.5 s at 1,000 and a
minute at 10,000, measured over 12,000 documents)."""
T = TypeVar("T", bound="SearchOptions")


@dataclass(frozen=True, slots=True)
class SearchOptions:
    """What to search and how; every value is checked when the options are made.

    ``libraries``: the libraries to search (a single name is one library); ``None`` lets the
    router pick them by content and descriptions (``route=False``: search all of them).
    ``mode``: ``economy``, ``bm25``, ``lexical`` (no embedding code is loaded), ``vector``,
    ``hybrid`` (lexical + vector fused by RRF, weighted by ``lexical_weight`` /
    ``vector_weight``; both need ``ragspine[onnx]``) or ``auto``. ``top_k``: snippets returned.
    ``filters``: document metadata conditions, as a dict/JSON form, a text form
    (``"year>=2020"``) or a list of those (ANDed); kept parsed, as a
    :class:`~ragspine.narrative.filters.expr.Filter`. ``extract_filters`` also turns glossary
    entities named in the question into an ``entity`` filter (reported in the trace).
    ``near_duplicates`` (a Jaccard threshold in (0, 1]) drops snippets nearly identical to a
    better one and ``diversity`` (MMR weight, 0..1) reorders them; both are off by default.
    ``expansion``: what a snippet's ``prompt_text`` holds (``auto``, ``parent``, ``window``,
    ``none``; ``economy`` always uses ``none``). ``weights``: RRF weight per library id (missing
    ones weigh 1); ``rrf_k``: the RRF constant.
    """

    libraries: tuple[str, ...] | None = None
    mode: RetrievalMode = RetrievalMode.BM25
    top_k: int = 10
    filters: Filter | None = None
    route: bool = True
    extract_filters: bool = False
    lexical_weight: float = 1.0
    vector_weight: float = 1.0
    near_duplicates: float | None = None
    diversity: float | None = None
    expansion: ExpansionMode = ExpansionMode.AUTO
    weights: Mapping[str, float] | None = None
    rrf_k: float = DEFAULT_RRF_K

    def __post_init__(self) -> None:
        libraries: Any = self.libraries
        if libraries is not None:
            names = (libraries,) if isinstance(libraries, str) else libraries
            if (
                not isinstance(names, list | tuple)
                or not names
                or not all(isinstance(name, str) for name in names)
            ):
                raise QueryError(
                    f"libraries must be a library name or a non-empty list of names, got "
                    f"{libraries!r:.80}; leave it out to let the router pick"
                )
            object.__setattr__(self, "libraries", tuple(names))
        object.__setattr__(self, "mode", parse_mode(self.mode))
        top_k: Any = self.top_k
        if not isinstance(top_k, int) or isinstance(top_k, bool) or not 1 <= top_k <= MAX_TOP_K:
            raise QueryError(f"top_k must be between 1 and {MAX_TOP_K}, got {top_k!r}")
        for name in ("route", "extract_filters"):
            if not isinstance(getattr(self, name), bool):
                raise QueryError(f"{name} must be true or false, got {getattr(self, name)!r:.80}")
        filters: Any = self.filters
        if filters is not None and not isinstance(filters, Filter):
            object.__setattr__(self, "filters", parse_filter(filters))
        for name in ("lexical_weight", "vector_weight"):
            value = getattr(self, name)
            if (
                isinstance(value, bool)
                or not isinstance(value, int | float)
                or not 0 <= value < float("inf")
            ):
                raise QueryError(f"{name} must be a finite number >= 0, got {value!r}")
        check_postprocess_options(self.near_duplicates, self.diversity)
        postprocessed = self.near_duplicates is not None or self.diversity is not None
        if postprocessed and top_k > MAX_POSTPROCESSED_TOP_K:
            raise QueryError(
                f"top_k must be at most {MAX_POSTPROCESSED_TOP_K} with near_duplicates or "
                f"diversity (they compare every pair of snippets), got {top_k}"
            )
        object.__setattr__(self, "expansion", ExpansionMode.parse(self.expansion))
        if self.weights is not None:
            object.__setattr__(self, "weights", _checked_weights(self.weights))
        check_rrf_k(self.rrf_k)

    def postprocessor(self) -> Postprocessor | None:
        """The post-fusion stage these options ask for (``None``: the default, de-duplication
        only)."""
        if self.near_duplicates is None and self.diversity is None:
            return None
        return snippet_postprocessor(near_duplicates=self.near_duplicates, diversity=self.diversity)

    def with_changes(self, changes: Mapping[str, object]) -> Self:
        """A copy with the named options changed (each checked again); an unknown name is a
        :class:`QueryError` listing the valid ones."""
        if not changes:
            return self
        valid = option_names(type(self))
        unknown = [name for name in changes if name not in valid]
        if unknown:
            raise QueryError(
                f"unknown option {quote_input(unknown[0])}: use one of {', '.join(valid)}"
            )
        return dataclasses.replace(self, **changes)  # type: ignore[arg-type]


def option_names(cls: type[SearchOptions]) -> list[str]:
    """The option names of ``cls`` (its public fields), in declaration order."""
    return [f.name for f in dataclasses.fields(cls) if f.init]


def _checked_weights(weights: object) -> Mapping[str, float]:
    if not isinstance(weights, Mapping):
        raise ConfigError(f"weights must map library ids to numbers, got {type(weights).__name__}")
    for weight in weights.values():
        if (
            isinstance(weight, bool)
            or not isinstance(weight, int | float)
            or not math.isfinite(weight)
            or weight < 0
        ):
            raise QueryError(f"RRF weights must be finite and non-negative, got {dict(weights)!r}")
    return MappingProxyType({str(name): float(w) for name, w in weights.items()})


def resolve_options(options: T | None, default: T, changes: Mapping[str, object]) -> T:
    """``options`` (else ``default``) with ``changes`` applied; see
    :meth:`SearchOptions.with_changes`."""
    if options is not None and not isinstance(options, SearchOptions):
        raise QueryError(
            f"options must be SearchOptions, got {type(options).__name__}: pass option "
            f"values as keywords, e.g. top_k=5"
        )
    return (default if options is None else options).with_changes(changes)
