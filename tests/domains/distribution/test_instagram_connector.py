"""The `instagram` connector against the local Graph API stand-in: connecting through Facebook Login, publishing
images, reels and carousels through containers exactly once, and each documented error case."""

from __future__ import annotations

import uuid
from collections.abc import AsyncIterator
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any
from urllib.parse import parse_qs, urlsplit

import httpx
import pytest

from tests.conftest import Tenant
from tests.domains.distribution.conftest import drain, local_settings, make_due
from tests.domains.distribution.meta_standin import GraphStandIn, MetaStandIn, RateLimit, meta_error
from tests.domains.distribution.oauth_flows import (
    configured_connector,
    kill_after_accepting,
    sign_in_through_connect_page,
    store_token_material,
    stored_account,
)
from tests.domains.distribution.standins import serve
from tests.domains.distribution.test_media_rules import jpeg, mp4, stored
from tests.domains.distribution.test_schedule_post import balance, post_row
from toolhost.config import Settings
from toolhost.domains.distribution.models import ConnectedAccount
from toolhost.platform.jobs import WorkerContext
from toolhost.platform.runtime import Platform
from toolhost.providers.connectors.base import OutgoingPost, PublishContext
from toolhost.providers.connectors.vault import TokenVault

AUTHORIZE = "https://www.facebook.example.test/v25.0/dialog/oauth"


@pytest.fixture
async def graph() -> AsyncIterator[tuple[GraphStandIn, str]]:
    stand_in = GraphStandIn()
    async with serve(stand_in.app()) as base:
        yield stand_in, base


def graph_settings(database_url: str, media_root: Path, stand_in: GraphStandIn, base: str) -> Settings:
    """The Meta app's settings point at the stand-in; containers are asked about without a pause."""
    return local_settings(
        database_url,
        media_root,
        distribution={
            "connectors": {
                "meta_client_id": stand_in.client_id,
                "meta_client_secret": stand_in.client_secret,
                "meta_authorize_url": AUTHORIZE,
                "meta_token_url": f"{base}/v25.0/oauth/access_token",
                "meta_graph_url": f"{base}/v25.0",
                "rate_limit_wait": 0,
                "media_processing_seconds": 0,
            }
        },
    )


@pytest.fixture
def settings(request: pytest.FixtureRequest, database_url: str, tmp_path: Path) -> Settings:
    if "only_meta" in request.fixturenames:
        enabled = {"enabled": ["instagram", "facebook", "threads"]}
        return local_settings(database_url, tmp_path / "media", distribution={"connectors": enabled})
    if "graph" not in request.fixturenames:
        return local_settings(database_url, tmp_path / "media")
    stand_in, base = request.getfixturevalue("graph")
    return graph_settings(database_url, tmp_path / "media", stand_in, base)


async def sign_in(
    tenant: Tenant,
    client: httpx.AsyncClient,
    stand_in: MetaStandIn,
    *,
    host: Platform,
    product: str,
    label: str,
    authorize: str,
) -> ConnectedAccount:
    """Signs in through Meta's consent dialog to one product (its platform and connector share the name); one Meta
    app can list accounts of several products."""
    accounts = await sign_in_through_connect_page(
        tenant, client, stand_in, platform=product, connector=product, label=label, authorize=authorize
    )
    [listed] = [account for account in accounts if account["platform"] == product]
    return await stored_account(host, uuid.UUID(listed["id"]))


async def connect_instagram(
    tenant: Tenant, client: httpx.AsyncClient, platform: Platform, stand_in: GraphStandIn
) -> ConnectedAccount:
    return await sign_in(
        tenant, client, stand_in, host=platform, product="instagram", label="Facebook", authorize=AUTHORIZE
    )


@pytest.fixture
def stand_in(graph: tuple[GraphStandIn, str]) -> GraphStandIn:
    return graph[0]


@pytest.fixture
async def account(
    tenant: Tenant, client: httpx.AsyncClient, platform: Platform, stand_in: GraphStandIn
) -> ConnectedAccount:
    """The brand's Instagram account, connected through the connect page before the test begins."""
    return await connect_instagram(tenant, client, platform, stand_in)


async def schedule(tenant: Tenant, arguments: dict[str, Any]) -> str:
    data = await tenant.data("schedule_post", arguments)
    [result] = data["results"].values()
    return str(result["postId"])


