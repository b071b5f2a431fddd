"""The DevTools protocol over a headless Chromium's `--remote-debugging-pipe`: NUL-separated JSON on two pipes,
commands answered by id, events handed to the handlers a page registers (no extra library)."""

from __future__ import annotations

import asyncio
import contextlib
import fcntl
import json
import os
import subprocess
from typing import Any

COMMAND_TIMEOUT = 60.0


class DevTools:
    """A DevTools protocol connection to a Chromium process over `--remote-debugging-pipe`."""

    def __init__(self, process: subprocess.Popen[bytes], writer: int, reader: int) -> None:
        self.process = process
        self.writer = writer
        self.reader = reader
        self.next_id = 0
        self.pending: dict[int, asyncio.Future[dict[str, Any]]] = {}
        self.handlers: list[Any] = []
        self.tasks: set[asyncio.Task[None]] = set()
        self.reading: asyncio.Task[None] | None = None

    @classmethod
    async def launch(cls, binary: str, profile: str) -> DevTools:
        """Starts headless Chromium with the protocol on fds 3 (commands in) and 4 (replies out)."""
        to_browser_read, to_browser_write = os.pipe()
        from_browser_read, from_browser_write = os.pipe()

        def attach_pipes() -> None:  # runs in the child before exec
            # Move both ends above 4 first, so placing one cannot overwrite the other.
            commands = fcntl.fcntl(to_browser_read, fcntl.F_DUPFD, 10)
            replies = fcntl.fcntl(from_browser_write, fcntl.F_DUPFD, 10)
            os.dup2(commands, 3)
            os.dup2(replies, 4)

        arguments = [
            binary,
            "--headless=new",
            "--remote-debugging-pipe",
            "--disable-gpu",
            "--no-first-run",
            "--no-default-browser-check",
            "--disable-extensions",
            "--disable-background-networking",
            "--disable-sync",
            "--disable-dev-shm-usage",
            "--mute-audio",
            "--disable-breakpad",
            "--disable-crash-reporter",
            "--hide-scrollbars",
            "--force-color-profile=srgb",
            f"--user-data-dir={profile}",
        ]
        if os.geteuid() == 0:
            # Chromium refuses to start its sandbox as root; a root worker runs it without.
            arguments.append("--no-sandbox")
        process = subprocess.Popen(  # noqa: S603 - a fixed argument list, no shell
            arguments,
            pass_fds=(3, 4),
            preexec_fn=attach_pipes,  # the pipes must sit at fds 3 and 4
            stdin=subprocess.DEVNULL,
            stdout=subprocess.DEVNULL,
            stderr=subprocess.DEVNULL,
        )
        os.close(to_browser_read)
        os.close(from_browser_write)
        connection = cls(process, to_browser_write, from_browser_read)
        connection.reading = asyncio.create_task(connection._read())
        return connection

    async def _read(self) -> None:
        loop = asyncio.get_running_loop()
        buffer = b""
        while True:
            chunk = await loop.run_in_executor(None, os.read, self.reader, 1 << 20)
            if not chunk:
                break
            buffer += chunk
            while b"\0" in buffer:
                raw, buffer = buffer.split(b"\0", 1)
                message = json.loads(raw)
                if "id" in message:
                    future = self.pending.pop(message["id"], None)
                    if future is not None and not future.done():
                        future.set_result(message)
                else:
                    for handler in self.handlers:
                        task = asyncio.create_task(handler(message))
                        self.tasks.add(task)
                        task.add_done_callback(self.tasks.discard)
        for future in self.pending.values():
            if not future.done():
                future.set_exception(RuntimeError("chromium exited"))

    async def send(
        self, method: str, params: dict[str, Any] | None = None, *, session: str | None = None
    ) -> dict[str, Any]:
        """Sends a command and waits for its result (DevTools protocol JSON); a protocol error raises RuntimeError."""
        self.next_id += 1
        message: dict[str, Any] = {"id": self.next_id, "method": method, "params": params or {}}
        if session is not None:
            message["sessionId"] = session
        future: asyncio.Future[dict[str, Any]] = asyncio.get_running_loop().create_future()
        self.pending[self.next_id] = future
        data = json.dumps(message).encode() + b"\0"
        await asyncio.to_thread(os.write, self.writer, data)
        reply = await asyncio.wait_for(future, COMMAND_TIMEOUT)
        if "error" in reply:
            raise RuntimeError(f"{method}: {reply['error'].get('message', 'protocol error')}")
        return dict(reply.get("result") or {})

    async def close(self) -> None:
        """Stops Chromium and the reader."""
        with contextlib.suppress(OSError):
            os.close(self.writer)
        self.process.terminate()
        try:
            await asyncio.to_thread(self.process.wait, 10)
        except subprocess.TimeoutExpired:
            self.process.kill()
            await asyncio.to_thread(self.process.wait)
        if self.reading is not None:
            with contextlib.suppress(Exception):
                await asyncio.wait_for(self.reading, 5)
        with contextlib.suppress(OSError):
            os.close(self.reader)
        for task in list(self.tasks):
            task.cancel()
