"""The `tiktok` connector against the local TikTok stand-in: connecting through the connect page (Login Kit for
Web: client_key, comma-separated scopes, a checked state), publishing a video exactly once through the Content
Posting API, and each documented error case."""

from __future__ import annotations

from collections.abc import AsyncIterator
from datetime import UTC, datetime
from pathlib import Path
from typing import Any
from urllib.parse import parse_qs, urlsplit

import httpx
import pytest

from tests.conftest import Tenant
from tests.domains.distribution.conftest import drain, local_settings
from tests.domains.distribution.oauth_flows import (
    kill_after_accepting,
    listed_account,
    sign_in_through_connect_page,
    stored_account,
)
from tests.domains.distribution.standins import serve
from tests.domains.distribution.test_media_rules import mp4, refused, stored
from tests.domains.distribution.test_schedule_post import post_row
from tests.domains.distribution.tiktok_standin import TikTokStandIn
from toolhost.config import Settings
from toolhost.domains.distribution.models import ConnectedAccount
from toolhost.platform.jobs import WorkerContext
from toolhost.platform.runtime import Platform

AUTHORIZE = "https://tiktok.example.test/v2/auth/authorize/"


@pytest.fixture
async def tiktok() -> AsyncIterator[TikTokStandIn]:
    stand_in = TikTokStandIn()
    async with serve(stand_in.app()) as base:
        stand_in.base = base
        yield stand_in


@pytest.fixture
def settings(request: pytest.FixtureRequest, database_url: str, tmp_path: Path) -> Settings:
    if "tiktok" not in request.fixturenames:
        return local_settings(database_url, tmp_path / "media")
    stand_in: TikTokStandIn = request.getfixturevalue("tiktok")
    return local_settings(
        database_url,
        tmp_path / "media",
        distribution={
            "connectors": {
                "tiktok_client_key": stand_in.client_key,
                "tiktok_client_secret": stand_in.client_secret,
                "tiktok_authorize_url": AUTHORIZE,
                "tiktok_token_url": f"{stand_in.base}/v2/oauth/token/",
                "tiktok_api_url": stand_in.base,
                "rate_limit_wait": 0,
            }
        },
    )


@pytest.fixture(scope="module")
def clip() -> bytes:
    """A video TikTok takes: at least 360 px a side, a few seconds long."""
    return mp4(360, 640, 4)


async def sign_in(tenant: Tenant, client: httpx.AsyncClient, stand_in: TikTokStandIn) -> ConnectedAccount:
    [listed] = await sign_in_through_connect_page(
        tenant, client, stand_in, platform="tiktok", connector="tiktok", label="TikTok", authorize=AUTHORIZE
    )
    return listed_account(listed)


@pytest.fixture
async def account(
    tenant: Tenant, client: httpx.AsyncClient, platform: Platform, tiktok: TikTokStandIn
) -> ConnectedAccount:
    """The brand's TikTok account, connected through the connect page before the test begins."""
    return await sign_in(tenant, client, tiktok)


async def schedule(tenant: Tenant, video: bytes, options: dict[str, Any] | None = None) -> str:
    key = await stored(tenant, video, "video/mp4")
    tiktok = {"privacy_status": "PUBLIC_TO_EVERYONE", **(options or {})}
    data = await tenant.data(
        "schedule_post",
        {
            "caption": "A clip #demo #tiktok #video",
            "platforms": ["tiktok"],
            "r2_key": key,
            "platform_metadata": {"tiktok": tiktok},
        },
    )
    return str(data["results"]["TikTok"]["postId"])


async def test_the_connect_page_signs_in_to_tiktok_with_its_client_key_and_comma_separated_scopes(
    tenant: Tenant, client: httpx.AsyncClient, platform: Platform, tiktok: TikTokStandIn
) -> None:
    started = await tenant.data("start_platform_connection", {"platform": "tiktok"})
    path = str(started["deep_link"]).removeprefix("http://testserver")
    await client.get(path)
    redirect = await client.get(f"{path}/oauth/tiktok")
    query = {name: values[0] for name, values in parse_qs(urlsplit(redirect.headers["location"]).query).items()}
    assert query["scope"] == "user.info.basic,video.publish,video.upload"
    assert "client_id" not in query and query["client_key"] == tiktok.client_key
    code = tiktok.approve(query)
    forged = await client.get("/app/connect/oauth/callback", params={"code": code, "state": "forged"})
    assert forged.status_code == 400 and tiktok.token_requests == []
    done = await client.get("/app/connect/oauth/callback", params={"code": code, "state": query["state"]})
    assert done.status_code == 200, done.text
    assert "Alice Clips" in done.text
    [grant] = tiktok.token_requests
    assert (grant["client_key"], grant["client_secret"]) == (tiktok.client_key, tiktok.client_secret)
    [listed] = (await tenant.data("list_connected_accounts", {}))["accounts"]
    assert (listed["connector"], listed["status"]) == ("tiktok", "active")