async def test_the_connect_page_signs_in_with_facebook_and_keeps_a_long_lived_token(
    tenant: Tenant, client: httpx.AsyncClient, platform: Platform, graph: tuple[GraphStandIn, str]
) -> None:
    stand_in, _ = graph
    started = await tenant.data("start_platform_connection", {"platform": "instagram"})
    path = str(started["deep_link"]).removeprefix("http://testserver")
    await client.get(path)
    redirect = await client.get(f"{path}/oauth/instagram")
    query = {name: values[0] for name, values in parse_qs(urlsplit(redirect.headers["location"]).query).items()}
    assert query["scope"].split(" ")[:2] == ["instagram_basic", "instagram_content_publish"]
    code = stand_in.approve(query)
    forged = await client.get("/app/connect/oauth/callback", params={"code": code, "state": "forged"})
    assert forged.status_code == 400 and stand_in.token_requests == []
    done = await client.get("/app/connect/oauth/callback", params={"code": code, "state": query["state"]})
    assert done.status_code == 200 and "@brand" in done.text
    [grant, exchange] = stand_in.token_requests
    assert grant["client_secret"] == stand_in.client_secret and grant["code"] == code
    assert exchange["grant_type"] == "fb_exchange_token"
    [listed] = (await tenant.data("list_connected_accounts", {}))["accounts"]
    assert (listed["connector"], listed["username"]) == ("instagram", "@brand")
    row = await stored_account(platform, uuid.UUID(listed["id"]))
    material = TokenVault(platform.settings.keyring).open(row.secret)
    assert stand_in.tokens[material["access_token"]]["kind"] == "user", "the long-lived user token is kept"
    assert row.expires_at is not None and row.expires_at > datetime.now(UTC) + timedelta(days=59)
    assert row.settings == {"ig_user_id": stand_in.ig_user_id, "username": "brand", "page_id": stand_in.page_id}


async def test_a_person_who_granted_two_pages_is_asked_to_choose_one(
    tenant: Tenant, client: httpx.AsyncClient, graph: tuple[GraphStandIn, str]
) -> None:
    stand_in, _ = graph
    stand_in.pages_granted = 2
    started = await tenant.data("start_platform_connection", {"platform": "instagram"})
    path = str(started["deep_link"]).removeprefix("http://testserver")
    await client.get(path)
    redirect = await client.get(f"{path}/oauth/instagram")
    query = {name: values[0] for name, values in parse_qs(urlsplit(redirect.headers["location"]).query).items()}
    done = await client.get(
        "/app/connect/oauth/callback", params={"code": stand_in.approve(query), "state": query["state"]}
    )
    assert done.status_code == 400 and "choose only the one to connect" in done.text
    assert (await tenant.data("list_connected_accounts", {"include_all": True}))["accounts"] == []


async def test_an_image_is_published_through_a_container_with_its_signed_url(
    tenant: Tenant, platform: Platform, worker: WorkerContext, stand_in: GraphStandIn, account: ConnectedAccount
) -> None:
    key = await stored(tenant, jpeg(100, 100), "image/jpeg")
    post_id = await schedule(
        tenant, {"caption": "Launch day", "hashtags": ["launch"], "platforms": ["instagram"], "r2_key": key}
    )
    await drain(worker)
    post = await post_row(platform, post_id)
    assert post.status == "published", post.error
    [media] = stand_in.own_media()
    assert (post.external_post_id, post.external_url) == (media["id"], media["permalink"])
    assert media["caption"] == "Launch day\n\n#launch" and media["media_type"] == "IMAGE"
    container = stand_in.objects[media["container"]]
    assert "/media/" in container["values"]["image_url"] and "sig=" in container["values"]["image_url"]


async def test_a_carousel_of_an_image_and_a_video_waits_for_the_video_item_then_publishes_once(
    tenant: Tenant, platform: Platform, worker: WorkerContext, stand_in: GraphStandIn, account: ConnectedAccount
) -> None:
    image = await stored(tenant, jpeg(100, 100), "image/jpeg")
    video = await stored(tenant, mp4(64, 64, 4), "video/mp4")
    post_id = await schedule(tenant, {"caption": "Two views", "platforms": ["instagram"], "r2_keys": [image, video]})
    await drain(worker)
    assert (await post_row(platform, post_id)).status == "published"
    [media] = stand_in.own_media()
    assert media["media_type"] == "CAROUSEL"
    first, second = (stand_in.objects[child] for child in media["children"])
    assert first["values"]["is_carousel_item"] == "true" and "image_url" in first["values"]
    assert second["values"]["media_type"] == "VIDEO" and second["polls_left"] == 0
    assert stand_in.publish_requests == 1


