"""Resident memory of `toolhost serve` while it is sent endless chunked bodies.

Run: .venv/bin/python bench/body_rss.py [--megabytes 600]

Target: a 600 MB chunked POST to any route that takes a body moves the server's RSS by < 50 MB.

Starts `toolhost serve` (the console script beside this interpreter) on 127.0.0.1 with a fresh SQLite file in a
temporary directory and reads the key its first start prints. Then, one route at a time, it POSTs a chunked
body of `--megabytes` MB (64 KB chunks, no Content-Length) on a raw socket, looking for an answer before each
chunk and stopping at the answer or when the server closes the connection, while a thread samples the
server's VmRSS from /proc/<pid>/status every 20 ms. It prints, per route, the answer's status, how much of the
body had been sent by then, and the highest RSS seen during the request against the RSS just before it.
"""

from __future__ import annotations

import argparse
import os
import re
import select
import signal
import socket
import subprocess
import sys
import tempfile
import threading
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

import httpx
from idle_rss import wait_for_health
from tool_call import free_port

TARGET_MEGABYTES = 50.0
CHUNK = b"x" * 65536
FRAME = f"{len(CHUNK):x}\r\n".encode() + CHUNK + b"\r\n"


def rss_megabytes(pid: int) -> float:
    for line in Path(f"/proc/{pid}/status").read_text().splitlines():
        if line.startswith("VmRSS:"):
            return int(line.split()[1]) * 1024 / 1e6
    raise RuntimeError("no VmRSS")


@contextmanager
def peak_rss(pid: int) -> Iterator[list[float]]:
    """Samples the process's RSS until the block ends; the list ends up holding [the highest seen]."""
    peak = [rss_megabytes(pid)]
    stopping = threading.Event()

    def sample() -> None:
        while not stopping.wait(0.02):
            peak[0] = max(peak[0], rss_megabytes(pid))

    sampler = threading.Thread(target=sample, daemon=True)
    sampler.start()
    try:
        yield peak
    finally:
        stopping.set()
        sampler.join()
        peak[0] = max(peak[0], rss_megabytes(pid))


def post_chunked(port: int, path: str, headers: dict[str, str], megabytes: int) -> tuple[str, int]:
    """Sends the body until the server answers or hangs up; returns the status line and the bytes sent."""
    head = "".join(f"{name}: {value}\r\n" for name, value in {"Host": f"127.0.0.1:{port}", **headers}.items())
    sent = 0
    with socket.create_connection(("127.0.0.1", port), timeout=120) as connection:
        connection.sendall(f"POST {path} HTTP/1.1\r\n{head}Transfer-Encoding: chunked\r\n\r\n".encode())
        while sent < megabytes * 1_000_000:
            readable, writable, _ = select.select([connection], [connection], [], 120)
            if readable or not writable:
                break
            try:
                connection.sendall(FRAME)
            except (BrokenPipeError, ConnectionResetError):
                break
            sent += len(CHUNK)
        else:
            connection.sendall(b"0\r\n\r\n")
        try:
            answer = connection.recv(65536)
        except ConnectionResetError:
            answer = b""
    return (answer.split(b"\r\n", 1)[0].decode() or "(connection reset, no answer)"), sent


def main(arguments: argparse.Namespace) -> None:
    workdir = Path(tempfile.mkdtemp(prefix="toolhost-bench-body-"))
    environment = {
        **os.environ,
        "TOOLHOST_DATABASE_URL": f"sqlite+aiosqlite:///{workdir / 'bench.db'}",
        "TOOLHOST_MEDIA__ROOT": str(workdir / "media"),
        "TOOLHOST_LOG_LEVEL": "WARNING",
        "TOOLHOST_RATELIMIT__ENABLED": "false",
        "PYTHONPATH": os.pathsep.join(
            str(Path(entry).resolve()) for entry in os.environ.get("PYTHONPATH", "").split(os.pathsep) if entry
        ),
    }
    port = free_port()
    base = f"http://127.0.0.1:{port}"
    log = workdir / "serve.log"
    command = [str(Path(sys.executable).parent / "toolhost"), "serve", "--host", "127.0.0.1", "--port", str(port)]
    with log.open("wb") as output:
        process = subprocess.Popen(command, env=environment, cwd=workdir, stdout=output, stderr=subprocess.STDOUT)
    failures = 0
    try:
        wait_for_health(port, process, log)
        found = re.search(r"thk_live_[A-Za-z0-9_-]{32,}", log.read_text())
        if found is None:
            raise RuntimeError(f"no key in the first start's output:\n{log.read_text()}")
        bearer = {"Authorization": f"Bearer {found.group(0)}"}
        started = httpx.post(f"{base}/v1/tools/start_platform_connection", headers=bearer, json={"platform": "threads"})
        link = str(started.json()["structuredContent"]["deep_link"]).removeprefix(base)
        httpx.get(f"{base}{link}")  # opens the page, so its form is read
        routes = [
            ("POST /v1/tools/save_content_plan", "/v1/tools/save_content_plan", bearer),
            (
                "POST /mcp tools/call",
                "/mcp",
                {**bearer, "Accept": "application/json, text/event-stream", "Content-Type": "application/json"},
            ),
            ("POST /oauth/token", "/oauth/token", {"Content-Type": "application/x-www-form-urlencoded"}),
            ("POST /v1/connectors/webhook/events", "/v1/connectors/webhook/events", {}),
            ("POST /app/connect/<token>", link, {"Content-Type": "application/x-www-form-urlencoded"}),
            ("POST /v1/tools/... without a key", "/v1/tools/save_content_plan", {}),
        ]
        print(f"toolhost serve (SQLite), {arguments.megabytes} MB chunked POSTs, 64 KB chunks")
        for label, path, headers in routes:
            before = rss_megabytes(process.pid)
            with peak_rss(process.pid) as peak:
                status, sent = post_chunked(port, path, headers, arguments.megabytes)
            growth = peak[0] - before
            failures += growth >= TARGET_MEGABYTES
            print(
                f"{label:36} {status:40} sent {sent / 1e6:7.1f} MB  RSS {before:6.1f} -> peak {peak[0]:6.1f} MB "
                f"(+{growth:5.1f})"
            )
    finally:
        process.send_signal(signal.SIGINT)
        try:
            process.wait(timeout=15)
        except subprocess.TimeoutExpired:
            process.kill()
            process.wait()
    print(f"target: every route + < {TARGET_MEGABYTES:.0f} MB")
    print("PASS" if failures == 0 else "FAIL")


if __name__ == "__main__":
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--megabytes", type=int, default=600, help="size of each chunked body")
    main(parser.parse_args())
