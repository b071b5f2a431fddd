"""Browser fixtures: the real app served by uvicorn on a free port, and a headless Chromium page on it.

Loaded for the whole suite by tests/conftest.py, so page tests anywhere (the docs, the approvals page, the
calendar) use them. The browser is Debian's Chromium (`make test` installs it where it can), driven by
Playwright; Playwright's own browser builds are never downloaded. Without Chromium the tests that ask for a
page skip with the reason, and under CI=true they fail.
"""

from __future__ import annotations

import asyncio
import os
import shutil
import socket
import threading
from collections.abc import AsyncIterator
from dataclasses import dataclass

import pytest
import uvicorn
from playwright.async_api import ConsoleMessage, Error, Page, async_playwright, expect

from toolhost.app import create_app
from toolhost.config import Settings

CHROMIUM = "/usr/bin/chromium"
STARTUP_SECONDS = 30
# How long a page action or an `expect` waits: a loaded 2-core machine parses Swagger UI's 1.5 MB in seconds.
PAGE_WAIT_MILLISECONDS = 30_000


@dataclass(frozen=True, slots=True)
class LiveServer:
    """The app listening on 127.0.0.1, on the test's own database (the `settings` fixture's)."""

    url: str
    settings: Settings


class _ThreadServer(uvicorn.Server):
    """A uvicorn server in a thread of its own that says when it has started (or failed to)."""

    def __init__(self, config: uvicorn.Config) -> None:
        super().__init__(config)
        self.ready = threading.Event()

    async def startup(self, sockets: list[socket.socket] | None = None) -> None:
        try:
            await super().startup(sockets=sockets)
        finally:
            self.ready.set()


@pytest.fixture
async def live_server(settings: Settings) -> AsyncIterator[LiveServer]:
    """The real app served by uvicorn on a free port; set data up through the `platform` fixture (same database)."""
    listener = socket.socket()
    listener.bind(("127.0.0.1", 0))
    url = f"http://127.0.0.1:{listener.getsockname()[1]}"
    served = settings.model_copy(update={"public_url": url})
    # log_config None: the suite's logging (caplog) stays as pytest set it.
    config = uvicorn.Config(create_app(served), log_config=None, access_log=False, loop="asyncio", lifespan="on")
    server = _ThreadServer(config)
    thread = threading.Thread(target=server.run, kwargs={"sockets": [listener]}, daemon=True)
    thread.start()
    try:
        await asyncio.to_thread(server.ready.wait, STARTUP_SECONDS)
        assert server.started, "the live server did not start"
        yield LiveServer(url=url, settings=served)
    finally:
        server.should_exit = True
        await asyncio.to_thread(thread.join, STARTUP_SECONDS)
        listener.close()


@pytest.fixture(scope="session")
def chromium_executable() -> str:
    """Debian's Chromium, or a skip saying how to get it (a failure under CI=true)."""
    found = shutil.which(CHROMIUM)
    if found is None:
        message = f"{CHROMIUM} is missing: `make test` installs it as root with apt-get (apt-get install chromium)"
        if os.environ.get("CI") == "true":
            pytest.fail(f"{message}; under CI=true the browser tests must run")
        pytest.skip(message)
    return found


@pytest.fixture
def browser_errors() -> list[str]:
    """What the page reported as going wrong: console errors and uncaught exceptions, in order."""
    return []


@pytest.fixture
async def browser_page(chromium_executable: str, browser_errors: list[str]) -> AsyncIterator[Page]:
    """A fresh headless Chromium page; its console errors and uncaught exceptions go to `browser_errors`."""

    def console(message: ConsoleMessage) -> None:
        if message.type == "error":
            browser_errors.append(f"console: {message.text}")

    def uncaught(error: Error) -> None:
        browser_errors.append(f"exception: {error.message}")

    async with async_playwright() as playwright:
        browser = await playwright.chromium.launch(executable_path=chromium_executable, headless=True)
        try:
            page = await browser.new_page()
            page.set_default_timeout(PAGE_WAIT_MILLISECONDS)
            expect.set_options(timeout=PAGE_WAIT_MILLISECONDS)
            page.on("console", console)
            page.on("pageerror", uncaught)
            yield page
        finally:
            await browser.close()