async def test_a_single_video_is_published_as_a_reel(
    tenant: Tenant, platform: Platform, worker: WorkerContext, stand_in: GraphStandIn, account: ConnectedAccount
) -> None:
    video = await stored(tenant, mp4(36, 64, 4), "video/mp4")
    post_id = await schedule(
        tenant,
        {
            "caption": "Behind the scenes",
            "platforms": ["instagram"],
            "r2_key": video,
            "platform_metadata": {"instagram": {"share_to_feed": True}},
        },
    )
    await drain(worker)
    assert (await post_row(platform, post_id)).status == "published"
    [media] = stand_in.own_media()
    values = stand_in.objects[media["container"]]["values"]
    assert (values["media_type"], values["share_to_feed"]) == ("REELS", "true")


async def test_a_worker_killed_after_instagram_published_the_container_does_not_post_twice(
    tenant: Tenant, platform: Platform, worker: WorkerContext, stand_in: GraphStandIn, account: ConnectedAccount
) -> None:
    key = await stored(tenant, jpeg(100, 100), "image/jpeg")
    post_id = await schedule(tenant, {"caption": "Exactly once", "platforms": ["instagram"], "r2_key": key})
    await kill_after_accepting(platform, worker, stand_in, post_id)
    saved = (await post_row(platform, post_id)).connector_state
    assert saved["container"]["id"] and "media_id" not in saved, "the container was saved before publishing"

    await drain(worker)
    post = await post_row(platform, post_id)
    [media] = stand_in.own_media()
    assert post.status == "published", post.error
    assert post.external_post_id == media["id"]
    assert stand_in.publish_requests == 1, "the retry found the container PUBLISHED and did not publish again"


async def test_a_retry_publishes_the_saved_container_instead_of_making_another(
    tenant: Tenant, platform: Platform, worker: WorkerContext, stand_in: GraphStandIn, account: ConnectedAccount
) -> None:
    key = await stored(tenant, jpeg(100, 100), "image/jpeg")
    post_id = await schedule(tenant, {"caption": "Second try", "platforms": ["instagram"], "r2_key": key})
    # The container is made, then Instagram is down when it is to be published.
    original = stand_in.media_publish

    async def unavailable(values: dict[str, str], edge: str) -> Any:
        return meta_error(500, 2, "Service temporarily unavailable", transient=True)

    stand_in.media_publish = unavailable  # type: ignore[method-assign]
    await drain(worker)
    post = await post_row(platform, post_id)
    assert post.status == "scheduled" and post.failures == 1
    stand_in.media_publish = original  # type: ignore[method-assign]
    await make_due(platform, post_id)
    await drain(worker)
    assert (await post_row(platform, post_id)).status == "published"
    containers = [item for item in stand_in.objects.values() if item["type"] == "container"]
    assert len(containers) == 1 and len(stand_in.own_media()) == 1


async def test_a_container_instagram_could_not_process_fails_the_post_with_its_reason_and_refunds_it(
    tenant: Tenant, platform: Platform, worker: WorkerContext, stand_in: GraphStandIn, account: ConnectedAccount
) -> None:
    video = await stored(tenant, mp4(36, 64, 4), "video/mp4")
    before = await balance(platform, tenant.account_id)
    post_id = await schedule(tenant, {"caption": "A reel", "platforms": ["instagram"], "r2_key": video})
    stand_in.fail_processing = True
    await drain(worker)
    post = await post_row(platform, post_id)
    assert (post.status, post.refunded) == ("failed", True)
    assert post.error == "instagram could not process the post: Error: Media upload has failed with error code 2207026"
    assert await balance(platform, tenant.account_id) == before
    assert stand_in.own_media() == [] and stand_in.publish_requests == 0


async def test_an_expired_token_marks_the_account_needs_reauth_and_refunds_the_post(
    tenant: Tenant,
    client: httpx.AsyncClient,
    platform: Platform,
    worker: WorkerContext,
    stand_in: GraphStandIn,
    account: ConnectedAccount,
) -> None:
    key = await stored(tenant, jpeg(100, 100), "image/jpeg")
    before = await balance(platform, tenant.account_id)
    post_id = await schedule(
        tenant, {"caption": "After the password change", "platforms": ["instagram"], "r2_key": key}
    )
    stand_in.expire_everything()
    await drain(worker)
    post = await post_row(platform, post_id)
    assert post.status == "failed" and post.refunded
    assert post.error is not None and post.error.startswith(
        "needs_reauth: instagram refused the account's access token"
    )
    assert "code 190/463" in post.error
    assert await balance(platform, tenant.account_id) == before
    assert (await stored_account(platform, account.id)).status == "needs_reauth"
    again = await connect_instagram(tenant, client, platform, stand_in)
    assert (again.id, again.status) == (account.id, "active")


