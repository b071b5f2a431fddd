"""extract_url_content on YouTube URLs and fetch_trends source youtube: the connector for a connected channel."""

from __future__ import annotations

import uuid
from collections.abc import AsyncIterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import pytest
from sqlalchemy import select
from starlette.applications import Starlette
from starlette.requests import Request
from starlette.responses import JSONResponse, PlainTextResponse, Response
from starlette.routing import Route

from tests.conftest import Tenant, TenantFactory, settings_for_test
from tests.domains.distribution.standins import YouTubeStandIn, serve
from toolhost.config import Settings
from toolhost.domains.analytics.models import SwipeItem
from toolhost.domains.distribution import accounts as accounts_service
from toolhost.domains.ideation import url_content
from toolhost.platform.runtime import Platform
from toolhost.providers.fetch import FetchedResponse

OWN_VIDEO = "https://www.youtube.com/watch?v=own1"
OTHER_VIDEO = "https://youtu.be/other1"
CAPTIONS = """WEBVTT
Kind: captions
Language: en

1
00:00:00.000 --> 00:00:03.000
Today we replace the <c>daily standup</c>

00:00:03.000 --> 00:00:06.000
with a written update.
"""


def video(video_id: str, channel_id: str, title: str, views: str) -> dict[str, Any]:
    return {
        "id": video_id,
        "snippet": {
            "title": title,
            "description": f"About {title}",
            "channelId": channel_id,
            "channelTitle": "Alice Channel" if channel_id == "UC123" else "Someone Else",
            "tags": ["async", "meetings"],
            "publishedAt": "2026-10-01T12:00:00Z",
        },
        "statistics": {"viewCount": views, "likeCount": "31", "commentCount": "4"},
        "contentDetails": {"duration": "PT4M13S"},
    }


@dataclass
class YouTubeReadStandIn(YouTubeStandIn):
    """The upload stand-in plus the Data API's read side: videos, channels, playlists, captions."""

    catalogue: dict[str, dict[str, Any]] = field(
        default_factory=lambda: {
            "own1": video("own1", "UC123", "Async standups in practice", "1200"),
            "own2": video("own2", "UC123", "Writing a weekly update", "640"),
            "other1": video("other1", "UC999", "Someone else's video", "99"),
        }
    )
    caption_downloads: list[str] = field(default_factory=list)
    searches: list[str] = field(default_factory=list)

    async def statistics(self, request: Request) -> Response:
        if not self._authorized(request):
            return JSONResponse({"error": "unauthorized"}, status_code=401)
        if request.query_params.get("chart") == "mostPopular":
            return JSONResponse({"items": [self.catalogue["other1"], self.catalogue["own1"]]})
        ids = request.query_params.get("id", "").split(",")
        return JSONResponse({"items": [self.catalogue[item] for item in ids if item in self.catalogue]})

    async def channels(self, request: Request) -> Response:
        if request.query_params.get("mine") == "true":
            return await super().channels(request)
        if not self._authorized(request):
            return JSONResponse({"error": "unauthorized"}, status_code=401)
        if request.query_params.get("forHandle") != "@alice":
            return JSONResponse({"items": []})
        return JSONResponse(
            {
                "items": [
                    {
                        "id": "UC123",
                        "snippet": {"title": "Alice Channel", "description": "Calmer meetings."},
                        "contentDetails": {"relatedPlaylists": {"uploads": "UU123"}},
                    }
                ]
            }
        )

    async def playlist_items(self, request: Request) -> Response:
        if not self._authorized(request) or request.query_params.get("playlistId") != "UU123":
            return JSONResponse({"error": "forbidden"}, status_code=403)
        uploads = [{"contentDetails": {"videoId": "own2"}}, {"contentDetails": {"videoId": "own1"}}]
        return JSONResponse({"items": uploads})

    async def search(self, request: Request) -> Response:
        if not self._authorized(request):
            return JSONResponse({"error": "unauthorized"}, status_code=401)
        self.searches.append(request.query_params.get("q", ""))
        ranked = ["own1", "own2"] if request.query_params.get("order") == "viewCount" else ["own2", "own1"]
        return JSONResponse({"items": [{"id": {"kind": "youtube#video", "videoId": name}} for name in ranked]})

    async def captions(self, request: Request) -> Response:
        if not self._authorized(request):
            return JSONResponse({"error": "unauthorized"}, status_code=401)
        if not request.query_params.get("videoId", "").startswith("own"):
            return JSONResponse({"error": "forbidden"}, status_code=403)  # only the owner may list captions
        return JSONResponse(
            {
                "items": [
                    {"id": "asr-1", "snippet": {"language": "en", "trackKind": "asr"}},
                    {"id": "track-1", "snippet": {"language": "en", "trackKind": "standard"}},
                ]
            }
        )

    async def caption(self, request: Request) -> Response:
        if not self._authorized(request):
            return JSONResponse({"error": "unauthorized"}, status_code=401)
        self.caption_downloads.append(request.path_params["id"])
        return PlainTextResponse(CAPTIONS, media_type="text/vtt")

    def app(self) -> Starlette:
        application = super().app()
        application.router.routes[0:0] = [
            Route("/youtube/v3/playlistItems", self.playlist_items),
            Route("/youtube/v3/search", self.search),
            Route("/youtube/v3/captions", self.captions),
            Route("/youtube/v3/captions/{id}", self.caption),
        ]
        return application


