"""The real server's output as an operator reads it: JSON call lines, redacted access lines, /metrics.

`toolhost serve` runs in a process of its own: what is read is the output of the logging it sets up for the
whole process (the JSON call lines alone on stdout), which a test in this process could not see unchanged.
"""

from __future__ import annotations

import json
import re
import subprocess
import threading
import time
from pathlib import Path

import httpx
import pytest

from tests.e2e.test_serve import environment, free_port, stop, toolhost_command

pytestmark = pytest.mark.slow

METRICS_TOKEN = "metrics-token-for-the-real-server-0123"


class Output:
    """Every line a server prints, read in the background."""

    def __init__(self, process: subprocess.Popen[str]) -> None:
        self.lines: list[str] = []
        self._lock = threading.Lock()
        self._reader = threading.Thread(target=self._read, args=(process,), daemon=True)
        self._reader.start()

    def _read(self, process: subprocess.Popen[str]) -> None:
        assert process.stdout is not None
        for line in process.stdout:
            with self._lock:
                self.lines.append(line)

    def text(self) -> str:
        with self._lock:
            return "".join(self.lines)

    def finish(self) -> str:
        """All of it, once the server has exited."""
        self._reader.join(timeout=20)
        return self.text()


def serving(base: str) -> bool:
    try:
        return httpx.get(f"{base}/healthz", timeout=1).status_code == 200
    except httpx.TransportError:
        return False


def test_the_server_logs_each_call_as_json_and_never_a_key_sent_in_a_url(tmp_path: Path) -> None:
    port = free_port()
    process = subprocess.Popen(
        toolhost_command("serve"),
        cwd=tmp_path,
        env=environment(port, TOOLHOST_METRICS__TOKEN=METRICS_TOKEN),
        stdout=subprocess.PIPE,
        stderr=subprocess.STDOUT,
        text=True,
    )
    output = Output(process)
    base = f"http://127.0.0.1:{port}"
    try:
        deadline = time.monotonic() + 60
        while not serving(base):
            assert process.poll() is None and time.monotonic() < deadline, output.text()
            time.sleep(0.1)
        key = re.search(r"(thk_live_[A-Za-z0-9_-]{32,})", output.text()).group(1)  # type: ignore[union-attr]
        started = len(output.lines)

        in_query = httpx.get(f"{base}/v1/tools", params={"api_key": key})
        assert in_query.status_code == 401
        called = httpx.post(f"{base}/v1/tools/get_credit_balance", headers={"Authorization": f"Bearer {key}"})
        assert called.status_code == 200 and not called.json()["isError"]
        metrics = httpx.get(f"{base}/metrics", headers={"Authorization": f"Bearer {METRICS_TOKEN}"})
        assert metrics.status_code == 200
        assert 'toolhost_tool_calls_total{outcome="ok",tool="get_credit_balance"} 1.0' in metrics.text
    finally:
        stop(process)
    served = output.finish().splitlines()[started:]

    assert not any(key in line for line in served)
    assert any('"GET /v1/tools?api_key=[REDACTED] HTTP/1.1" 401' in line for line in served), served
    call_lines = [json.loads(line) for line in served if line.startswith("{")]
    assert len(call_lines) == 1, served
    (line,) = call_lines
    assert line["tool"] == "get_credit_balance" and line["outcome"] == "ok" and line["transport"] == "rest"
    assert line["account_id"] and line["request_id"].startswith("req_") and line["credits"] == 0
