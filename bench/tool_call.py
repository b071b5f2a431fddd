"""Throughput of one tool call over REST and MCP, against bare baselines under the same uvicorn settings.

Run: .venv/bin/python bench/tool_call.py [--seconds 10] [--connections 32]

It starts four servers on 127.0.0.1, one at a time, each a single uvicorn worker (uvloop, httptools,
no access log): toolhost (SQLite file, rate limits off, a bootstrapped mcp:full key, and the logging of
`toolhost serve`, so every call writes its JSON line to the server's log file), a bare
Starlette JSON endpoint, and the official MCP SDK's own server (MCPServer, stateless, JSON
responses) serving a trivial tool. A keep-alive HTTP/1.1 load generator in this process then sends
as many requests as it can over N connections for the given time, and prints calls/s and ratios:
  REST  POST /v1/tools/get_credit_balance        vs  bare Starlette GET /json
  MCP   POST /mcp tools/call get_credit_balance  vs  SDK server POST /mcp tools/call echo
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import re
import shutil
import socket
import subprocess
import sys
import tempfile
import textwrap
import time
from pathlib import Path

from toolhost.platform.observability import logging_config

UVICORN_FLAGS = [
    "--loop",
    "uvloop",
    "--http",
    "httptools",
    "--no-access-log",
    "--log-level",
    "warning",
    "--workers",
    "1",
]

BARE_APP = textwrap.dedent(
    """
    from starlette.applications import Starlette
    from starlette.responses import JSONResponse
    from starlette.routing import Route

    async def endpoint(request):
        await request.body()
        return JSONResponse({"content": [{"type": "text", "text": "ok"}], "isError": False})

    app = Starlette(routes=[Route("/json", endpoint, methods=["GET", "POST"])])
    """
)

SDK_APP = textwrap.dedent(
    """
    from mcp.server.mcpserver import MCPServer

    server = MCPServer("baseline")

    @server.tool()
    def echo(text: str = "ok") -> str:
        \"\"\"Returns its input.\"\"\"
        return text

    app = server.streamable_http_app(stateless_http=True, json_response=True)
    """
)

SETUP = textwrap.dedent(
    """
    import asyncio
    from toolhost.catalog import build_registry
    from toolhost.config import load_settings
    from toolhost.db.migrate import upgrade
    from toolhost.platform import accounts
    from toolhost.platform.runtime import build_platform

    async def main():
        settings = load_settings()
        platform = build_platform(settings, build_registry())
        await upgrade(platform.engine)
        async with platform.session_factory() as session, session.begin():
            bootstrapped = await accounts.bootstrap(session, settings=settings)
        await platform.close()
        print(bootstrapped.issued.plaintext)

    asyncio.run(main())
    """
)


def free_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return int(probe.getsockname()[1])


def start_server(target: list[str], environment: dict[str, str], cwd: Path) -> tuple[subprocess.Popen[bytes], int]:
    port = free_port()
    # Servers log to a file: an unread pipe fills up and stalls a chatty server mid-run.
    log = (cwd / f"server-{port}.log").open("wb")
    process = subprocess.Popen(
        [sys.executable, "-m", "uvicorn", *target, "--host", "127.0.0.1", "--port", str(port), *UVICORN_FLAGS],
        env=environment,
        cwd=cwd,
        stdout=log,
        stderr=subprocess.STDOUT,
    )
    deadline = time.monotonic() + 30
    while time.monotonic() < deadline:
        try:
            with socket.create_connection(("127.0.0.1", port), timeout=0.2):
                return process, port
        except OSError:
            if process.poll() is not None:
                raise RuntimeError((cwd / f"server-{port}.log").read_text()) from None
            time.sleep(0.1)
    raise RuntimeError("server did not start")


def request_bytes(method: str, path: str, port: int, headers: dict[str, str], body: bytes) -> bytes:
    lines = [f"{method} {path} HTTP/1.1", f"Host: 127.0.0.1:{port}", f"Content-Length: {len(body)}"]
    lines += [f"{name}: {value}" for name, value in headers.items()]
    return ("\r\n".join(lines) + "\r\n\r\n").encode() + body


async def one_connection(port: int, payload: bytes, stop_at: float, counts: dict[str, int]) -> None:
    reader, writer = await asyncio.open_connection("127.0.0.1", port)
    try:
        while time.monotonic() < stop_at:
            writer.write(payload)
            status_line = await reader.readline()
            length = 0
            while True:
                line = await reader.readline()
                if line in (b"\r\n", b""):
                    break
                name, _, value = line.decode("latin-1").partition(":")
                if name.lower() == "content-length":
                    length = int(value.strip())
            await reader.readexactly(length)
            counts["ok" if b" 200 " in status_line else "failed"] += 1
    finally:
        writer.close()


async def load(port: int, payload: bytes, seconds: float, connections: int) -> tuple[float, int]:
    counts = {"ok": 0, "failed": 0}
    started = time.monotonic()
    await asyncio.gather(*(one_connection(port, payload, started + seconds, counts) for _ in range(connections)))
    elapsed = time.monotonic() - started
    return counts["ok"] / elapsed, counts["failed"]


def wrk_load(port: int, payload: bytes, seconds: float, connections: int) -> tuple[float, int]:
    """The same requests sent by wrk (1 thread), which leaves the server far more of the machine."""
    head, _, body = payload.partition(b"\r\n\r\n")
    method, path, _ = head.split(b"\r\n")[0].decode().split(" ")
    headers = {
        name: value
        for name, _, value in (line.decode().partition(": ") for line in head.split(b"\r\n")[1:])
        if name.lower() not in ("host", "content-length", "connection")
    }
    script = "\n".join(
        [f"wrk.method = {json.dumps(method)}", f"wrk.body = {json.dumps(body.decode())}"]
        + [f"wrk.headers[{json.dumps(name)}] = {json.dumps(value)}" for name, value in headers.items()]
    )
    with tempfile.NamedTemporaryFile("w", suffix=".lua", delete=False) as lua:
        lua.write(script)
    finished = subprocess.run(
        [
            "wrk",
            "-t1",
            f"-c{connections}",
            f"-d{max(1, round(seconds))}s",
            "-s",
            lua.name,
            f"http://127.0.0.1:{port}{path}",
        ],
        capture_output=True,
        text=True,
        check=True,
    )
    Path(lua.name).unlink()
    rate = float(re.search(r"Requests/sec:\s+([\d.]+)", finished.stdout).group(1))  # type: ignore[union-attr]
    failed = re.search(r"Non-2xx or 3xx responses: (\d+)", finished.stdout)
    return rate, int(failed.group(1)) if failed else 0


def cpu_seconds(pid: int) -> float:
    """User and system CPU time a process has used so far (/proc/<pid>/stat)."""
    fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")


def measure(
    label: str, process: subprocess.Popen[bytes], port: int, payload: bytes, arguments: argparse.Namespace
) -> float:
    def run(seconds: float, connections: int) -> tuple[float, int]:
        if arguments.load == "wrk":
            return wrk_load(port, payload, seconds, connections)
        return asyncio.run(load(port, payload, seconds, connections))

    try:
        run(1.0, 4)  # a warm-up: first calls read credentials and compile statements
        cpu_before = cpu_seconds(process.pid)
        rate, failed = run(arguments.seconds, arguments.connections)
        cpu = cpu_seconds(process.pid) - cpu_before
    finally:
        process.terminate()
        process.wait(timeout=10)
    # CPU per call moves far less with the machine's other work than calls/s do.
    per_call = cpu / max(1.0, rate * arguments.seconds) * 1e6
    print(f"{label:<44} {rate:9.0f} calls/s  ({failed} non-200)  server CPU {per_call:4.0f} us/call")
    return rate


def mcp_call(name: str, tool_arguments: dict[str, object]) -> bytes:
    return json.dumps(
        {"jsonrpc": "2.0", "id": 1, "method": "tools/call", "params": {"name": name, "arguments": tool_arguments}}
    ).encode()


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--seconds", type=float, default=10.0)
    parser.add_argument("--connections", type=int, default=32)
    parser.add_argument("--database-url", default=None, help="default: a fresh SQLite file; or a PostgreSQL URL")
    parser.add_argument(
        "--load",
        choices=["wrk", "python"],
        default="wrk" if shutil.which("wrk") else "python",
        help="the load generator: wrk (Debian package wrk; the default when installed) or this process",
    )
    arguments = parser.parse_args()

    workdir = Path(tempfile.mkdtemp(prefix="toolhost-bench-"))
    (workdir / "bare_app.py").write_text(BARE_APP)
    (workdir / "sdk_app.py").write_text(SDK_APP)
    environment = {
        **os.environ,
        "TOOLHOST_DATABASE_URL": arguments.database_url or f"sqlite+aiosqlite:///{workdir / 'bench.db'}",
        "TOOLHOST_RATELIMIT__ENABLED": "false",
        # PostgreSQL installs name their key file (an SQLite one keeps it beside the database).
        "TOOLHOST_SECRET_FILE": str(workdir / "toolhost.secret"),
        # The servers run in the work directory: the caller's PYTHONPATH (e.g. a worktree's src) made absolute,
        # so they import the toolhost under test and not the virtualenv's editable install.
        "PYTHONPATH": os.pathsep.join(
            [
                str(workdir),
                *(str(Path(entry).resolve()) for entry in os.environ.get("PYTHONPATH", "").split(os.pathsep) if entry),
            ]
        ),
    }
    key = subprocess.run(
        [sys.executable, "-c", SETUP], env=environment, capture_output=True, text=True, check=True
    ).stdout.strip()
    auth = {"Authorization": f"Bearer {key}", "Content-Type": "application/json"}
    mcp_headers = {"Accept": "application/json, text/event-stream", "MCP-Protocol-Version": "2025-11-25"}
    # toolhost logs as `toolhost serve` does: each call's JSON line is part of what a call costs.
    (workdir / "logging.json").write_text(json.dumps(logging_config("INFO")))
    toolhost_target = ["toolhost.app:create_app", "--factory", "--log-config", str(workdir / "logging.json")]

    print(f"database: {environment['TOOLHOST_DATABASE_URL'].split('://')[0]}")
    flags = " ".join(UVICORN_FLAGS)
    print(
        f"settings: {arguments.seconds:.0f} s per target, {arguments.connections} connections, load {arguments.load}, "
        f"uvicorn {flags}"
    )
    process, port = start_server(toolhost_target, environment, workdir)
    rest = measure(
        "toolhost POST /v1/tools/get_credit_balance",
        process,
        port,
        request_bytes("POST", "/v1/tools/get_credit_balance", port, auth, b"{}"),
        arguments,
    )
    process, port = start_server(["bare_app:app"], environment, workdir)
    bare = measure(
        "bare Starlette POST /json",
        process,
        port,
        request_bytes("POST", "/json", port, {"Content-Type": "application/json"}, b"{}"),
        arguments,
    )
    process, port = start_server(toolhost_target, environment, workdir)
    ours = measure(
        "toolhost /mcp tools/call get_credit_balance",
        process,
        port,
        request_bytes("POST", "/mcp", port, {**auth, **mcp_headers}, mcp_call("get_credit_balance", {})),
        arguments,
    )
    process, port = start_server(["sdk_app:app"], environment, workdir)
    sdk = measure(
        "MCP SDK server /mcp tools/call echo",
        process,
        port,
        request_bytes(
            "POST", "/mcp", port, {"Content-Type": "application/json", **mcp_headers}, mcp_call("echo", {"text": "ok"})
        ),
        arguments,
    )
    print(f"REST ratio to bare Starlette: {rest / bare:.2f} (target >= 0.25)")
    print(f"/mcp ratio to the SDK's server: {ours / sdk:.2f} (target >= 1.5)")


if __name__ == "__main__":
    main()
