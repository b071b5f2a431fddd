"""The `facebook` connector against the local Graph API stand-in: a Page connected through Facebook Login, text,
photo, multi-photo and video posts published exactly once, Page comments and counters."""

from __future__ import annotations

from collections.abc import AsyncIterator
from datetime import UTC, datetime, timedelta
from pathlib import Path

import httpx
import pytest

from tests.conftest import Tenant
from tests.domains.distribution.conftest import drain, local_settings
from tests.domains.distribution.meta_standin import GraphStandIn, RateLimit
from tests.domains.distribution.oauth_flows import configured_connector, kill_after_accepting, stored_account
from tests.domains.distribution.standins import serve
from tests.domains.distribution.test_instagram_connector import (
    AUTHORIZE,
    graph_settings,
    schedule,
    sign_in,
)
from tests.domains.distribution.test_media_rules import jpeg, mp4, stored
from tests.domains.distribution.test_schedule_post import balance, post_row
from toolhost.config import Settings
from toolhost.domains.distribution.models import ConnectedAccount
from toolhost.platform.jobs import WorkerContext
from toolhost.platform.runtime import Platform
from toolhost.providers.connectors.vault import TokenVault


@pytest.fixture
async def graph() -> AsyncIterator[tuple[GraphStandIn, str]]:
    stand_in = GraphStandIn()
    async with serve(stand_in.app()) as base:
        yield stand_in, base


@pytest.fixture
def settings(request: pytest.FixtureRequest, database_url: str, tmp_path: Path) -> Settings:
    if "graph" not in request.fixturenames:
        return local_settings(database_url, tmp_path / "media")
    stand_in, base = request.getfixturevalue("graph")
    return graph_settings(database_url, tmp_path / "media", stand_in, base)


async def connect_page(
    tenant: Tenant, client: httpx.AsyncClient, platform: Platform, stand_in: GraphStandIn
) -> ConnectedAccount:
    return await sign_in(
        tenant, client, stand_in, host=platform, product="facebook", label="Facebook", authorize=AUTHORIZE
    )


@pytest.fixture
def stand_in(graph: tuple[GraphStandIn, str]) -> GraphStandIn:
    return graph[0]


@pytest.fixture
async def account(
    tenant: Tenant, client: httpx.AsyncClient, platform: Platform, stand_in: GraphStandIn
) -> ConnectedAccount:
    """The brand's Facebook Page, connected through the connect page before the test begins."""
    return await connect_page(tenant, client, platform, stand_in)


async def test_a_page_connects_with_a_page_token_that_does_not_expire(
    tenant: Tenant, platform: Platform, stand_in: GraphStandIn, account: ConnectedAccount
) -> None:
    assert (account.connector, account.username, account.status) == ("facebook", "Brand Page", "active")
    assert account.expires_at is None, "a Page token from a long-lived user token does not expire"
    material = TokenVault(platform.settings.keyring).open(account.secret)
    assert set(material) == {"access_token"}, "only the Page token is kept"
    assert stand_in.tokens[material["access_token"]]["kind"] == "page"
    assert account.settings == {"page_id": stand_in.page_id, "name": "Brand Page"}


async def test_text_photo_multi_photo_and_video_posts_go_to_their_page_edges(
    tenant: Tenant, platform: Platform, worker: WorkerContext, stand_in: GraphStandIn, account: ConnectedAccount
) -> None:
    first, second = [await stored(tenant, jpeg(60 + index, 60), "image/jpeg") for index in range(2)]
    video = await stored(tenant, mp4(64, 36, 2), "video/mp4")
    text_id = await schedule(tenant, {"caption": "Plain words", "platforms": ["facebook"]})
    photo_id = await schedule(tenant, {"caption": "One photo", "platforms": ["facebook"], "r2_key": first})
    album_id = await schedule(tenant, {"caption": "Two photos", "platforms": ["facebook"], "r2_keys": [first, second]})
    video_id = await schedule(tenant, {"caption": "A clip", "platforms": ["facebook"], "r2_key": video})
    await drain(worker)
    posts = {post["message"]: post for post in stand_in.own_posts() if "message" in post}
    for post_id, message in ((text_id, "Plain words"), (photo_id, "One photo"), (album_id, "Two photos")):
        row = await post_row(platform, post_id)
        assert row.status == "published", row.error
        assert row.external_post_id == posts[message]["id"]
        assert row.external_url == posts[message]["permalink_url"]
    assert len(posts["One photo"]["attached"]) == 1
    assert len(posts["Two photos"]["attached"]) == 2
    assert all(stand_in.objects[photo]["published"] for photo in posts["Two photos"]["attached"])
    [clip] = [post for post in stand_in.own_posts() if post["type"] == "video"]
    assert (await post_row(platform, video_id)).external_post_id == clip["id"]
    assert clip["description"] == "A clip"
    assert stand_in.publish_requests == 4


