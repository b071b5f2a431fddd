"""The `threads` connector against the local Threads API stand-in: connecting through the Threads authorization
window, posts, carousels and reply chains published exactly once, token renewal, replies and insights."""

from __future__ import annotations

import time
import uuid
from collections.abc import AsyncIterator
from datetime import UTC, datetime, timedelta
from pathlib import Path
from urllib.parse import parse_qs, urlsplit

import httpx
import pytest

from tests.conftest import Tenant
from tests.domains.distribution.conftest import drain, local_settings
from tests.domains.distribution.meta_standin import RateLimit, ThreadsStandIn
from tests.domains.distribution.oauth_flows import (
    configured_connector,
    kill_after_accepting,
    store_token_material,
    stored_account,
)
from tests.domains.distribution.standins import serve
from tests.domains.distribution.test_instagram_connector import (
    schedule,
    sign_in,
)
from tests.domains.distribution.test_media_rules import jpeg, mp4, png, stored
from tests.domains.distribution.test_schedule_post import post_row
from toolhost.config import Settings
from toolhost.domains.distribution.models import ConnectedAccount
from toolhost.platform.jobs import WorkerContext
from toolhost.platform.runtime import Platform
from toolhost.providers.connectors.vault import TokenVault

AUTHORIZE = "https://threads.example.test/oauth/authorize"


@pytest.fixture
async def threads_api() -> AsyncIterator[tuple[ThreadsStandIn, str]]:
    stand_in = ThreadsStandIn()
    async with serve(stand_in.app()) as base:
        yield stand_in, base


@pytest.fixture
def settings(request: pytest.FixtureRequest, database_url: str, tmp_path: Path) -> Settings:
    """The Threads app's settings point at the stand-in; containers are asked about without a pause."""
    if "threads_api" not in request.fixturenames:
        return local_settings(database_url, tmp_path / "media")
    stand_in, base = request.getfixturevalue("threads_api")
    return local_settings(
        database_url,
        tmp_path / "media",
        distribution={
            "connectors": {
                "threads_client_id": stand_in.client_id,
                "threads_client_secret": stand_in.client_secret,
                "threads_authorize_url": AUTHORIZE,
                "threads_token_url": f"{base}/oauth/access_token",
                "threads_api_url": f"{base}/v1.0",
                "rate_limit_wait": 0,
                "media_processing_seconds": 0,
            }
        },
    )


async def connect_threads(
    tenant: Tenant, client: httpx.AsyncClient, platform: Platform, stand_in: ThreadsStandIn
) -> ConnectedAccount:
    return await sign_in(
        tenant, client, stand_in, host=platform, product="threads", label="Threads", authorize=AUTHORIZE
    )


@pytest.fixture
def stand_in(threads_api: tuple[ThreadsStandIn, str]) -> ThreadsStandIn:
    return threads_api[0]


@pytest.fixture
async def account(
    tenant: Tenant, client: httpx.AsyncClient, platform: Platform, stand_in: ThreadsStandIn
) -> ConnectedAccount:
    """The brand's Threads account, connected through the connect page before the test begins."""
    return await connect_threads(tenant, client, platform, stand_in)


async def test_the_connect_page_signs_in_to_threads_and_keeps_a_sixty_day_token(
    tenant: Tenant, client: httpx.AsyncClient, platform: Platform, threads_api: tuple[ThreadsStandIn, str]
) -> None:
    stand_in, _ = threads_api
    started = await tenant.data("start_platform_connection", {"platform": "threads"})
    path = str(started["deep_link"]).removeprefix("http://testserver")
    await client.get(path)
    redirect = await client.get(f"{path}/oauth/threads")
    query = {name: values[0] for name, values in parse_qs(urlsplit(redirect.headers["location"]).query).items()}
    assert query["scope"].startswith("threads_basic,threads_content_publish,"), "Threads lists scopes with commas"
    done = await client.get(
        "/app/connect/oauth/callback", params={"code": stand_in.approve(query), "state": query["state"]}
    )
    assert done.status_code == 200 and "@brand" in done.text
    [grant] = stand_in.token_requests
    assert grant["grant_type"] == "authorization_code" and grant["client_secret"] == stand_in.client_secret
    assert stand_in.exchanges == 1
    [listed] = (await tenant.data("list_connected_accounts", {}))["accounts"]
    row = await stored_account(platform, uuid.UUID(listed["id"]))
    material = TokenVault(platform.settings.keyring).open(row.secret)
    assert stand_in.tokens[material["access_token"]]["kind"] == "user"
    assert row.expires_at is not None and row.expires_at > datetime.now(UTC) + timedelta(days=59)
    assert row.settings == {"user_id": stand_in.user_id, "username": "brand"}


