"""A local stand-in site (tests/data/brand_site) on 127.0.0.1, allowlisted for the fetcher."""

from __future__ import annotations

import threading
from collections.abc import Iterator
from functools import partial
from http.server import SimpleHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any

import pytest

from tests.conftest import settings_for_test
from tests.local_http import serving
from toolhost.config import Settings

SITE = Path(__file__).resolve().parents[2] / "data" / "brand_site"


class SiteHandler(SimpleHTTPRequestHandler):
    """Serves the fixture files, plus a page that never answers and one of 10 MB."""

    release: threading.Event

    def do_GET(self) -> None:
        if self.path == "/hang":
            self.release.wait(timeout=10)
            return
        if self.path == "/huge":
            body = b"<html><body>" + b"<p>filler text</p>" * (10 * 1024 * 1024 // 18) + b"</body></html>"
            self.send_response(200)
            self.send_header("Content-Type", "text/html")
            self.send_header("Content-Length", str(len(body)))
            self.end_headers()
            self.wfile.write(body)
            return
        super().do_GET()

    def log_message(self, format: str, *args: Any) -> None:
        return


@pytest.fixture
def site() -> Iterator[str]:
    """The fixture site's root URL."""
    release = threading.Event()
    handler = type("Handler", (SiteHandler,), {"release": release})
    server = ThreadingHTTPServer(("127.0.0.1", 0), partial(handler, directory=str(SITE)))
    server.daemon_threads = True
    with serving(server):
        try:
            yield f"http://127.0.0.1:{server.server_address[1]}"
        finally:
            release.set()


@pytest.fixture
def settings(database_url: str, tmp_path: Path) -> Settings:
    """The test settings with 127.0.0.1 allowlisted and a short total timeout."""
    return settings_for_test(
        database_url=database_url,
        media={"root": str(tmp_path / "media")},
        fetch={"allow": ["127.0.0.1/32"], "total_timeout": 1.5},
    )