async def test_a_video_is_posted_once_directly_after_tiktok_processed_it(
    tenant: Tenant,
    platform: Platform,
    worker: WorkerContext,
    tiktok: TikTokStandIn,
    clip: bytes,
    account: ConnectedAccount,
) -> None:
    post_id = await schedule(tenant, clip, {"enable_duet": False})
    await drain(worker)
    post = await post_row(platform, post_id)
    assert post.status == "published", post.error
    [published] = tiktok.posts
    assert post.external_post_id == published["id"]
    [publication] = tiktok.publications.values()
    assert publication["data"] == clip
    assert publication["post_info"]["privacy_level"] == "PUBLIC_TO_EVERYONE"
    assert publication["post_info"]["disable_duet"] is True
    assert publication["post_info"]["title"] == "A clip #demo #tiktok #video"


async def test_a_worker_killed_after_tiktok_accepted_the_video_does_not_post_it_twice(
    tenant: Tenant,
    platform: Platform,
    worker: WorkerContext,
    tiktok: TikTokStandIn,
    clip: bytes,
    account: ConnectedAccount,
) -> None:
    post_id = await schedule(tenant, clip)
    # The worker dies: TikTok has the whole video, toolhost never heard back
    await kill_after_accepting(platform, worker, tiktok, post_id)
    await drain(worker)
    post = await post_row(platform, post_id)
    assert post.status == "published", post.error
    assert tiktok.init_requests == 1, "the retry resumed the saved publish_id instead of starting another"
    [published] = tiktok.posts
    assert post.external_post_id == published["id"]


async def test_a_video_tiktok_cannot_process_fails_the_post_with_its_reason_and_refunds_it(
    tenant: Tenant,
    platform: Platform,
    worker: WorkerContext,
    tiktok: TikTokStandIn,
    clip: bytes,
    account: ConnectedAccount,
) -> None:
    tiktok.fail_processing = "frame_rate_check_failed"
    post_id = await schedule(tenant, clip)
    await drain(worker)
    post = await post_row(platform, post_id)
    assert (post.status, post.refunded) == ("failed", True)
    assert post.error == "tiktok could not publish the video: frame_rate_check_failed"
    assert tiktok.posts == []


async def test_tiktok_s_daily_post_cap_fails_the_post_with_tiktok_s_reason(
    tenant: Tenant,
    platform: Platform,
    worker: WorkerContext,
    tiktok: TikTokStandIn,
    clip: bytes,
    account: ConnectedAccount,
) -> None:
    tiktok.too_many_posts = True
    post_id = await schedule(tenant, clip)
    await drain(worker)
    post = await post_row(platform, post_id)
    assert (post.status, post.refunded) == ("failed", True)
    assert post.error is not None and "spam_risk_too_many_posts" in post.error
    assert (await stored_account(platform, account.id)).status == "active"


async def test_a_revoked_token_marks_the_tiktok_account_needs_reauth_and_refunds_the_post(
    tenant: Tenant,
    platform: Platform,
    worker: WorkerContext,
    tiktok: TikTokStandIn,
    clip: bytes,
    account: ConnectedAccount,
) -> None:
    post_id = await schedule(tenant, clip)
    tiktok.revoke_everything()
    await drain(worker)
    post = await post_row(platform, post_id)
    assert post.status == "failed" and post.refunded
    assert post.error is not None and post.error.startswith("needs_reauth: ")
    assert (await stored_account(platform, account.id)).status == "needs_reauth"


async def test_a_rate_limited_tiktok_post_returns_to_the_schedule_without_using_a_retry(
    tenant: Tenant,
    platform: Platform,
    worker: WorkerContext,
    tiktok: TikTokStandIn,
    clip: bytes,
    account: ConnectedAccount,
) -> None:
    tiktok.rate_limited = True
    post_id = await schedule(tenant, clip)
    await drain(worker)
    post = await post_row(platform, post_id)
    assert (post.status, post.failures) == ("scheduled", 0)
    assert post.due_at is not None and post.due_at > datetime.now(UTC)
    assert tiktok.posts == []


async def test_tiktok_media_rules_refuse_a_video_below_360_pixels_before_any_credit_is_spent(
    tenant: Tenant, platform: Platform, tiktok: TikTokStandIn, account: ConnectedAccount
) -> None:
    key = await stored(tenant, mp4(64, 36, 4), "video/mp4")
    arguments = {
        "caption": "#a #b #c clip",
        "platforms": ["tiktok"],
        "r2_key": key,
        "platform_metadata": {"tiktok": {"privacy_status": "SELF_ONLY"}},
    }
    error = await refused(tenant, platform, arguments)
    assert error["rule"] == "tiktok.video.min_side"
