"""`toolhost worker --processes N`: forked workers that publish, and a killed one replaced at once.

The worker command runs in a process of its own: its supervisor forks the workers, and the test kills one with
SIGKILL. The operator's commands that set the installation up and schedule the post run in this process.
"""

from __future__ import annotations

import json
import signal
import subprocess
import time
from collections.abc import Callable
from pathlib import Path

import pytest

from tests.e2e.test_serve import Receiver, environment, free_port, receiver, run_cli, toolhost_command

pytestmark = pytest.mark.slow

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
    port = free_port()  # no server listens on it: the workers alone publish
    run_cli(tmp_path, port, "migrate")
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

        account_id = json.loads(run_cli(tmp_path, port, "accounts", "create", "--tier", "agency", "--json"))["id"]
        project = run_cli(tmp_path, port, "projects", "create", "--account", account_id, "--name", "p", "--json")
        project_id = json.loads(project)["id"]
        issued = run_cli(
            tmp_path,
            port,
            *("keys", "create", "--account", account_id, "--name", "ops", "--scopes", "mcp:full"),
            "--json",
        )
        key = json.loads(issued)["key"]
        run_cli(
            tmp_path,
            port,
            *("connections", "add", "--project", project_id, "--platform", "linkedin"),
            *("--connector", "webhook", "--url", receiver),
        )
        arguments = {"platforms": ["linkedin"], "caption": "Published by a forked worker.", "response_format": "json"}
        scheduled = json.loads(
            run_cli(tmp_path, port, "call", "schedule_post", "--json", json.dumps(arguments), "--key", key)
        )
        assert scheduled["isError"] is False, scheduled
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