async def test_a_chain_is_published_once_each_post_replying_to_the_one_before(
    tenant: Tenant, platform: Platform, worker: WorkerContext, stand_in: ThreadsStandIn, account: ConnectedAccount
) -> None:
    key = await stored(tenant, png(80, 80), "image/png")
    post_id = await schedule(
        tenant,
        {
            "caption": "1/ A thread with a picture 😀",
            "platforms": ["threads"],
            "r2_key": key,
            "platform_metadata": {"threads": {"thread": ["2/ More", "3/ Last"]}},
        },
    )
    await drain(worker)
    post = await post_row(platform, post_id)
    assert post.status == "published", post.error
    first, second, third = sorted(stand_in.own_posts(), key=lambda item: item["created"])
    assert (post.external_post_id, post.external_url) == (first["id"], first["permalink"])
    assert first["media_type"] == "IMAGE" and first["replied_to"] is None
    assert (second["text"], second["replied_to"]) == ("2/ More", first["id"])
    assert (third["text"], third["media_type"], third["replied_to"]) == ("3/ Last", "TEXT", second["id"])
    assert stand_in.publish_requests == 3


async def test_a_carousel_of_an_image_and_a_video_is_one_post(
    tenant: Tenant, platform: Platform, worker: WorkerContext, stand_in: ThreadsStandIn, account: ConnectedAccount
) -> None:
    keys = [await stored(tenant, jpeg(80, 80), "image/jpeg"), await stored(tenant, mp4(36, 64, 2), "video/mp4")]
    post_id = await schedule(tenant, {"caption": "Two things", "platforms": ["threads"], "r2_keys": keys})
    await drain(worker)
    assert (await post_row(platform, post_id)).status == "published"
    [carousel] = stand_in.own_posts()
    assert carousel["media_type"] == "CAROUSEL"
    items = [stand_in.objects[child]["values"] for child in carousel["children"]]
    assert [(item["media_type"], item["is_carousel_item"]) for item in items] == [("IMAGE", "true"), ("VIDEO", "true")]


async def test_a_worker_killed_after_threads_published_a_reply_does_not_post_it_twice(
    tenant: Tenant, platform: Platform, worker: WorkerContext, stand_in: ThreadsStandIn, account: ConnectedAccount
) -> None:
    post_id = await schedule(
        tenant,
        {"caption": "1/ Start", "platforms": ["threads"], "platform_metadata": {"threads": {"thread": ["2/ End"]}}},
    )
    original = stand_in.accept
    published = 0

    async def second_hangs() -> None:
        nonlocal published
        published += 1
        if published == 2:
            await original()

    stand_in.accept = second_hangs  # type: ignore[method-assign]
    await kill_after_accepting(platform, worker, stand_in, post_id)
    stand_in.accept = original  # type: ignore[method-assign]
    await drain(worker)
    post = await post_row(platform, post_id)
    assert post.status == "published", post.error
    first, second = sorted(stand_in.own_posts(), key=lambda item: item["created"])
    assert post.external_post_id == first["id"] and second["replied_to"] == first["id"]
    assert stand_in.publish_requests == 2, "the retry found the reply published and did not publish it again"


