"""fetch_youtube_analytics against a stand-in of the YouTube Analytics and Data APIs on 127.0.0.1."""

from __future__ import annotations

from collections.abc import AsyncIterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import pytest
from starlette.applications import Starlette
from starlette.requests import Request
from starlette.responses import JSONResponse, Response
from starlette.routing import Route

from tests.conftest import Tenant, TenantFactory, settings_for_test
from tests.domains.distribution.standins import serve
from toolhost.config import Settings
from toolhost.domains.distribution import accounts as accounts_service
from toolhost.platform.runtime import Platform
from toolhost.providers.connectors.base import ConnectResult

TOKEN = "yt-analytics-token"


@dataclass
class AnalyticsStandIn:
    """The reports endpoint: answers by the requested dimensions; records every query."""

    queries: list[dict[str, str]] = field(default_factory=list)

    async def reports(self, request: Request) -> Response:
        if request.headers.get("authorization") != f"Bearer {TOKEN}":
            return JSONResponse({"error": "unauthorized"}, status_code=401)
        query = dict(request.query_params)
        self.queries.append(query)
        names = query["metrics"].split(",")
        dimension = query.get("dimensions")
        headers = ([{"name": dimension}] if dimension else []) + [{"name": name} for name in names]
        if dimension == "day":
            rows: list[list[Any]] = [["2026-01-01", *range(1, len(names) + 1)], ["2026-01-02", *([0] * len(names))]]
        elif dimension == "video":
            rows = [["vid-a", 900, 45.5, 30, 4], ["vid-b", 100, 3.0, 2, 0]]
        else:
            rows = [[index * 10 for index in range(1, len(names) + 1)]]
        return JSONResponse({"columnHeaders": headers, "rows": rows})

    async def videos(self, request: Request) -> Response:
        ids = request.query_params["id"].split(",")
        return JSONResponse(
            {
                "items": [
                    {
                        "id": video,
                        "snippet": {
                            "title": f"Title {video}",
                            "thumbnails": {"default": {"url": f"https://i/{video}.jpg"}},
                        },
                    }
                    for video in ids
                ]
            }
        )

    def app(self) -> Starlette:
        return Starlette(routes=[Route("/v2/reports", self.reports), Route("/youtube/v3/videos", self.videos)])


@pytest.fixture
async def analytics_api() -> AsyncIterator[tuple[AnalyticsStandIn, str]]:
    stand_in = AnalyticsStandIn()
    async with serve(stand_in.app()) as base:
        yield stand_in, base


@pytest.fixture
def settings(database_url: str, tmp_path: Path, analytics_api: tuple[AnalyticsStandIn, str]) -> Settings:
    _, base = analytics_api
    return settings_for_test(
        database_url=database_url,
        media={"root": str(tmp_path / "media")},
        fetch={"allow": ["127.0.0.1"], "allow_http": True},
        distribution={
            "connectors": {
                "youtube_client_id": "client-1",
                "youtube_client_secret": "secret-1",
                "youtube_token_url": f"{base}/token",
                "youtube_api_url": f"{base}/youtube/v3",
                "youtube_analytics_url": f"{base}/v2",
            }
        },
    )


async def connect_channel(platform: Platform, tenant: Tenant, username: str = "my-channel") -> str:
    async with platform.session_factory() as session, session.begin():
        account = await accounts_service.store(
            session=session,
            settings=platform.settings,
            project_id=tenant.project_id,
            platform="youtube",
            connector_name="youtube",
            result=ConnectResult(
                username=username, settings={}, secrets={"access_token": TOKEN, "refresh_token": "refresh"}
            ),
        )
    return str(account.id)


async def test_youtube_analytics_reports_channel_daily_video_and_top_videos(
    tenant: Tenant, platform: Platform, analytics_api: tuple[AnalyticsStandIn, str]
) -> None:
    stand_in, _ = analytics_api
    await connect_channel(platform, tenant)
    dates = {"start_date": "2026-01-01", "end_date": "2026-01-31"}

    channel = await tenant.data("fetch_youtube_analytics", {"action": "channel", **dates})
    assert channel["analytics"] == {
        "views": 10,
        "watchTimeMinutes": 20.0,
        "subscribersGained": 30,
        "subscribersLost": 40,
        "likes": 50,
        "dislikes": 60,
        "comments": 70,
        "shares": 80,
    }
    assert stand_in.queries[-1]["ids"] == "channel==MINE"
    assert (stand_in.queries[-1]["startDate"], stand_in.queries[-1]["endDate"]) == ("2026-01-01", "2026-01-31")

    daily = await tenant.data("fetch_youtube_analytics", {"action": "daily", **dates})
    assert [row["date"] for row in daily["dailyAnalytics"]] == ["2026-01-01", "2026-01-02"]
    assert daily["dailyAnalytics"][0]["views"] == 1

    video = await tenant.data("fetch_youtube_analytics", {"action": "video", "video_id": "vid-a", **dates})
    assert stand_in.queries[-1]["filters"] == "video==vid-a"
    assert (video["videoId"], video["averageViewDuration"]) == ("vid-a", 90.0)

    top = await tenant.data("fetch_youtube_analytics", {"action": "topVideos", "max_results": 2, **dates})
    assert stand_in.queries[-1]["maxResults"] == "2"
    assert top["topVideos"][0] == {
        "videoId": "vid-a",
        "title": "Title vid-a",
        "thumbnail": "https://i/vid-a.jpg",
        "views": 900,
        "watchTimeMinutes": 45.5,
        "likes": 30,
        "comments": 4,
    }


async def test_youtube_analytics_routes_to_one_account_of_the_project(
    tenant: Tenant, make_tenant: TenantFactory, platform: Platform
) -> None:
    dates = {"action": "channel", "start_date": "2026-01-01", "end_date": "2026-01-02"}
    none = await tenant.call("fetch_youtube_analytics", dates)
    assert none.json()["error"]["error_type"] == "validation_error"
    assert "start_platform_connection" in none.json()["error"]["recover_with"]

    first = await connect_channel(platform, tenant, "first")
    await connect_channel(platform, tenant, "second")
    several = await tenant.call("fetch_youtube_analytics", dates)
    assert len(several.json()["error"]["candidates"]) == 2
    chosen = await tenant.call("fetch_youtube_analytics", {**dates, "connected_account_id": first})
    assert not chosen.json()["isError"]

    stranger = await make_tenant()
    foreign = await stranger.call("fetch_youtube_analytics", {**dates, "connected_account_id": first})
    assert foreign.json()["error"]["error_type"] == "validation_error"
    missing_video = await tenant.call("fetch_youtube_analytics", {**dates, "action": "video"})
    assert missing_video.status_code == 400
