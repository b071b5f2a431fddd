"""Idle resident memory of `toolhost serve`.

Run: .venv/bin/python bench/idle_rss.py [--idle 3]

Target: idle RSS of `toolhost serve` <= 150 MB.

Starts `toolhost serve` (the console script beside this interpreter) on 127.0.0.1 with a fresh SQLite
file and media root in a temporary directory, waits until GET /healthz answers 200, then `--idle`
seconds more with no requests, and prints VmRSS (and the peak, VmHWM) from /proc/<pid>/status.
"""

from __future__ import annotations

import argparse
import os
import signal
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import httpx

# The same free-port helper as the REST throughput bench beside this file.
from tool_call import free_port

TARGET_MEGABYTES = 150.0
START_SECONDS = 60.0


def memory_megabytes(pid: int) -> dict[str, float]:
    """VmRSS and VmHWM of a process, in MB (10^6 bytes)."""
    found: dict[str, float] = {}
    for line in Path(f"/proc/{pid}/status").read_text().splitlines():
        name, _, value = line.partition(":")
        if name in ("VmRSS", "VmHWM"):
            found[name] = int(value.split()[0]) * 1024 / 1e6
    return found


def wait_for_health(port: int, process: subprocess.Popen[bytes], log: Path) -> None:
    deadline = time.monotonic() + START_SECONDS
    while time.monotonic() < deadline:
        if process.poll() is not None:
            raise RuntimeError(f"toolhost serve exited:\n{log.read_text()}")
        try:
            if httpx.get(f"http://127.0.0.1:{port}/healthz", timeout=1.0).status_code == 200:
                return
        except httpx.TransportError:
            pass
        time.sleep(0.1)
    raise RuntimeError(f"/healthz did not answer within {START_SECONDS:.0f} s")


def main(arguments: argparse.Namespace) -> None:
    workdir = Path(tempfile.mkdtemp(prefix="toolhost-bench-rss-"))
    environment = {
        **os.environ,
        "TOOLHOST_DATABASE_URL": f"sqlite+aiosqlite:///{workdir / 'bench.db'}",
        "TOOLHOST_MEDIA__ROOT": str(workdir / "media"),
        "TOOLHOST_LOG_LEVEL": "WARNING",
        # The server runs in a temporary directory: a relative PYTHONPATH (PYTHONPATH=src) must not change meaning.
        "PYTHONPATH": os.pathsep.join(
            str(Path(entry).resolve()) for entry in os.environ.get("PYTHONPATH", "").split(os.pathsep) if entry
        ),
    }
    port = free_port()
    log = workdir / "serve.log"
    command = [str(Path(sys.executable).parent / "toolhost"), "serve", "--host", "127.0.0.1", "--port", str(port)]
    with log.open("wb") as output:
        process = subprocess.Popen(command, env=environment, cwd=workdir, stdout=output, stderr=subprocess.STDOUT)
    try:
        started = time.monotonic()
        wait_for_health(port, process, log)
        ready = time.monotonic() - started
        time.sleep(arguments.idle)
        memory = memory_megabytes(process.pid)
    finally:
        process.send_signal(signal.SIGINT)
        try:
            process.wait(timeout=15)
        except subprocess.TimeoutExpired:
            process.kill()
            process.wait()
    rss = memory["VmRSS"]
    print(f"toolhost serve (SQLite, idle {arguments.idle:g} s after /healthz, ready in {ready:.1f} s)")
    print(
        f"VmRSS {rss:.1f} MB ({rss * 1e6 / 2**20:.1f} MiB), VmHWM {memory['VmHWM']:.1f} MB "
        f"(target <= {TARGET_MEGABYTES:.0f} MB)"
    )
    print("PASS" if rss <= TARGET_MEGABYTES else "FAIL")


if __name__ == "__main__":
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--idle", type=float, default=3.0, help="seconds to stay idle after /healthz answers")
    main(parser.parse_args())
