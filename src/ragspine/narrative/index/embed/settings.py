"""How chunks are embedded: texts per model call and inference threads.

The defaults were chosen by measurement on a 2-core machine (see the CHANGELOG): one text per
call beat length-sorted batches of 8 and 32 there, and it keeps onnxruntime's memory small and
flat, since each call's tensors are only as large as one text. Larger batches can pay off on
machines with more cores; measure before raising it.
"""

from __future__ import annotations

from dataclasses import dataclass

from ragspine.errors import ConfigError

DEFAULT_EMBED_BATCH = 1
MAX_EMBED_BATCH = 1024
MAX_THREADS = 256


@dataclass(frozen=True, slots=True)
class EmbedSettings:
    """Embedding knobs of a workspace (``--embed-batch`` and ``--threads`` on the CLI).

    ``batch_size``: texts per model call (1 to 1024). ``threads``: onnxruntime intra-op threads
    (``None``: one per core).
    """

    batch_size: int = DEFAULT_EMBED_BATCH
    threads: int | None = None

    def __post_init__(self) -> None:
        if isinstance(self.batch_size, bool) or not isinstance(self.batch_size, int):
            raise ConfigError(f"embed batch size must be an integer, got {self.batch_size!r}")
        if not 1 <= self.batch_size <= MAX_EMBED_BATCH:
            raise ConfigError(
                f"embed batch size {self.batch_size} is out of range: use 1 to {MAX_EMBED_BATCH}"
            )
        if self.threads is not None and (
            isinstance(self.threads, bool)
            or not isinstance(self.threads, int)
            or not 1 <= self.threads <= MAX_THREADS
        ):
            raise ConfigError(
                f"threads={self.threads!r} is out of range: use 1 to {MAX_THREADS} "
                "(or leave it unset for one per core)"
            )
