"""The supervisor names each forked worker and tells a replacement which worker died before it.

The supervisor runs in a process of its own: it forks, installs signal handlers and is stopped by signals, none
of which a test may do to the pytest process.
"""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import textwrap
import time
from pathlib import Path

CHILD = textwrap.dedent(
    """
    import os, sys, time
    from toolhost.platform.supervisor import supervise

    def work(worker_id, departed_worker_id):
        with open(sys.argv[1], "a") as started:
            started.write(f"{os.getpid()} {worker_id} {departed_worker_id}\\n")
        time.sleep(60)

    supervise(work, processes=2)
    """
)


def started_children(log: Path) -> list[tuple[int, str, str]]:
    if not log.exists():
        return []
    rows = [line.split() for line in log.read_text().splitlines()]
    return [(int(pid), worker_id, departed) for pid, worker_id, departed in rows]


def wait_for_children(log: Path, count: int) -> list[tuple[int, str, str]]:
    deadline = time.monotonic() + 30
    while time.monotonic() < deadline:
        children = started_children(log)
        if len(children) >= count:
            return children
        time.sleep(0.05)
    raise AssertionError(f"{count} children did not start: {started_children(log)}")


def test_a_replacement_is_told_which_worker_died_and_first_children_are_told_none(tmp_path: Path) -> None:
    log = tmp_path / "started.log"
    parent = subprocess.Popen([sys.executable, "-c", CHILD, str(log)], env={**os.environ, "PYTHONPATH": "src"})
    try:
        first = wait_for_children(log, 2)
        assert [departed for _, _, departed in first] == ["None", "None"]
        assert len({worker_id for _, worker_id, _ in first}) == 2
        killed_pid, killed_worker_id, _ = first[0]
        os.kill(killed_pid, signal.SIGKILL)
        replacement = wait_for_children(log, 3)[2]
        assert replacement[2] == killed_worker_id
        assert replacement[1] not in {worker_id for _, worker_id, _ in first}
    finally:
        parent.send_signal(signal.SIGTERM)
        time.sleep(0.2)
        parent.send_signal(signal.SIGTERM)  # a second one kills the sleeping children
        parent.wait(timeout=30)


def test_children_stop_when_the_supervisor_is_killed_outright(tmp_path: Path) -> None:
    log = tmp_path / "started.log"
    parent = subprocess.Popen([sys.executable, "-c", CHILD, str(log)], env={**os.environ, "PYTHONPATH": "src"})
    children = wait_for_children(log, 2)
    parent.kill()
    parent.wait(timeout=30)
    deadline = time.monotonic() + 30
    alive = [pid for pid, _, _ in children]
    while alive and time.monotonic() < deadline:
        alive = [pid for pid in alive if process_exists(pid)]
        time.sleep(0.05)
    for pid in alive:
        os.kill(pid, signal.SIGKILL)
    assert alive == [], "children outlived their supervisor"


def process_exists(pid: int) -> bool:
    """Whether a process of that id runs; a child orphaned to init is reaped by init, so no zombie lingers."""
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    stat = Path(f"/proc/{pid}/stat")
    return not (stat.exists() and stat.read_text().split(") ", 1)[-1].startswith("Z"))
