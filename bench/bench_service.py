"""Benchmark the HTTP service under concurrent clients, beside a bare FastAPI "hello" route.

Builds one workspace (the fact tree of ``bench_graph.py``: N facts, fixed seed, and the first D
SciFact abstracts as the library ``scifact``), makes an API key without a rate limit, and starts
two uvicorn processes on loopback: ``ragspine.service`` over that workspace and a bare FastAPI app
with one ``GET /hello`` route (the baseline). Then, for each client count (default 16 and 64;
asyncio tasks, each on its own keep-alive connection, in this process), for ``--seconds`` each:

* ``GET /hello`` on the bare app (baseline, same run);
* ``POST /v1/ask`` with structured questions ("What was the Metric m0 of Entity e4_17 in
  FY2019?", entities drawn at random);
* ``POST /v1/search`` with SciFact queries (bm25, top 10); halfway through, an upload of fresh
  documents starts an ingest job in the same library, and the round waits for it to finish.

Prints requests/s, p50 and p99 latency and errors per route and client count. Goals of issue 17
(structured ask >= 1,000 requests/s, search >= 200 requests/s, p99 < 100 ms, zero errors) are
reported as met or missed.

    nice python bench/bench_service.py [--facts 100000] [--entities 2000] [--docs 0]
        [--seconds 30] [--clients 16,64] [--workers 1]
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import random
import socket
import subprocess
import sys
import tempfile
import time
from collections.abc import Awaitable, Callable
from dataclasses import dataclass
from pathlib import Path

import httpx
from fastapi import FastAPI

from _beir_subset import first_documents
from bench_graph import batches, build_tree, generate, glossary_text, periods_for
from ragspine import Principal, Workspace
from ragspine.service.keys import KeyStore

DATA = Path(__file__).resolve().parents[2] / "shared" / "data" / "scifact"
HERE = Path(__file__).resolve().parent

hello_app = FastAPI()


@hello_app.get("/hello")
def hello() -> dict[str, str]:
    return {"hello": "world"}


@dataclass(frozen=True, slots=True)
class Round:
    """One timed round: latencies of the successful requests and the errors."""

    latencies: list[float]
    errors: int
    seconds: float

    def line(self, label: str) -> str:
        ordered = sorted(self.latencies) or [0.0]
        p50 = ordered[len(ordered) // 2] * 1000
        p99 = self.p99
        rate = len(self.latencies) / self.seconds
        return (
            f"{label:<34} {rate:8.0f} req/s  p50 {p50:7.2f} ms  p99 {p99:7.2f} ms  "
            f"errors {self.errors}"
        )

    @property
    def rate(self) -> float:
        return len(self.latencies) / self.seconds

    @property
    def p99(self) -> float:
        """The 99th percentile latency in milliseconds."""
        ordered = sorted(self.latencies) or [0.0]
        return ordered[min(len(ordered) - 1, int(0.99 * len(ordered)))] * 1000


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        port: int = sock.getsockname()[1]
        return port


def start(target: str, env: dict[str, str], workers: int) -> tuple[subprocess.Popen[bytes], str]:
    """A uvicorn process serving ``target`` on a free loopback port, once it answers."""
    port = free_port()
    command = [
        sys.executable,
        "-m",
        "uvicorn",
        target,
        "--host",
        "127.0.0.1",
        "--port",
        str(port),
        "--log-level",
        "warning",
        "--workers",
        str(workers),
        "--app-dir",
        str(HERE),
    ]
    if target.endswith("app_from_environment"):
        command.append("--factory")
    process = subprocess.Popen(command, env=env)
    url = f"http://127.0.0.1:{port}"
    deadline = time.monotonic() + 60
    while time.monotonic() < deadline:
        try:
            httpx.get(f"{url}/healthz" if "--factory" in command else f"{url}/hello", timeout=1)
            return process, url
        except httpx.TransportError:
            time.sleep(0.1)
    process.kill()
    raise RuntimeError(f"{target} did not start")


class KeepAlive:
    """One keep-alive HTTP/1.1 connection with the least client work (so the load generator,
    not httpx, sets the pace): requests written by hand, responses read by Content-Length."""

    def __init__(
        self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter, head: bytes
    ) -> None:
        self.reader, self.writer, self.head = reader, writer, head

    @classmethod
    async def open(cls, url: str, headers: dict[str, str]) -> KeepAlive:
        host, port = url.removeprefix("http://").split(":")
        reader, writer = await asyncio.open_connection(host, int(port))
        head = "".join(f"{name}: {value}\r\n" for name, value in headers.items())
        return cls(reader, writer, f"Host: {host}\r\n{head}".encode())

    async def send(self, method: str, path: str, body: dict[str, object] | None) -> int:
        """Send one request; returns the response's status once its body is read."""
        payload = b"" if body is None else json.dumps(body).encode()
        kind = b"Content-Type: application/json\r\n" if body is not None else b""
        self.writer.write(
            f"{method} {path} HTTP/1.1\r\n".encode()
            + self.head
            + kind
            + f"Content-Length: {len(payload)}\r\n\r\n".encode()
            + payload
        )
        head = await self.reader.readuntil(b"\r\n\r\n")
        status = int(head[9:12])
        length = 0
        for line in head.split(b"\r\n"):
            if line[:15].lower() == b"content-length:":
                length = int(line[15:])
        await self.reader.readexactly(length)
        return status

    def close(self) -> None:
        self.writer.close()


