"""The service tests need the ``server`` extra (in the ``test`` extra); without it they are
not collected."""

from importlib.util import find_spec

collect_ignore_glob = [] if find_spec("fastapi") and find_spec("uvicorn") else ["test_*.py"]
