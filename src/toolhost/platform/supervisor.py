"""Runs N worker processes forked from one parent that has already imported them, and replaces any that dies.

`toolhost worker --processes N`. The parent imports the tools, job types and pollers once and forks; a child
starts working at once instead of spending seconds importing, so a killed worker is replaced in milliseconds
and its expired leases are taken over by a worker that is already running. The parent opens no database
connection and starts no event loop (neither survives a fork); each child builds its own platform.

A child that exits is forked again at once if it had run for a while or was killed; one that ended itself
soon after its start (a bad setting, an unreachable database) is forked again after a delay that doubles
up to a minute, so a crash loop does not spin. The parent names each child's worker id and tells the child
that replaces it which worker died, so the replacement returns the dead one's jobs to the queue at once
instead of leaving them until their leases expire. SIGTERM or SIGINT asks every child to finish the jobs it runs
and stop; a second one kills them. A parent killed outright (SIGKILL, the OOM killer) cannot ask: the kernel
sends each child SIGTERM when its parent dies (Linux's parent-death signal), so no orphan goes on claiming jobs
beside the workers of the parent's replacement.
"""

from __future__ import annotations

import ctypes
import logging
import multiprocessing
import os
import signal
import sys
import time
from collections.abc import Callable
from dataclasses import dataclass
from multiprocessing.connection import wait
from multiprocessing.process import BaseProcess
from types import FrameType

from toolhost.platform.worker import new_worker_id

logger = logging.getLogger(__name__)

QUICK_EXIT_SECONDS = 10.0
FIRST_RESTART_DELAY = 0.5
LONGEST_RESTART_DELAY = 60.0
PR_SET_PDEATHSIG = 1  # <linux/prctl.h>


@dataclass(slots=True)
class _Slot:
    """One of the N places a child runs in, with its restart back-off."""

    process: BaseProcess | None = None
    worker_id: str | None = None
    departed_worker_id: str | None = None
    started_at: float = 0.0
    quick_exits: int = 0
    restart_at: float = 0.0


def supervise(work: Callable[[str, str | None], None], *, processes: int) -> None:
    """Runs `work(worker_id, departed_worker_id)` in `processes` forked children until SIGTERM or SIGINT,
    replacing children that exit; `departed_worker_id` names the child a replacement takes over from."""
    forking = multiprocessing.get_context("fork")
    slots = [_Slot() for _ in range(processes)]
    signals_received = 0

    def on_signal(signal_number: int, frame: FrameType | None) -> None:
        nonlocal signals_received
        signals_received += 1
        for slot in slots:
            if slot.process is not None and slot.process.pid is not None and slot.process.is_alive():
                os.kill(slot.process.pid, signal.SIGTERM if signals_received == 1 else signal.SIGKILL)

    previous = {number: signal.signal(number, on_signal) for number in (signal.SIGTERM, signal.SIGINT)}
    try:
        while not signals_received:
            now = time.monotonic()
            for index, slot in enumerate(slots):
                if slot.process is None and now >= slot.restart_at:
                    slot.worker_id = new_worker_id()
                    slot.process = forking.Process(
                        target=_child,
                        args=(work, slot.worker_id, slot.departed_worker_id, os.getpid()),
                        name=f"toolhost-worker-{index}",
                    )
                    slot.process.start()
                    slot.started_at = now
            running = [slot.process.sentinel for slot in slots if slot.process is not None]
            wait(running, timeout=0.5)
            for index, slot in enumerate(slots):
                if slot.process is not None and not slot.process.is_alive() and not signals_received:
                    _schedule_restart(index, slot)
        for slot in slots:
            if slot.process is not None:
                slot.process.join()
    finally:
        for number, handler in previous.items():
            signal.signal(number, handler)


def _schedule_restart(index: int, slot: _Slot) -> None:
    assert slot.process is not None
    ran_for = time.monotonic() - slot.started_at
    # A child killed from outside (an operator, the OOM killer) is replaced at once; one that ended
    # itself soon after starting is likely to do so again.
    ended_itself = slot.process.exitcode != -signal.SIGKILL
    slot.quick_exits = slot.quick_exits + 1 if ended_itself and ran_for < QUICK_EXIT_SECONDS else 0
    delay = 0.0
    if slot.quick_exits:
        delay = min(LONGEST_RESTART_DELAY, FIRST_RESTART_DELAY * 2 ** (slot.quick_exits - 1))
    logger.warning(
        "worker process %d (pid %s) exited with %s after %.1f s; starting another in %.1f s",
        index,
        slot.process.pid,
        slot.process.exitcode,
        ran_for,
        delay,
    )
    slot.process.close()
    slot.process = None
    slot.departed_worker_id = slot.worker_id
    slot.restart_at = time.monotonic() + delay


def _child(
    work: Callable[[str, str | None], None], worker_id: str, departed_worker_id: str | None, parent_pid: int
) -> None:
    # The parent's handlers only forward signals; the child's event loop installs its own.
    signal.signal(signal.SIGTERM, signal.SIG_DFL)
    signal.signal(signal.SIGINT, signal.SIG_DFL)
    _stop_when_parent_dies()
    if os.getppid() != parent_pid:
        return  # the parent died between the fork and the request above
    work(worker_id, departed_worker_id)


def _stop_when_parent_dies() -> None:
    """Asks the kernel for SIGTERM when the parent dies (Linux only; elsewhere an orphan runs until stopped)."""
    if not sys.platform.startswith("linux"):
        return
    # The process's own symbols (libc among them), not ctypes.util.find_library: that starts an ldconfig
    # subprocess in every forked worker, and with it the supervisor under the SIGKILL bench often failed to stop
    # on SIGTERM (bench/README.md, publish.py; the mechanism was not pinned down).
    libc = ctypes.CDLL(None, use_errno=True)
    if libc.prctl(PR_SET_PDEATHSIG, signal.SIGTERM, 0, 0, 0) != 0:
        logger.warning("could not ask for a signal on the supervisor's death: errno %d", ctypes.get_errno())
