"""`toolhost worker --processes N`: forked workers that publish, and a killed one replaced at once."""

from __future__ import annotations

import re
import signal
import subprocess
import time
from collections.abc import Callable
from pathlib import Path

import httpx

from tests.e2e.test_serve import (
    UUID,
    Receiver,
    environment,
    free_port,
    receiver,
    run_cli,
    start,
    stop,
    toolhost_command,
)

__all__ = ["receiver"]  # the fixture, used by name


def children(pid: int) -> set[int]:
    return {int(child) for child in Path(f"/proc/{pid}/task/{pid}/children").read_text().split()}


def wait_for(condition: str, check: Callable[[], bool], timeout: float = 20) -> None:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if check():
            return
        time.sleep(0.05)
    raise AssertionError(f"timed out waiting for {condition}")


def test_forked_workers_publish_and_a_killed_one_is_replaced(tmp_path: Path, receiver: str) -> None:
    port = free_port()
    # The server migrates and bootstraps; its own worker is off, so only the forked ones publish.
    server, lines = start(tmp_path, port, TOOLHOST_JOBS__RUN_IN_PROCESS="false")
    workers = subprocess.Popen(
        toolhost_command("worker", "--processes", "2"),
        cwd=tmp_path,
        env=environment(port),
        stdout=subprocess.PIPE,
        stderr=subprocess.STDOUT,
        text=True,
    )
    try:
        wait_for("two worker processes", lambda: len(children(workers.pid)) == 2)
        killed = min(children(workers.pid))
        subprocess.run(["kill", "-9", str(killed)], check=True)
        wait_for("a replacement", lambda: killed not in children(workers.pid) and len(children(workers.pid)) == 2)

        key = re.search(r"(thk_live_[A-Za-z0-9_-]{32,})", "".join(lines)).group(1)  # type: ignore[union-attr]
        account_id = re.search(UUID, run_cli(tmp_path, port, "accounts", "list")).group(0)  # type: ignore[union-attr]
        projects = run_cli(tmp_path, port, "projects", "list", "--account", account_id)
        project_id = re.search(UUID, projects).group(0)  # type: ignore[union-attr]
        run_cli(
            tmp_path,
            port,
            *("connections", "add", "--project", project_id, "--platform", "linkedin"),
            *("--connector", "webhook", "--url", receiver),
        )
        scheduled = httpx.post(
            f"http://127.0.0.1:{port}/v1/tools/schedule_post",
            headers={"Authorization": f"Bearer {key}"},
            json={"platforms": ["linkedin"], "caption": "Published by a forked worker.", "response_format": "json"},
        )
        assert scheduled.status_code == 200 and not scheduled.json()["isError"], scheduled.text
        # A liveness wait, generous for a loaded CI machine; what the workers printed goes with a failure.
        try:
            wait_for("the delivery", lambda: len(Receiver.deliveries) >= 1, timeout=60)
        except AssertionError:
            workers.send_signal(signal.SIGTERM)
            workers.wait(timeout=20)
            raise AssertionError(workers.stdout.read() if workers.stdout else "") from None
        assert len(Receiver.deliveries) == 1

        workers.send_signal(signal.SIGTERM)
        assert workers.wait(timeout=20) == 0
        output = workers.stdout.read() if workers.stdout else ""
        assert "2 worker processes started" in output
        assert f"pid {killed}" in output  # the supervisor logged the exit it replaced
    finally:
        if workers.poll() is None:
            workers.kill()
            workers.wait()
        if workers.stdout is not None:
            workers.stdout.close()
        stop(server)