async def test_a_video_threads_could_not_process_fails_the_post_with_its_reason(
    tenant: Tenant, platform: Platform, worker: WorkerContext, stand_in: ThreadsStandIn, account: ConnectedAccount
) -> None:
    key = await stored(tenant, mp4(36, 64, 2), "video/mp4")
    post_id = await schedule(tenant, {"caption": "A clip", "platforms": ["threads"], "r2_key": key})
    stand_in.fail_processing = True
    await drain(worker)
    post = await post_row(platform, post_id)
    assert (post.status, post.refunded) == ("failed", True)
    assert post.error == "threads could not process post 1: FAILED_PROCESSING_VIDEO"
    assert stand_in.own_posts() == []


async def test_an_expired_threads_token_marks_the_account_needs_reauth(
    tenant: Tenant, platform: Platform, worker: WorkerContext, stand_in: ThreadsStandIn, account: ConnectedAccount
) -> None:
    post_id = await schedule(tenant, {"caption": "Too late", "platforms": ["threads"]})
    stand_in.expire_everything()
    await drain(worker)
    post = await post_row(platform, post_id)
    assert post.status == "failed" and post.refunded
    assert post.error is not None and post.error.startswith("needs_reauth: threads refused the account's access token")
    assert (await stored_account(platform, account.id)).status == "needs_reauth"


async def test_a_threads_rate_limit_returns_the_post_to_the_schedule(
    tenant: Tenant, platform: Platform, worker: WorkerContext, stand_in: ThreadsStandIn, account: ConnectedAccount
) -> None:
    stand_in.rate_limit = RateLimit(code=613)
    post_id = await schedule(tenant, {"caption": "Slow down", "platforms": ["threads"]})
    await drain(worker)
    post = await post_row(platform, post_id)
    assert post.status == "scheduled" and post.failures == 0 and post.due_at is not None
    assert post.due_at > datetime.now(UTC) + timedelta(seconds=100)
    assert stand_in.own_posts() == []


async def test_a_threads_token_with_less_than_a_month_left_is_refreshed(
    tenant: Tenant, platform: Platform, worker: WorkerContext, stand_in: ThreadsStandIn, account: ConnectedAccount
) -> None:
    vault = TokenVault(platform.settings.keyring)
    material = vault.open(account.secret)
    # Issued 40 days ago, 20 days left: Threads renews tokens at least a day old.
    stand_in.tokens[material["access_token"]]["issued"] = time.time() - 40 * 86400
    soon = datetime.now(UTC) + timedelta(days=20)
    material["expires_at"] = int(soon.timestamp())
    await store_token_material(platform, account.id, material, expires_at=soon)
    post_id = await schedule(tenant, {"caption": "Renewed", "platforms": ["threads"]})
    await drain(worker)
    assert (await post_row(platform, post_id)).status == "published"
    assert stand_in.refreshes == 1
    row = await stored_account(platform, account.id)
    assert row.expires_at is not None and row.expires_at > datetime.now(UTC) + timedelta(days=59)


async def test_insights_and_replies_come_from_threads(
    tenant: Tenant, platform: Platform, worker: WorkerContext, stand_in: ThreadsStandIn, account: ConnectedAccount
) -> None:
    post_id = await schedule(tenant, {"caption": "Talk to me", "platforms": ["threads"]})
    await drain(worker)
    post = await post_row(platform, post_id)
    assert post.external_post_id is not None
    stand_in.add_reply(post.external_post_id, "Hello", username="fan")

    connector, view = configured_connector(platform, "threads", account)
    metrics = await connector.fetch_metrics(view, post.external_post_id)
    assert metrics == {"views": 500, "likes": 30, "comments": 1, "shares": 3, "quotes": 1}
    [reply] = await connector.list_comments(view, post.external_post_id, limit=10)
    assert (reply.text, reply.author, reply.parent_id) == ("Hello", "fan", post.external_post_id)
    answer = await connector.reply_to_comment(view, post.external_post_id, reply.id, "Hi!")
    assert stand_in.objects[answer.id]["replied_to"] == reply.id
    await connector.moderate_comment(view, reply.id, "reject")
    assert stand_in.objects[reply.id]["hidden"] is True