@pytest.fixture
async def stand_in() -> AsyncIterator[tuple[YouTubeReadStandIn, str]]:
    youtube = YouTubeReadStandIn()
    async with serve(youtube.app()) as base:
        youtube.base_url = base
        yield youtube, base


@pytest.fixture
def settings(database_url: str, tmp_path: Path, stand_in: tuple[YouTubeReadStandIn, str]) -> Settings:
    youtube, base = stand_in
    return settings_for_test(
        database_url=database_url,
        media={"root": str(tmp_path / "media")},
        fetch={"allow": ["127.0.0.1"], "allow_http": True},
        distribution={
            "connectors": {
                "youtube_client_id": youtube.client_id,
                "youtube_client_secret": youtube.client_secret,
                "youtube_token_url": f"{base}/token",
                "youtube_api_url": f"{base}/youtube/v3",
                "youtube_upload_url": f"{base}/upload/youtube/v3",
            }
        },
    )


async def connect_channel(platform: Platform, project_id: uuid.UUID, refresh_token: str) -> None:
    async with platform.session_factory() as session, session.begin():
        await accounts_service.create(
            session=session,
            settings=platform.settings,
            project_id=project_id,
            platform="youtube",
            connector_name="youtube",
            fields={"refresh_token": refresh_token},
        )


async def test_a_connected_channels_video_comes_with_its_statistics_and_captions(
    tenant: Tenant, platform: Platform, stand_in: tuple[YouTubeReadStandIn, str]
) -> None:
    youtube, _ = stand_in
    await connect_channel(platform, tenant.project_id, youtube.refresh_token)
    data = await tenant.data("extract_url_content", {"url": OWN_VIDEO, "response_format": "json"})
    assert data["source_type"] == "youtube_video"
    assert data["title"] == "Async standups in practice"
    assert data["video_metadata"] == {
        "views": 1200,
        "likes": 31,
        "duration": "PT4M13S",
        "tags": ["async", "meetings"],
        "channel_name": "Alice Channel",
    }
    assert data["transcript"] == "Today we replace the daily standup with a written update."
    assert youtube.caption_downloads == ["track-1"]  # the person-made track before the automatic one
    assert len(data["suggested_hooks"]) == 3
    only = await tenant.data("extract_url_content", {"url": OWN_VIDEO, "extract_type": "transcript"})
    assert only["transcript"].startswith("Today we replace")
    async with platform.session_factory() as session:
        recorded = await session.scalar(select(SwipeItem).where(SwipeItem.account_id == tenant.account_id))
    assert recorded is not None
    assert (recorded.title, recorded.views) == ("Async standups in practice", 1200)


async def test_another_channels_video_has_metadata_but_no_transcript(
    tenant: Tenant, platform: Platform, stand_in: tuple[YouTubeReadStandIn, str]
) -> None:
    youtube, _ = stand_in
    await connect_channel(platform, tenant.project_id, youtube.refresh_token)
    data = await tenant.data("extract_url_content", {"url": OTHER_VIDEO, "response_format": "json"})
    assert data["video_metadata"]["views"] == 99
    assert data["video_metadata"]["channel_name"] == "Someone Else"
    assert data["transcript"] is None
    response = await tenant.call("extract_url_content", {"url": OTHER_VIDEO, "extract_type": "transcript"})
    error = response.json()["structuredContent"]["error"]
    assert error["error_type"] == "not_found"
    assert "connected channel" in error["message"]
    assert youtube.caption_downloads == []