Request = Callable[[random.Random], tuple[str, str, dict[str, object] | None]]
Midway = Callable[[httpx.AsyncClient], Awaitable[None]]


async def hammer(
    url: str,
    clients: int,
    seconds: float,
    request: Request,
    *,
    headers: dict[str, str] | None = None,
    midway: Midway | None = None,
) -> Round:
    """``clients`` tasks sending ``request`` back to back for ``seconds``; ``midway`` runs
    halfway through."""
    latencies: list[float] = []
    errors = 0
    async with httpx.AsyncClient(base_url=url, timeout=60, headers=headers) as client:
        stop = time.perf_counter() + seconds

        async def one(index: int) -> None:
            nonlocal errors
            rng = random.Random(index)
            connection = await KeepAlive.open(url, headers or {})
            try:
                while time.perf_counter() < stop:
                    method, path, body = request(rng)
                    t0 = time.perf_counter()
                    try:
                        ok = await connection.send(method, path, body) == 200
                    except (OSError, ValueError, asyncio.IncompleteReadError):
                        ok = False
                        connection.close()
                        connection = await KeepAlive.open(url, headers or {})
                    if ok:
                        latencies.append(time.perf_counter() - t0)
                    else:
                        errors += 1
            finally:
                connection.close()

        begin = time.perf_counter()
        tasks = [asyncio.create_task(one(i)) for i in range(clients)]
        if midway is not None:
            await asyncio.sleep(seconds / 2)
            await midway(client)
        await asyncio.gather(*tasks)
        return Round(latencies, errors, time.perf_counter() - begin)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--facts", type=int, default=100_000)
    parser.add_argument("--entities", type=int, default=2_000)
    parser.add_argument("--docs", type=int, default=0, help="SciFact abstracts (0: all)")
    parser.add_argument("--seconds", type=float, default=30.0)
    parser.add_argument("--clients", default="16,64")
    parser.add_argument("--workers", type=int, default=1, help="server processes")
    parser.add_argument("--upload", type=int, default=50, help="documents ingested midway")
    args = parser.parse_args()
    counts = [int(c) for c in args.clients.split(",")]

    with tempfile.TemporaryDirectory() as scratch:
        root = Path(scratch)
        ws = Workspace.open(root / "ws")
        parents = build_tree(args.entities)
        ws.glossary_path.write_text(glossary_text(parents), encoding="utf-8")
        for batch in batches(generate(parents, args.facts, 13)):
            ws.facts.write(batch)
        corpus = DATA / "corpus.jsonl"
        if args.docs:
            corpus, _ = first_documents(corpus, {}, args.docs, root / "scifact")
        ws.create_library("scifact", description="SciFact scientific abstracts")
        started = time.perf_counter()
        report = ws.ingest_beir(corpus.parent, library="scifact")
        print(
            f"workspace: {args.facts:,} facts, {len(report.outcomes):,} SciFact abstracts "
            f"(ingested in {time.perf_counter() - started:.1f} s)"
        )
        period = periods_for(max(1, args.facts // len(parents)))[0]
        leaves = [code for code in parents if code.startswith("e4_")]
        questions = [
            f"What was the Metric m0 of Entity {code} in {period}?"
            for code in random.Random(7).choices(leaves, k=200)
        ]
        ws.ask(questions[0], principal=Principal())
        timings = []
        for question in questions:
            t0 = time.perf_counter()
            ws.ask(question, principal=Principal())
            timings.append(time.perf_counter() - t0)
        in_process = sorted(timings)[len(timings) // 2] * 1000
        print(
            f"Workspace.ask in process, same kind of question: p50 {in_process:.2f} ms "
            f"(at most {1000 / in_process:,.0f} asks/s on one core)"
        )
        ws.close()
        _, key = KeyStore(root / "ws").create("bench", clearance="internal", admin=True)
        queries = [
            json.loads(line)["text"]
            for line in (DATA / "queries.jsonl").read_text("utf-8").splitlines()[:300]
        ]
        upload = [
            (f"fresh{i}.txt", f"Fresh abstract {i} on protein folding and cell growth.".encode())
            for i in range(args.upload)
        ]

        env = {**os.environ, "RAGSPINE_WORKSPACE": str(root / "ws"), "RAGSPINE_SERVE_RATE": "0"}
        env["PYTHONPATH"] = os.pathsep.join([str(HERE), env.get("PYTHONPATH", "")])
        service, service_url = start("ragspine.service.app:app_from_environment", env, args.workers)
        bare, bare_url = start("bench_service:hello_app", env, args.workers)
        headers = {"Authorization": f"Bearer {key}"}
        try:
            httpx.post(f"{service_url}/v1/ask", json={"question": "warm up"}, headers=headers)
            print(
                f"{args.seconds:g} s per round, server workers {args.workers}, "
                f"clients in one asyncio process"
            )
            summary: dict[tuple[str, int], Round] = {}
            for clients in counts:
                summary[("hello", clients)] = asyncio.run(
                    hammer(bare_url, clients, args.seconds, lambda rng: ("GET", "/hello", None))
                )
                print(
                    summary[("hello", clients)].line(f"hello, bare FastAPI (baseline) x{clients}")
                )

                def ask(rng: random.Random) -> tuple[str, str, dict[str, object] | None]:
                    code = rng.choice(leaves)
                    question = f"What was the Metric m0 of Entity {code} in {period}?"
                    return "POST", "/v1/ask", {"question": question}

                summary[("ask", clients)] = asyncio.run(
                    hammer(service_url, clients, args.seconds, ask, headers=headers)
                )
                print(summary[("ask", clients)].line(f"/v1/ask structured x{clients}"))

                def search(rng: random.Random) -> tuple[str, str, dict[str, object] | None]:
                    return "POST", "/v1/search", {"question": rng.choice(queries), "top_k": 10}

                job_state: list[str] = []

                async def ingest(client: httpx.AsyncClient, jobs: list[str] = job_state) -> None:
                    files = [("files", item) for item in upload]
                    made = await client.post(
                        "/v1/documents", files=files, data={"library": "scifact"}, headers=headers
                    )
                    jobs.append(made.json().get("job_id", f"refused {made.status_code}"))

                summary[("search", clients)] = asyncio.run(
                    hammer(
                        service_url, clients, args.seconds, search, headers=headers, midway=ingest
                    )
                )
                job = wait_job(service_url, headers, job_state[0]) if job_state else "none"
                print(
                    summary[("search", clients)].line(f"/v1/search scifact x{clients}")
                    + f"  (ingest job midway: {job})"
                )
            for clients in counts:
                hello_rate = summary[("hello", clients)].rate
                verdicts = []
                for route, floor in (("ask", 1000), ("search", 200)):
                    measured = summary[(route, clients)]
                    short = [
                        f"{measured.rate:,.0f} < {floor:,} req/s" if measured.rate < floor else "",
                        f"p99 {measured.p99:.0f} >= 100 ms" if measured.p99 >= 100 else "",
                        f"{measured.errors} errors" if measured.errors else "",
                    ]
                    missed = "; ".join(part for part in short if part)
                    verdicts.append(
                        f"{route} {measured.rate / hello_rate:.0%} of hello, goal (>= {floor:,} "
                        f"req/s, p99 < 100 ms, no errors) "
                        + (f"missed: {missed}" if missed else "met")
                    )
                print(f"x{clients}: " + "; ".join(verdicts))
        finally:
            for process in (service, bare):
                process.terminate()
                process.wait(timeout=30)


def wait_job(url: str, headers: dict[str, str], job_id: str) -> str:
    """Wait for an ingest job; returns its state and time."""
    start_time = time.perf_counter()
    while time.perf_counter() - start_time < 600:
        job = httpx.get(f"{url}/v1/jobs/{job_id}", headers=headers).json()
        if job.get("state") in ("done", "failed"):
            return f"{job['state']}, {job['done']} documents"
        time.sleep(0.2)
    return "still running after 600 s"


if __name__ == "__main__":
    main()
