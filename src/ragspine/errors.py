"""The one exception tree of RAGSpine.

Every error a caller can see derives from :class:`RagSpineError`; third-party exceptions are
translated at the boundary where they occur. Messages say what was wrong and what to do next.

::

    RagSpineError
    ├── ConfigError              bad option, mode, file path or missing optional extra
    │   └── MissingExtraError    an optional dependency is not installed (names the extra)
    ├── GlossaryError            a glossary file is malformed or ambiguous (alias claimed twice)
    ├── PeriodError              a period string does not follow the period grammar
    ├── IngestError              a source file or row cannot be ingested (names file and row)
    ├── StoreError               the workspace storage failed or is from another version
    ├── QueryError               a query is malformed (bad filter, unknown library, ...)
    ├── ProviderError            a model endpoint failed, refused or timed out (never shows its key)
    └── WorkflowError            a workflow export is unsafe, unsupported or inconsistent

Messages that echo what a caller typed or a file held quote it with :func:`quote_input`, so a
huge or control-character-laden value never floods or corrupts a terminal or a log.
"""

from __future__ import annotations


class RagSpineError(Exception):
    """Base class of every error RAGSpine raises on purpose."""


class ConfigError(RagSpineError):
    """An option, mode or configuration file is invalid."""


class MissingExtraError(ConfigError):
    """An optional dependency is needed but not installed."""

    def __init__(self, feature: str, extra: str) -> None:
        super().__init__(
            f"{feature} needs the optional extra '{extra}': install it with "
            f"pip install 'ragspine[{extra}]'"
        )
        self.feature = feature
        self.extra = extra


class GlossaryError(RagSpineError):
    """A glossary file is malformed or ambiguous."""


class PeriodError(RagSpineError):
    """A period string does not follow the period grammar."""


class IngestError(RagSpineError):
    """A source cannot be ingested; nothing from it was written."""


class StoreError(RagSpineError):
    """The workspace storage failed or was written by an incompatible version."""


class QueryError(RagSpineError):
    """A query or its options are malformed."""


class ProviderError(RagSpineError):
    """A model endpoint could not be reached, refused the request or answered out of shape."""


class WorkflowError(RagSpineError):
    """A workflow export is unsafe, unsupported or inconsistent."""


QUOTE_LIMIT = 80
"""How many characters of an echoed input a message shows."""


def quote_input(text: object, limit: int = QUOTE_LIMIT) -> str:
    """``text`` quoted for a message: its ``repr``, cut to ``limit`` characters with ``…``.

    ``repr`` escapes control, bidirectional and other invisible characters. A cut value also
    says how long it was, e.g. ``'aaaa…' (120000 characters)``.
    """
    value = str(text)
    if len(value) <= limit:
        return repr(value)
    return f"{value[:limit] + '…'!r} ({len(value)} characters)"
