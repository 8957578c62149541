"""CLI commands of the HTTP service: ``ragspine serve`` and ``ragspine keys create|list|revoke``."""

from __future__ import annotations

import argparse
import json
import math
import os
import socket
import sys
from collections.abc import Iterator
from contextlib import contextmanager

from ragspine.cli.common import open_workspace
from ragspine.errors import ConfigError, MissingExtraError
from ragspine.service.keys import Keys, keys_of


def _serve(args: argparse.Namespace) -> int:
    try:
        import uvicorn
    except ImportError:
        raise MissingExtraError("ragspine serve", "server") from None
    if args.workers < 1:
        raise ConfigError(f"--workers must be 1 or more, got {args.workers}")
    if not 0 <= args.port <= 65535:
        raise ConfigError(f"--port must be 0-65535, got {args.port}")
    if not (args.rate_limit >= 0 and math.isfinite(args.rate_limit)):
        raise ConfigError(f"--rate-limit must be 0 (no limit) or more, got {args.rate_limit}")
    if args.max_upload_mb < 1:
        raise ConfigError(f"--max-upload-mb must be 1 or more, got {args.max_upload_mb}")
    with open_workspace(args) as workspace:  # an existing workspace: said before it starts
        where = workspace.location  # a database URL without its password
    _check_address(args.host, args.port)
    os.environ["RAGSPINE_WORKSPACE"] = str(args.workspace)
    os.environ["RAGSPINE_SERVE_RATE"] = str(args.rate_limit)
    os.environ["RAGSPINE_SERVE_UPLOAD_BYTES"] = str(args.max_upload_mb * 1024 * 1024)
    print(f"serving {where} on http://{args.host}:{args.port}/", file=sys.stderr)
    uvicorn.run(
        "ragspine.service.app:app_from_environment",
        factory=True,
        host=args.host,
        port=args.port,
        workers=args.workers,
        log_level="warning",
    )
    return 0


def _check_address(host: str, port: int) -> None:
    """A :class:`ConfigError` when the server could not listen at ``host:port`` (taken, not an
    address of this machine), said before it starts rather than after in uvicorn's log."""
    try:
        found = socket.getaddrinfo(host, port, type=socket.SOCK_STREAM, flags=socket.AI_PASSIVE)
    except (socket.gaierror, UnicodeError) as exc:
        raise ConfigError(f"--host {host!r} is not an address to listen on ({exc})") from None
    family, kind, proto, _, address = found[0]
    with socket.socket(family, kind, proto) as probe:
        probe.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)  # as uvicorn binds
        try:
            probe.bind(address)
        except OSError as exc:
            raise ConfigError(
                f"cannot listen on {host}:{port} ({exc.strerror or exc}): pick another --port, "
                "or stop what uses it"
            ) from None


@contextmanager
def _keys_store(args: argparse.Namespace) -> Iterator[Keys]:
    """The API keys of the workspace named by ``--workspace`` (which must exist)."""
    with open_workspace(args) as workspace:
        yield keys_of(workspace)


def _keys_create(args: argparse.Namespace) -> int:
    with _keys_store(args) as store:
        key, secret = store.create(
            args.name, clearance=args.clearance, groups=args.group, admin=args.admin
        )
    print(secret)
    print(
        f"key {key.key_id} ({key.name}): clearance {key.clearance}, groups "
        f"{', '.join(key.groups) or 'none'}{', admin' if key.admin else ''}. "
        "Store it now: it is shown only once.",
        file=sys.stderr,
    )
    return 0


def _keys_list(args: argparse.Namespace) -> int:
    with _keys_store(args) as store:
        keys = store.all()
    if args.json:
        print(json.dumps([k.public_dict() for k in keys], indent=2))
        return 0
    for key in keys:
        state = f"revoked {key.revoked_at}" if key.revoked_at else "live"
        print(
            f"{key.key_id}  {key.name}  {key.clearance}  groups={','.join(key.groups) or '-'}  "
            f"{'admin' if key.admin else 'read'}  {state}"
        )
    if not keys:
        print("no API keys: make one with ragspine keys create --name NAME", file=sys.stderr)
    return 0


def _keys_revoke(args: argparse.Namespace) -> int:
    with _keys_store(args) as store:
        key = store.revoke(args.name)
    print(f"revoked key {key.key_id} ({key.name})")
    return 0


def register(subparsers: argparse._SubParsersAction) -> None:
    """Add ``serve`` and ``keys``."""
    serve = subparsers.add_parser(
        "serve", help="serve the HTTP API and the web page (needs ragspine[server])"
    )
    serve.add_argument("--host", default="127.0.0.1", help="address (default 127.0.0.1)")
    serve.add_argument("--port", type=int, default=8000, help="port (default 8000)")
    serve.add_argument("--workers", type=int, default=1, help="processes (default 1)")
    serve.add_argument(
        "--rate-limit",
        type=float,
        default=50.0,
        help="requests a second per API key (0: no limit; default 50)",
    )
    serve.add_argument(
        "--max-upload-mb", type=int, default=50, help="largest upload body (default 50 MiB)"
    )
    serve.set_defaults(func=_serve)

    keys = subparsers.add_parser("keys", help="API keys of the HTTP service")
    actions = keys.add_subparsers(dest="keys_command", metavar="ACTION")
    actions.required = True
    create = actions.add_parser("create", help="make a key and print it once")
    create.add_argument("--name", required=True)
    create.add_argument(
        "--clearance", default="public", help="public, internal or confidential (default public)"
    )
    create.add_argument("--group", action="append", default=[], help="a group (repeatable)")
    create.add_argument("--admin", action="store_true", help="may change the workspace")
    create.set_defaults(func=_keys_create)
    listing = actions.add_parser("list", help="list keys (never their text)")
    listing.add_argument("--json", action="store_true")
    listing.set_defaults(func=_keys_list)
    revoke = actions.add_parser("revoke", help="revoke a key by name or id")
    revoke.add_argument("name")
    revoke.set_defaults(func=_keys_revoke)
