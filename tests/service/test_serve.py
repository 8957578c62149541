"""``ragspine serve --workers 2``: two processes over one workspace answer on a real port."""

from __future__ import annotations

import os
import socket
import subprocess
import sys
import time
from pathlib import Path

import httpx

from ragspine import Workspace
from ragspine.service.keys import KeyStore


def _free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        port: int = sock.getsockname()[1]
        return port


def test_serve_runs_several_workers_on_one_workspace(tmp_path: Path) -> None:
    ws = Workspace.init(tmp_path / "ws")
    ws.create_library("reports", description="Quarterly reports")
    ws.close()
    _, key = KeyStore(tmp_path / "ws").create("reader")
    port = _free_port()
    server = subprocess.Popen(
        [
            sys.executable,
            "-m",
            "ragspine.cli",
            "--workspace",
            str(tmp_path / "ws"),
            "serve",
            "--port",
            str(port),
            "--workers",
            "2",
        ],
        env={**os.environ, "XDG_CACHE_HOME": str(tmp_path / "cache")},
        stderr=subprocess.PIPE,
    )
    try:
        url = f"http://127.0.0.1:{port}"
        deadline = time.monotonic() + 60
        while True:
            try:
                if httpx.get(f"{url}/readyz", timeout=2).status_code == 200:
                    break
            except httpx.TransportError:
                pass
            assert server.poll() is None and time.monotonic() < deadline, "serve did not start"
            time.sleep(0.1)
        with httpx.Client(base_url=url, headers={"X-API-Key": key}) as client:
            answers = {client.get("/v1/libraries").text for _ in range(20)}
        assert len(answers) == 1 and '"library_id": "reports"' in answers.pop()
    finally:
        server.terminate()
        _, err = server.communicate(timeout=30)
    assert b"Traceback" not in err
