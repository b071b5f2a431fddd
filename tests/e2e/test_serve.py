"""The real server as `make serve` runs it: first start, a key, tools, a post published by its in-process worker.

`toolhost serve` runs in a process of its own here: what is under test is its first start and a restart (the
bootstrap, the key printed once), and a server killed with SIGKILL mid-call. The operator's other commands run in
this process, through Typer's runner, in the server's directory.
"""

from __future__ import annotations

import contextlib
import hashlib
import hmac
import json
import os
import re
import socket
import subprocess
import sys
import threading
import time
from collections.abc import Iterator
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path

import httpx
import pytest
from typer.testing import CliRunner

from tests.local_http import serving
from toolhost import cli

pytestmark = pytest.mark.slow

UUID = r"[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}"


def free_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return int(probe.getsockname()[1])


class Receiver(BaseHTTPRequestHandler):
    """A webhook receiver that records every delivery."""

    deliveries: list[tuple[dict[str, str], bytes]] = []

    def do_POST(self) -> None:
        body = self.rfile.read(int(self.headers["Content-Length"]))
        Receiver.deliveries.append(({name.lower(): value for name, value in self.headers.items()}, body))
        reply = json.dumps({"external_post_id": "ext-1", "external_url": "https://social.example/p/ext-1"}).encode()
        self.send_response(200)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(reply)))
        self.end_headers()
        self.wfile.write(reply)

    def log_message(self, format: str, *args: object) -> None:
        return


@pytest.fixture
def receiver() -> Iterator[str]:
    Receiver.deliveries = []
    server = ThreadingHTTPServer(("127.0.0.1", 0), Receiver)
    with serving(server):
        yield f"http://127.0.0.1:{server.server_address[1]}/hook"


def toolhost_command(*arguments: str) -> list[str]:
    return [sys.executable, "-c", "from toolhost.cli import main; main()", *arguments]


def settings_environment(port: int, **settings: str) -> dict[str, str]:
    """The TOOLHOST_ settings of a server on `port` that may deliver to 127.0.0.1 over plain HTTP."""
    return {
        **settings,
        "TOOLHOST_PORT": str(port),
        "TOOLHOST_PUBLIC_URL": f"http://127.0.0.1:{port}",
        "TOOLHOST_FETCH__ALLOW": '["127.0.0.1"]',
        "TOOLHOST_FETCH__ALLOW_HTTP": "true",
        "TOOLHOST_JOBS__POLL_INTERVAL": "0.2",
    }


def environment(port: int, **settings: str) -> dict[str, str]:
    """The environment of a toolhost process: this one's, with no TOOLHOST_ setting but the server's."""
    return {
        **{name: value for name, value in os.environ.items() if not name.startswith("TOOLHOST_")},
        **settings_environment(port, **settings),
        "COLUMNS": "200",
        # The server runs in the test's directory: a relative PYTHONPATH (PYTHONPATH=src) keeps naming the code
        # under test, not whatever toolhost the virtualenv has installed.
        "PYTHONPATH": os.pathsep.join(
            str(Path(entry).resolve()) for entry in os.environ.get("PYTHONPATH", "").split(os.pathsep) if entry
        ),
    }


def run_cli(workdir: Path, port: int, *arguments: str) -> str:
    """Runs a `toolhost` command in this process, as an operator in `workdir` (where the server runs) would."""
    unset: dict[str, str | None] = {name: None for name in os.environ if name.startswith("TOOLHOST_")}
    with contextlib.chdir(workdir):
        result = CliRunner().invoke(
            cli.app, list(arguments), env={**unset, **settings_environment(port)}, catch_exceptions=False
        )
    assert result.exit_code == 0, result.output
    return result.stdout


def start(workdir: Path, port: int, **settings: str) -> tuple[subprocess.Popen[str], list[str]]:
    process = subprocess.Popen(
        toolhost_command("serve"),
        cwd=workdir,
        env=environment(port, **settings),
        stdout=subprocess.PIPE,
        stderr=subprocess.STDOUT,
        text=True,
    )
    lines: list[str] = []
    assert process.stdout is not None
    for line in process.stdout:
        lines.append(line)
        if line.startswith("Serving on"):
            break
    threading.Thread(target=lambda: [None for _ in process.stdout or []], daemon=True).start()
    deadline = time.monotonic() + 30
    while time.monotonic() < deadline:
        try:
            if httpx.get(f"http://127.0.0.1:{port}/healthz", timeout=1).status_code == 200:
                return process, lines
        except httpx.TransportError:
            time.sleep(0.1)
    process.kill()
    raise AssertionError("".join(lines))


def stop(process: subprocess.Popen[str]) -> None:
    process.terminate()
    process.wait(timeout=20)
    if process.stdout is not None:
        process.stdout.close()