async def test_a_rate_limit_waits_for_meta_s_estimate_without_using_up_a_retry(
    tenant: Tenant, platform: Platform, worker: WorkerContext, stand_in: GraphStandIn, account: ConnectedAccount
) -> None:
    key = await stored(tenant, jpeg(100, 100), "image/jpeg")
    post_id = await schedule(tenant, {"caption": "Behind the limit", "platforms": ["instagram"], "r2_key": key})
    stand_in.rate_limit = RateLimit(code=80002, minutes=30)
    started = datetime.now(UTC)
    await drain(worker)
    post = await post_row(platform, post_id)
    assert post.status == "scheduled" and post.failures == 0
    assert post.due_at is not None
    assert started + timedelta(minutes=29) < post.due_at < datetime.now(UTC) + timedelta(minutes=31)
    await make_due(platform, post_id)
    await drain(worker)
    assert (await post_row(platform, post_id)).status == "published"
    assert len(stand_in.own_media()) == 1


async def test_without_an_estimate_a_rate_limit_backs_off_doubling(
    tenant: Tenant, platform: Platform, worker: WorkerContext, stand_in: GraphStandIn, account: ConnectedAccount
) -> None:
    key = await stored(tenant, jpeg(100, 100), "image/jpeg")
    post_id = await schedule(tenant, {"caption": "Backing off", "platforms": ["instagram"], "r2_key": key})
    delays = []
    for _ in range(2):
        stand_in.rate_limit = RateLimit(code=4)
        started = datetime.now(UTC)
        await drain(worker)
        post = await post_row(platform, post_id)
        assert post.status == "scheduled" and post.failures == 0 and post.due_at is not None
        delays.append((post.due_at - started).total_seconds())
        await make_due(platform, post_id)
    assert 110 < delays[0] < 130 and 230 < delays[1] < 250, delays
    await drain(worker)
    assert (await post_row(platform, post_id)).status == "published"


async def test_a_used_up_publishing_limit_returns_the_post_to_the_schedule_for_an_hour(
    tenant: Tenant, platform: Platform, worker: WorkerContext, stand_in: GraphStandIn, account: ConnectedAccount
) -> None:
    stand_in.quota_total = 0
    key = await stored(tenant, jpeg(100, 100), "image/jpeg")
    post_id = await schedule(tenant, {"caption": "Over the quota", "platforms": ["instagram"], "r2_key": key})
    await drain(worker)
    post = await post_row(platform, post_id)
    assert post.status == "scheduled" and post.failures == 0
    assert post.error is not None and "published its 0 posts allowed in 24 hours" in post.error
    assert [item for item in stand_in.objects.values() if item["type"] == "container"] == []


async def test_a_token_with_less_than_a_month_left_is_renewed_and_the_account_s_expiry_moves(
    tenant: Tenant, platform: Platform, worker: WorkerContext, stand_in: GraphStandIn, account: ConnectedAccount
) -> None:
    vault = TokenVault(platform.settings.keyring)
    material = vault.open(account.secret)
    soon = datetime.now(UTC) + timedelta(days=10)
    material["expires_at"] = int(soon.timestamp())
    await store_token_material(platform, account.id, material, expires_at=soon)
    key = await stored(tenant, jpeg(100, 100), "image/jpeg")
    post_id = await schedule(tenant, {"caption": "Fresh token", "platforms": ["instagram"], "r2_key": key})
    exchanges = stand_in.exchanges
    await drain(worker)
    assert (await post_row(platform, post_id)).status == "published"
    assert stand_in.exchanges == exchanges + 1
    row = await stored_account(platform, account.id)
    assert row.expires_at is not None and row.expires_at > datetime.now(UTC) + timedelta(days=59)
    renewed = vault.open(row.secret)
    assert renewed["access_token"] != material["access_token"] and renewed["access_token"] in stand_in.tokens