async def test_a_channel_url_lists_its_recent_videos_with_views(
    tenant: Tenant, platform: Platform, stand_in: tuple[YouTubeReadStandIn, str]
) -> None:
    youtube, _ = stand_in
    await connect_channel(platform, tenant.project_id, youtube.refresh_token)
    data = await tenant.data(
        "extract_url_content", {"url": "https://www.youtube.com/@alice", "response_format": "json"}
    )
    assert data["source_type"] == "youtube_channel"
    assert (data["title"], data["description"]) == ("Alice Channel", "Calmer meetings.")
    assert data["recent_videos"] == [
        {
            "title": "Writing a weekly update",
            "url": "https://www.youtube.com/watch?v=own2",
            "published_at": "2026-10-01T12:00:00Z",
            "views": 640,
        },
        {
            "title": "Async standups in practice",
            "url": "https://www.youtube.com/watch?v=own1",
            "published_at": "2026-10-01T12:00:00Z",
            "views": 1200,
        },
    ]


async def test_without_a_connected_channel_a_transcript_is_not_found_even_for_another_tenants_video(
    tenant: Tenant, make_tenant: TenantFactory, platform: Platform, stand_in: tuple[YouTubeReadStandIn, str]
) -> None:
    youtube, _ = stand_in
    await connect_channel(platform, tenant.project_id, youtube.refresh_token)
    stranger = await make_tenant()
    response = await stranger.call("extract_url_content", {"url": OWN_VIDEO, "extract_type": "transcript"})
    assert response.json()["structuredContent"]["error"]["error_type"] == "not_found"
    assert youtube.caption_downloads == []


async def test_youtube_trends_come_through_the_connected_channel_and_feed_the_swipe_file(
    tenant: Tenant, platform: Platform, stand_in: tuple[YouTubeReadStandIn, str]
) -> None:
    youtube, _ = stand_in
    refused = await tenant.call("fetch_trends", {"source": "youtube", "niche": "standups"})
    assert refused.json()["structuredContent"]["error"]["error_type"] == "validation_error"
    assert "connect a YouTube account" in refused.json()["structuredContent"]["error"]["message"]

    await connect_channel(platform, tenant.project_id, youtube.refresh_token)
    data = await tenant.data("fetch_trends", {"source": "youtube", "niche": "standups", "category": "work"})
    assert [(trend["title"], trend["views"]) for trend in data["trends"]] == [
        ("Async standups in practice", 1200),
        ("Writing a weekly update", 640),
    ]
    assert data["trends"][0]["url"] == "https://www.youtube.com/watch?v=own1"
    assert (data["trends"][0]["source"], data["trends"][0]["category"]) == ("youtube", "work")
    assert youtube.searches == ["standups"]
    again = await tenant.data("fetch_trends", {"source": "youtube", "niche": "standups", "category": "work"})
    assert again["cached"] is True
    assert youtube.searches == ["standups"]
    chart = await tenant.data("fetch_trends", {"source": "youtube"})
    assert [trend["title"] for trend in chart["trends"]] == ["Someone else's video", "Async standups in practice"]
    async with platform.session_factory() as session:
        views = {title: count for title, count in await session.execute(select(SwipeItem.title, SwipeItem.views))}
    assert views["Writing a weekly update"] == 640


class PageFetcher:
    """Answers every GET with one stored YouTube watch page (youtube.com is not reachable in tests)."""

    def __init__(self, page: str) -> None:
        self.page = page
        self.urls: list[str] = []

    async def get(self, url: str) -> FetchedResponse:
        self.urls.append(url)
        return FetchedResponse(url, 200, {"content-type": "text/html; charset=utf-8"}, self.page.encode())


async def test_without_the_connector_a_video_is_read_from_its_pages_own_metadata() -> None:
    page = """<html><head><title>Async standups - YouTube</title>
    <meta property="og:title" content="Async standups in practice">
    <meta property="og:description" content="How we replaced the daily standup.">
    <meta name="keywords" content="async, meetings">
    <meta itemprop="interactionCount" content="1200"><meta itemprop="duration" content="PT4M13S">
    <span itemprop="author"><link itemprop="name" content="Alice Channel"></span>
    </head><body></body></html>"""
    fetcher = PageFetcher(page)
    data = await url_content.extract(fetcher, OWN_VIDEO, "auto", None)  # type: ignore[arg-type]
    assert fetcher.urls == [OWN_VIDEO]
    assert data["title"] == "Async standups in practice"
    assert data["video_metadata"] == {
        "views": 1200,
        "likes": None,
        "duration": "PT4M13S",
        "tags": ["async", "meetings"],
        "channel_name": "Alice Channel",
    }
    assert "transcript" not in data