def test_serve_bootstraps_once_and_publishes_through_its_worker(tmp_path: Path, receiver: str) -> None:
    port = free_port()
    process, lines = start(tmp_path, port)
    try:
        output = "".join(lines)
        key = re.search(r"(thk_live_[A-Za-z0-9_-]{32,})", output).group(1)  # type: ignore[union-attr]
        assert (tmp_path / "toolhost.db").exists()
        assert f"Secret keys: {(tmp_path / 'toolhost.secret').resolve()} (owner-only" in output
        base = f"http://127.0.0.1:{port}"
        headers = {"Authorization": f"Bearer {key}"}
        assert len(httpx.get(f"{base}/v1/tools", headers=headers).json()) >= 40

        account_id = re.search(UUID, run_cli(tmp_path, port, "accounts", "list")).group(0)  # type: ignore[union-attr]
        projects = run_cli(tmp_path, port, "projects", "list", "--account", account_id)
        project_id = re.search(UUID, projects).group(0)  # type: ignore[union-attr]
        connected = run_cli(
            tmp_path,
            port,
            "connections",
            "add",
            "--project",
            project_id,
            "--platform",
            "linkedin",
            "--connector",
            "webhook",
            "--url",
            receiver,
        )
        secret = connected.strip().splitlines()[-1].rsplit(":", 1)[1].strip()

        scheduled = httpx.post(
            f"{base}/v1/tools/schedule_post",
            headers=headers,
            json={
                "platforms": ["linkedin"],
                "caption": "Launch week: three lessons from shipping early.",
                "response_format": "json",
            },
        )
        assert scheduled.status_code == 200 and not scheduled.json()["isError"], scheduled.text
        deadline = time.monotonic() + 30
        while not Receiver.deliveries and time.monotonic() < deadline:
            time.sleep(0.1)
        assert len(Receiver.deliveries) == 1
        delivered_headers, body = Receiver.deliveries[0]
        timestamp, signature = (part.split("=", 1)[1] for part in delivered_headers["x-toolhost-signature"].split(","))
        expected = hmac.new(secret.encode(), f"{timestamp}.".encode() + body, hashlib.sha256).hexdigest()
        assert hmac.compare_digest(signature, expected)
        assert delivered_headers["idempotency-key"]
        assert "three lessons" in json.loads(body)["caption"]
    finally:
        stop(process)

    again, lines = start(tmp_path, port)
    try:
        output = "".join(lines)
        assert "thk_live_" not in output
        assert "toolhost keys create" in output
    finally:
        stop(again)


class HangingSite(BaseHTTPRequestHandler):
    """A site that never answers until the test lets it go; it counts the requests it received."""

    received = threading.Event()
    release = threading.Event()

    def do_GET(self) -> None:
        HangingSite.received.set()
        HangingSite.release.wait(timeout=30)

    def log_message(self, format: str, *args: object) -> None:
        return


def balance(base: str, headers: dict[str, str]) -> int:
    answer = httpx.post(f"{base}/v1/tools/get_credit_balance", headers=headers, json={"response_format": "json"})
    return int(answer.json()["structuredContent"]["balance"])


def test_a_hold_left_by_a_server_killed_mid_call_is_returned_by_the_next_servers_worker(tmp_path: Path) -> None:
    HangingSite.received.clear()
    HangingSite.release.clear()
    site = ThreadingHTTPServer(("127.0.0.1", 0), HangingSite)
    site.daemon_threads = True
    with serving(site):
        port = free_port()
        hold_settings = {"TOOLHOST_CREDITS__HOLD_SECONDS": "1"}
        process, lines = start(tmp_path, port, **hold_settings)
        base = f"http://127.0.0.1:{port}"
        try:
            key = re.search(r"(thk_live_[A-Za-z0-9_-]{32,})", "".join(lines)).group(1)  # type: ignore[union-attr]
            headers = {"Authorization": f"Bearer {key}"}
            before = balance(base, headers)

            def call() -> None:
                url = f"http://127.0.0.1:{site.server_address[1]}/"
                # The server is killed under this call.
                with contextlib.suppress(httpx.TransportError):
                    httpx.post(f"{base}/v1/tools/extract_brand", headers=headers, json={"url": url}, timeout=30)

            caller = threading.Thread(target=call, daemon=True)
            caller.start()
            assert HangingSite.received.wait(timeout=20)
            assert balance(base, headers) == before - 2  # the call's hold
            process.kill()
            process.wait(timeout=20)
            caller.join(timeout=20)
        finally:
            if process.poll() is None:
                process.kill()
                process.wait(timeout=20)
            if process.stdout is not None:
                process.stdout.close()
            HangingSite.release.set()

    again, _ = start(tmp_path, port, **hold_settings)
    try:
        deadline = time.monotonic() + 20
        while balance(base, headers) != before and time.monotonic() < deadline:
            time.sleep(0.2)
        assert balance(base, headers) == before
    finally:
        stop(again)