async def test_a_worker_killed_after_facebook_accepted_the_post_does_not_post_it_twice(
    tenant: Tenant, platform: Platform, worker: WorkerContext, stand_in: GraphStandIn, account: ConnectedAccount
) -> None:
    post_id = await schedule(tenant, {"caption": "Exactly once on the Page", "platforms": ["facebook"]})
    await kill_after_accepting(platform, worker, stand_in, post_id)
    assert (await post_row(platform, post_id)).connector_state["attempt"]["since"]

    await drain(worker)
    post = await post_row(platform, post_id)
    [page_post] = stand_in.own_posts()
    assert post.status == "published", post.error
    assert post.external_post_id == page_post["id"]
    assert stand_in.publish_requests == 1, "the retry found the post among the Page's posts"
    assert page_post["message"] == "Exactly once on the Page", "nothing was added to the text"


async def test_a_multi_photo_post_retried_reuses_its_unpublished_photos(
    tenant: Tenant, platform: Platform, worker: WorkerContext, stand_in: GraphStandIn, account: ConnectedAccount
) -> None:
    keys = [await stored(tenant, jpeg(60 + index, 60), "image/jpeg") for index in range(2)]
    post_id = await schedule(tenant, {"caption": "An album", "platforms": ["facebook"], "r2_keys": keys})
    await kill_after_accepting(platform, worker, stand_in, post_id)
    await drain(worker)
    assert (await post_row(platform, post_id)).status == "published"
    photos = [item for item in stand_in.objects.values() if item["type"] == "photo"]
    assert len(photos) == 2 and len(stand_in.own_posts()) == 1


async def test_duplicate_text_facebook_refuses_fails_the_post_refunded(
    tenant: Tenant, platform: Platform, worker: WorkerContext, stand_in: GraphStandIn, account: ConnectedAccount
) -> None:
    stand_in.backdate(stand_in.page_post("Same words as this morning"), hours=3)
    before = await balance(platform, tenant.account_id)
    post_id = await schedule(tenant, {"caption": "Same words as this morning", "platforms": ["facebook"]})
    await drain(worker)
    post = await post_row(platform, post_id)
    assert (post.status, post.refunded) == ("failed", True)
    assert post.error is not None and "duplicate" in post.error
    assert await balance(platform, tenant.account_id) == before
    assert len(stand_in.own_posts()) == 1
    assert (await stored_account(platform, account.id)).status == "active"


async def test_a_page_token_facebook_no_longer_accepts_marks_the_account_needs_reauth(
    tenant: Tenant, platform: Platform, worker: WorkerContext, stand_in: GraphStandIn, account: ConnectedAccount
) -> None:
    post_id = await schedule(tenant, {"caption": "After removal", "platforms": ["facebook"]})
    stand_in.expire_everything()
    await drain(worker)
    post = await post_row(platform, post_id)
    assert post.status == "failed" and post.refunded
    assert post.error is not None and post.error.startswith("needs_reauth: facebook refused the account's access token")
    assert (await stored_account(platform, account.id)).status == "needs_reauth"
    assert stand_in.own_posts() == []


async def test_a_page_rate_limit_returns_the_post_to_the_schedule_until_meta_s_estimate(
    tenant: Tenant, platform: Platform, worker: WorkerContext, stand_in: GraphStandIn, account: ConnectedAccount
) -> None:
    stand_in.rate_limit = RateLimit(code=32, minutes=10)
    post_id = await schedule(tenant, {"caption": "Page limit", "platforms": ["facebook"]})
    await drain(worker)
    post = await post_row(platform, post_id)
    assert post.status == "scheduled" and post.failures == 0 and post.due_at is not None
    assert post.due_at > datetime.now(UTC) + timedelta(minutes=9)
    assert stand_in.own_posts() == []


async def test_counters_and_comments_come_from_the_page(
    tenant: Tenant, platform: Platform, worker: WorkerContext, stand_in: GraphStandIn, account: ConnectedAccount
) -> None:
    post_id = await schedule(tenant, {"caption": "Count me", "platforms": ["facebook"]})
    await drain(worker)
    post = await post_row(platform, post_id)
    assert post.external_post_id is not None
    stand_in.comment(stand_in.objects[post.external_post_id], "Nice", author="Visitor")

    connector, view = configured_connector(platform, "facebook", account)
    metrics = await connector.fetch_metrics(view, post.external_post_id)
    assert metrics == {"likes": 7, "comments": 1, "shares": 2, "views": 321}
    [comment] = await connector.list_comments(view, post.external_post_id, limit=10)
    assert (comment.text, comment.author, comment.parent_id) == ("Nice", "Visitor", post.external_post_id)
    answer = await connector.reply_to_comment(view, post.external_post_id, comment.id, "Thank you")
    listed = await connector.list_comments(view, post.external_post_id, limit=10)
    assert [(item.id, item.parent_id) for item in listed] == [
        (comment.id, post.external_post_id),
        (answer.id, comment.id),
    ]
    await connector.moderate_comment(view, comment.id, "reject")
    assert stand_in.objects[comment.id]["hidden"] is True
    await connector.delete_comment(view, answer.id)
    assert answer.id not in stand_in.objects
