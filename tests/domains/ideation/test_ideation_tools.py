"""fetch_trends through the SSRF-safe fetcher against a local feed, and the ideation tools fed by measured posts."""

from __future__ import annotations

from collections.abc import Iterator
from datetime import datetime, timedelta
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path

import httpx
import pytest

from tests.conftest import Tenant, settings_for_test
from tests.domains.analytics.conftest import Channel, now, open_channel
from tests.local_http import serving
from toolhost.config import Settings
from toolhost.domains.distribution.models import Post
from toolhost.platform.runtime import Platform

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
    with serving(server):
        yield f"http://127.0.0.1:{server.server_address[1]}", hits


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


async def test_without_measured_posts_internal_trends_are_empty_and_context_says_so(tenant: Tenant) -> None:
    data = await tenant.data("fetch_trends", {"source": "internal"})
    assert (data["trends"], data["count"]) == ([], 0)
    context = await tenant.data("get_ideation_context", {})
    assert context["hasHistoricalData"] is False
    assert (context["topHooks"], context["recommendedPostingTime"]) == ([], None)


def _last(weekday: int, hour: int, weeks_back: int = 0) -> datetime:
    """The latest past moment on `weekday` (0 = Monday) at `hour` UTC, `weeks_back` weeks earlier."""
    today = now().replace(minute=0, second=0, microsecond=0)
    moment = today.replace(hour=hour) - timedelta(days=(today.weekday() - weekday) % 7)
    if moment >= today:
        moment -= timedelta(days=7)
    return moment - timedelta(weeks=weeks_back)


async def _history(platform: Platform, client: httpx.AsyncClient, tenant: Tenant) -> dict[str, Post]:
    """Six published posts with metrics: two strong Tuesday-morning questions, middling and weak others."""
    channel: Channel = await open_channel(platform, client, tenant.project_id, tenant.account_id)
    posts = {
        "best": await channel.published(
            at=_last(1, 9), caption="Why does a slow roast taste sweeter? Our roaster explains. Comment below."
        ),
        "second": await channel.published(
            at=_last(1, 9, weeks_back=1), caption="Why we roast every batch slow? The sweeter cup is the reason."
        ),
        "middle": await channel.published(at=_last(3, 15), caption="New bags arrive on Friday."),
        "fourth": await channel.published(at=_last(4, 12), caption="Our shop opens at eight."),
        "fifth": await channel.published(at=_last(5, 18, weeks_back=1), caption="Photos from the market stall."),
        "worst": await channel.published(at=_last(6, 20, weeks_back=2), caption="Buy our discount bundle today!"),
    }
    counts = {
        "best": (1000, 120),
        "second": (900, 90),
        "middle": (800, 30),
        "fourth": (700, 20),
        "fifth": (600, 12),
        "worst": (5000, 2),
    }
    for name, (views, likes) in counts.items():
        await channel.push(posts[name], views=views, likes=likes, comments=0, shares=0)
    return posts


async def test_internal_trends_list_the_projects_best_posts_with_their_views(
    tenant: Tenant, client: httpx.AsyncClient, platform: Platform
) -> None:
    posts = await _history(platform, client, tenant)
    data = await tenant.data("fetch_trends", {"source": "internal", "category": "coffee"})
    assert data["count"] == 5
    assert data["trends"][0]["title"] == "Why does a slow roast taste sweeter?"
    assert (data["trends"][0]["views"], data["trends"][0]["source"]) == (1000, "internal")
    assert "120 engagements on 1,000 views" in data["trends"][0]["description"]
    published = posts["best"].published_at
    assert published is not None
    assert data["trends"][0]["publishedAt"].startswith(published.date().isoformat())
    assert [trend["views"] for trend in data["trends"]] == [1000, 900, 800, 700, 600]


async def test_ideation_context_is_computed_from_the_measured_posts_of_the_window(
    tenant: Tenant, client: httpx.AsyncClient, platform: Platform
) -> None:
    await _history(platform, client, tenant)
    context = await tenant.data("get_ideation_context", {"days": 30, "response_format": "json"})
    assert context["hasHistoricalData"] is True
    assert context["topHooks"][:2] == [
        "Why does a slow roast taste sweeter?",
        "Why we roast every batch slow?",
    ]
    assert context["recommendedPostingTime"]["dayOfWeek"] == "tue"
    assert context["recommendedPostingTime"]["hourOfDay"] == 9
    assert context["winningPatterns"]["hookTypes"] == ["curiosity"]
    assert context["winningPatterns"]["ctaStyles"] == ["comment"]
    assert "roast" in context["topTopics"]
    assert context["underperformed"] == ["Buy our discount bundle today!"]
    assert '"Why does a slow roast taste sweeter?" (120 engagements)' in context["promptInjection"]
    assert "avoid repeating" in context["promptInjection"]
    assert context["insightsCount"] >= 2

    text = (await tenant.call("get_ideation_context", {})).json()["content"][0]["text"]
    assert "Why does a slow roast taste sweeter?" in text
    short = await tenant.data("get_ideation_context", {"days": 1})
    assert short["hasHistoricalData"] is False


async def test_suggestions_and_plans_use_the_openings_that_worked(
    tenant: Tenant, client: httpx.AsyncClient, platform: Platform
) -> None:
    posts = await _history(platform, client, tenant)
    suggestions = await tenant.data("suggest_next_content", {"count": 3, "response_format": "json"})
    assert suggestions["data_quality"] == "moderate"
    assert suggestions["last_analysis_at"] is not None
    first = suggestions["suggestions"][0]
    assert first["suggested_hook"] == "Why does a slow roast taste sweeter?"
    assert first["platform"] == "twitter"
    assert f"post:{posts['best'].id}" in first["based_on"]
    assert first["based_on"][0].startswith("insight:")

    plan = await tenant.data(
        "plan_content_week", {"topic": "Slow roasting", "platforms": ["twitter"], "days": 1, "start_date": "2030-01-07"}
    )
    applied = plan["insights_applied"]
    assert applied["has_historical_data"] is True
    assert applied["top_hooks"][0] == "Why does a slow roast taste sweeter?"
    assert applied["optimal_timing"]["dayOfWeek"] == "tue"
    assert applied["winning_patterns"]["hookTypes"] == ["curiosity"]
    assert "Why does a slow roast taste sweeter?" in plan["context_used"]["ideation_context"]
    # the first post opens with the hook that worked, and its hook is that opening alone
    first_post = plan["posts"][0]
    assert first_post["hook"] == "Why does a slow roast taste sweeter?"
    assert first_post["caption"].startswith(first_post["hook"])


async def test_fetched_items_feed_suggestions_when_nothing_is_measured(
    tenant: Tenant, feed_server: tuple[str, list[str]]
) -> None:
    base, _ = feed_server
    await tenant.data("fetch_trends", {"source": "rss", "url": f"{base}/feed"})
    suggestions = await tenant.data("suggest_next_content", {"count": 3, "platforms": ["linkedin"]})
    assert suggestions["suggestions"][0]["based_on"][0].startswith("swipe_item:")
    assert suggestions["data_quality"] == "weak"
