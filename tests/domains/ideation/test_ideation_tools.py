"""fetch_trends through the SSRF-safe fetcher against a local feed, and the context tools."""

from __future__ import annotations

import threading
from collections.abc import Iterator
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path

import pytest

from tests.conftest import Tenant, settings_for_test
from toolhost.config import Settings

FEED = b"""<?xml version="1.0"?><rss version="2.0"><channel><title>News</title>
<item><title>Async standups spread</title><link>https://example.com/a</link>
<pubDate>Mon, 06 Jan 2030 10:00:00 GMT</pubDate>
<description>Remote teams drop status meetings.</description></item>
<item><title>Remote teams and async standups</title><link>https://example.com/b</link>
<pubDate>Sun, 05 Jan 2030 10:00:00 GMT</pubDate></item>
<item><title>Gardening in winter</title><link>https://example.com/c</link>
<pubDate>Tue, 07 Jan 2030 10:00:00 GMT</pubDate></item>
</channel></rss>"""


@pytest.fixture
def feed_server() -> Iterator[tuple[str, list[str]]]:
    hits: list[str] = []

    class Handler(BaseHTTPRequestHandler):
        def do_GET(self) -> None:
            hits.append(self.path)
            body = FEED if self.path == "/feed" else b"<html><body>not a feed</body></html>"
            self.send_response(200)
            self.send_header("Content-Type", "application/rss+xml" if self.path == "/feed" else "text/html")
            self.send_header("Content-Length", str(len(body)))
            self.end_headers()
            self.wfile.write(body)

        def log_message(self, format: str, *args: object) -> None:
            return

    server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    yield f"http://127.0.0.1:{server.server_address[1]}", hits
    server.shutdown()
    server.server_close()


@pytest.fixture
def settings(database_url: str, tmp_path: Path) -> Settings:
    """The test's settings, with the local feed server allowlisted for the fetcher."""
    return settings_for_test(
        database_url=database_url,
        media={"root": str(tmp_path / "media")},
        fetch={"allow": ["127.0.0.1"], "allow_http": True},
    )


async def test_rss_trends_are_ranked_filtered_by_niche_and_cached(
    tenant: Tenant, feed_server: tuple[str, list[str]]
) -> None:
    base, hits = feed_server
    arguments = {"source": "rss", "url": f"{base}/feed", "niche": "remote standups"}
    first = await tenant.data("fetch_trends", arguments)
    assert first["cached"] is False
    assert [trend["title"] for trend in first["trends"]] == [
        "Async standups spread",
        "Remote teams and async standups",
    ]
    second = await tenant.data("fetch_trends", arguments)
    assert second["cached"] is True
    assert len(hits) == 1
    refreshed = await tenant.data("fetch_trends", {**arguments, "force_refresh": True})
    assert refreshed["cached"] is False
    assert len(hits) == 2


async def test_a_feed_that_is_not_xml_is_a_validation_error(tenant: Tenant, feed_server: tuple[str, list[str]]) -> None:
    base, _ = feed_server
    response = await tenant.call("fetch_trends", {"source": "rss", "url": f"{base}/page"})
    assert response.json()["error"]["error_type"] == "validation_error"


async def test_internal_trends_are_an_honest_empty_list(tenant: Tenant) -> None:
    data = await tenant.data("fetch_trends", {"source": "internal"})
    assert data["trends"] == []
    assert data["count"] == 0


async def test_fetched_items_feed_suggestions_and_context_says_there_is_no_history(
    tenant: Tenant, feed_server: tuple[str, list[str]]
) -> None:
    base, _ = feed_server
    await tenant.data("fetch_trends", {"source": "rss", "url": f"{base}/feed"})
    suggestions = await tenant.data("suggest_next_content", {"count": 3, "platforms": ["linkedin"]})
    assert suggestions["suggestions"][0]["based_on"][0].startswith("swipe_item:")
    assert suggestions["data_quality"] == "weak"
    context = await tenant.data("get_ideation_context", {})
    assert context["hasHistoricalData"] is False
    assert context["recommendedModel"] is None