async def test_insights_and_comments_come_from_instagram(
    tenant: Tenant, platform: Platform, worker: WorkerContext, stand_in: GraphStandIn, account: ConnectedAccount
) -> None:
    key = await stored(tenant, jpeg(100, 100), "image/jpeg")
    post_id = await schedule(tenant, {"caption": "Count me", "platforms": ["instagram"], "r2_key": key})
    await drain(worker)
    post = await post_row(platform, post_id)
    assert post.external_post_id is not None
    stand_in.comment(stand_in.objects[post.external_post_id], "Love it", author="fan")

    connector, view = configured_connector(platform, "instagram", account)
    metrics = await connector.fetch_metrics(view, post.external_post_id)
    assert metrics == {"views": 340, "reach": 210, "likes": 25, "comments": 1, "shares": 4, "saves": 9}
    [comment] = await connector.list_comments(view, post.external_post_id, limit=10)
    assert (comment.text, comment.author, comment.parent_id) == ("Love it", "fan", post.external_post_id)
    answer = await connector.reply_to_comment(view, post.external_post_id, comment.id, "Thanks!")
    assert stand_in.objects[answer.id]["parent"] == comment.id
    listed = await connector.list_comments(view, post.external_post_id, limit=10)
    assert [(item.text, item.parent_id) for item in listed] == [
        ("Love it", post.external_post_id),
        ("Thanks!", comment.id),
    ]
    await connector.moderate_comment(view, comment.id, "reject")
    assert stand_in.objects[comment.id]["hidden"] is True
    await connector.delete_comment(view, answer.id)
    assert answer.id not in stand_in.objects


async def test_without_the_meta_app_settings_the_connect_page_names_them(
    tenant: Tenant, client: httpx.AsyncClient
) -> None:
    started = await tenant.data("start_platform_connection", {"platform": "instagram"})
    path = str(started["deep_link"]).removeprefix("http://testserver")
    page = await client.get(path)
    assert "TOOLHOST_DISTRIBUTION__CONNECTORS__META_CLIENT_SECRET" in page.text
    refused = await client.get(f"{path}/oauth/instagram")
    assert refused.status_code == 400 and "TOOLHOST_DISTRIBUTION__CONNECTORS__META_CLIENT_ID" in refused.text


async def test_the_first_comment_is_posted_once_even_when_a_retry_repeats_the_end_of_the_publication(
    tenant: Tenant, platform: Platform, worker: WorkerContext, stand_in: GraphStandIn, account: ConnectedAccount
) -> None:
    key = await stored(tenant, jpeg(100, 100), "image/jpeg")
    metadata = {"instagram": {"first_comment": "Link in bio"}}
    post_id = await schedule(
        tenant, {"caption": "With a comment", "platforms": ["instagram"], "r2_key": key, "platform_metadata": metadata}
    )
    await drain(worker)
    post = await post_row(platform, post_id)
    assert post.status == "published" and post.external_post_id is not None
    [comment] = [item for item in stand_in.objects.values() if item["type"] == "comment"]
    assert (comment["text"], comment["author"], comment["parent"]) == ("Link in bio", "brand", post.external_post_id)

    # A worker that died after Instagram took the comment, before it was recorded, repeats the last step.
    state = {name: value for name, value in post.connector_state.items() if name != "first_comment_id"}
    connector, view = configured_connector(platform, "instagram", account)

    async def save_state(saved: dict[str, Any]) -> None:
        state.update(saved)

    outgoing = OutgoingPost(
        post_id=post_id,
        project_id=str(tenant.project_id),
        platform="instagram",
        caption="With a comment",
        title=None,
        hashtags=[],
        media=[],
        media_type="IMAGE",
        platform_metadata=metadata,
        scheduled_at=None,
        idempotency_key="key-1234567890",
        attempt=2,
        created_at=datetime.now(UTC),
    )
    result = await connector.publish(view, outgoing, PublishContext(state=dict(state), save_state=save_state))
    assert result.external_post_id == post.external_post_id
    assert [item["id"] for item in stand_in.objects.values() if item["type"] == "comment"] == [comment["id"]]
    assert state["first_comment_id"] == comment["id"]


@pytest.fixture
def only_meta() -> None:
    """Marks a test whose server offers the Meta connectors alone (and without their app settings)."""


@pytest.mark.parametrize(
    ("platform_name", "setting"),
    [("instagram", "META_CLIENT_ID"), ("facebook", "META_CLIENT_SECRET"), ("threads", "THREADS_CLIENT_ID")],
)
async def test_start_platform_connection_names_the_meta_settings_that_are_missing(
    tenant: Tenant, only_meta: None, platform_name: str, setting: str
) -> None:
    response = await tenant.call("start_platform_connection", {"platform": platform_name})
    error = response.json()["structuredContent"]["error"]
    assert error["error_type"] == "validation_error"
    assert f"TOOLHOST_DISTRIBUTION__CONNECTORS__{setting}" in error["message"]
    assert f"TOOLHOST_DISTRIBUTION__CONNECTORS__{setting}" in error["missing_settings"]
