"""The `x` connector against the local X API stand-in: connecting through the connect page (OAuth 2.0 with
PKCE), publishing posts, threads and media exactly once, and each documented error case."""

from __future__ import annotations

import uuid
from collections.abc import AsyncIterator
from datetime import UTC, datetime, timedelta
from pathlib import Path
from urllib.parse import parse_qs, urlsplit

import httpx
import pytest

from tests.conftest import Tenant
from tests.domains.distribution.conftest import drain, local_settings, make_due
from tests.domains.distribution.oauth_flows import (
    configured_connector,
    kill_after_accepting,
    listed_account,
    sign_in_through_connect_page,
    store_token_material,
    stored_account,
)
from tests.domains.distribution.standins import serve
from tests.domains.distribution.test_media_rules import mp4, png, stored
from tests.domains.distribution.test_schedule_post import balance, post_row
from tests.domains.distribution.x_standin import XStandIn
from toolhost.config import Settings
from toolhost.domains.distribution import accounts as accounts_service
from toolhost.domains.distribution.models import ConnectedAccount
from toolhost.platform.jobs import WorkerContext
from toolhost.platform.runtime import Platform
from toolhost.providers.connectors.base import OutgoingPost, PublishContext
from toolhost.providers.connectors.registry import Connectors
from toolhost.providers.connectors.vault import TokenVault
from toolhost.providers.connectors.x import XConnector

AUTHORIZE = "https://x.example.test/i/oauth2/authorize"
SCOPES = "tweet.read tweet.write users.read offline.access media.write"


@pytest.fixture
async def x() -> AsyncIterator[tuple[XStandIn, str]]:
    stand_in = XStandIn()
    async with serve(stand_in.app()) as base:
        yield stand_in, base


@pytest.fixture
def settings(request: pytest.FixtureRequest, database_url: str, tmp_path: Path) -> Settings:
    """The X app's settings point at the stand-in; a rate limit is never waited out in place."""
    if "only_x" in request.fixturenames:
        return local_settings(database_url, tmp_path / "media", distribution={"connectors": {"enabled": ["x"]}})
    if "x" not in request.fixturenames:
        return local_settings(database_url, tmp_path / "media")
    stand_in, base = request.getfixturevalue("x")
    return local_settings(
        database_url,
        tmp_path / "media",
        distribution={
            "connectors": {
                "x_client_id": stand_in.client_id,
                "x_client_secret": stand_in.client_secret,
                "x_authorize_url": AUTHORIZE,
                "x_token_url": f"{base}/2/oauth2/token",
                "x_api_url": f"{base}/2",
                "rate_limit_wait": 0,
            }
        },
    )


async def sign_in(tenant: Tenant, client: httpx.AsyncClient, stand_in: XStandIn) -> ConnectedAccount:
    [listed] = await sign_in_through_connect_page(
        tenant, client, stand_in, platform="twitter", connector="x", label="X", authorize=AUTHORIZE
    )
    return listed_account(listed)


@pytest.fixture
def stand_in(x: tuple[XStandIn, str]) -> XStandIn:
    return x[0]


@pytest.fixture
async def account(
    tenant: Tenant, client: httpx.AsyncClient, platform: Platform, stand_in: XStandIn
) -> ConnectedAccount:
    """The brand's X account, connected through the connect page before the test begins."""
    return await sign_in(tenant, client, stand_in)


async def test_the_connect_page_signs_in_to_x_with_pkce_and_a_checked_state(
    tenant: Tenant, client: httpx.AsyncClient, platform: Platform, x: tuple[XStandIn, str]
) -> None:
    stand_in, _ = x
    started = await tenant.data("start_platform_connection", {"platform": "twitter"})
    path = str(started["deep_link"]).removeprefix("http://testserver")
    assert (await client.get(path)).status_code == 200
    redirect = await client.get(f"{path}/oauth/x")
    query = {name: values[0] for name, values in parse_qs(urlsplit(redirect.headers["location"]).query).items()}
    assert query["scope"] == SCOPES
    assert query["redirect_uri"] == "http://testserver/app/connect/oauth/callback"
    assert len(query["code_challenge"]) == 43 and query["code_challenge_method"] == "S256"
    code = stand_in.approve(query)

    forged = await client.get("/app/connect/oauth/callback", params={"code": code, "state": "forged-state"})
    assert forged.status_code == 400
    assert stand_in.token_requests == [], "a forged state never reaches X's token endpoint"
    refused = await client.get(
        "/app/connect/oauth/callback", params={"error": "access_denied", "state": query["state"]}
    )
    assert refused.status_code == 400 and "access_denied" in refused.text

    done = await client.get("/app/connect/oauth/callback", params={"code": code, "state": query["state"]})
    assert done.status_code == 200, done.text
    assert "@alice" in done.text
    [grant] = stand_in.token_requests
    assert grant["grant_type"] == "authorization_code" and len(grant["code_verifier"]) == 64
    [listed] = (await tenant.data("list_connected_accounts", {}))["accounts"]
    assert (listed["connector"], listed["username"], listed["status"]) == ("x", "@alice", "active")
    row = await stored_account(platform, uuid.UUID(listed["id"]))
    material = TokenVault(platform.settings.keyring).open(row.secret)
    assert material["access_token"] in stand_in.access_tokens
    assert material["access_token"] not in row.secret and material["refresh_token"] not in row.secret
    assert row.expires_at is None and row.has_refresh_token, "a refreshable account does not expire with its token"
    assert row.settings == {"user_id": stand_in.user_id, "username": "alice"}


async def test_a_thread_with_an_image_is_published_once_each_post_replying_to_the_one_before(
    tenant: Tenant, client: httpx.AsyncClient, platform: Platform, worker: WorkerContext, x: tuple[XStandIn, str]
) -> None:
    stand_in, _ = x
    await sign_in(tenant, client, stand_in)
    key = await stored(tenant, png(120, 80), "image/png")
    data = await tenant.data(
        "schedule_post",
        {
            "caption": "1/ Launch day & more: https://example.com/launch",
            "platforms": ["twitter"],
            "r2_key": key,
            "platform_metadata": {"twitter": {"thread": ["2/ What changed", "3/ Try it"]}},
        },
    )
    post_id = data["results"]["Twitter"]["postId"]
    await drain(worker)
    post = await post_row(platform, post_id)
    assert post.status == "published", post.error
    first, second, third = sorted(stand_in.own_tweets(), key=lambda tweet: int(tweet["id"]))
    assert post.external_post_id == first["id"]
    assert post.external_url == f"https://x.com/alice/status/{first['id']}"
    assert first["sent"] == "1/ Launch day & more: https://example.com/launch"
    assert second["referenced_tweets"] == [{"type": "replied_to", "id": first["id"]}]
    assert third["referenced_tweets"] == [{"type": "replied_to", "id": second["id"]}]
    [media_id] = first["media_ids"]
    assert stand_in.media[media_id]["category"] == "tweet_image"
    assert stand_in.media[media_id]["data"][:8] == b"\x89PNG\r\n\x1a\n"
    assert stand_in.create_requests == 3


async def test_a_worker_killed_after_x_accepted_the_post_does_not_post_it_twice(
    tenant: Tenant, platform: Platform, worker: WorkerContext, stand_in: XStandIn, account: ConnectedAccount
) -> None:
    data = await tenant.data("schedule_post", {"caption": "Exactly once & no marker", "platforms": ["twitter"]})
    post_id = data["results"]["Twitter"]["postId"]
    # The worker dies: X has the post, toolhost never heard back
    await kill_after_accepting(platform, worker, stand_in, post_id)

    await drain(worker)
    post = await post_row(platform, post_id)
    [tweet] = stand_in.own_tweets()
    assert post.status == "published", post.error
    assert post.external_post_id == tweet["id"]
    assert stand_in.create_requests == 1, "the retry found the post instead of publishing it again"
    assert tweet["sent"] == "Exactly once & no marker", "nothing was added to the text"


async def test_a_token_about_to_expire_is_refreshed_first_and_the_rotated_tokens_are_stored(
    tenant: Tenant, platform: Platform, worker: WorkerContext, stand_in: XStandIn, account: ConnectedAccount
) -> None:
    vault = TokenVault(platform.settings.keyring)
    row = await stored_account(platform, account.id)
    material = vault.open(row.secret)
    material["expires_at"] = int(datetime.now(UTC).timestamp()) + 60  # inside the refresh margin
    await store_token_material(platform, account.id, material)
    data = await tenant.data("schedule_post", {"caption": "Fresh token", "platforms": ["twitter"]})
    await drain(worker)
    assert (await post_row(platform, data["results"]["Twitter"]["postId"])).status == "published"
    assert stand_in.refreshes == 1
    refreshed = vault.open((await stored_account(platform, account.id)).secret)
    assert refreshed["refresh_token"] in stand_in.refresh_tokens, "the rotated refresh token was stored"
    assert refreshed["refresh_token"] != material["refresh_token"]


async def test_an_access_token_x_expired_early_answers_401_and_is_refreshed_once(
    tenant: Tenant, platform: Platform, worker: WorkerContext, stand_in: XStandIn, account: ConnectedAccount
) -> None:
    stand_in.access_tokens.clear()  # "OAuth 2.0 Authorization Code Flow with PKCE": X ended the token early
    data = await tenant.data("schedule_post", {"caption": "Still connected", "platforms": ["twitter"]})
    await drain(worker)
    assert (await post_row(platform, data["results"]["Twitter"]["postId"])).status == "published"
    assert stand_in.refreshes == 1
    assert len(stand_in.own_tweets()) == 1


async def test_a_revoked_token_marks_the_account_needs_reauth_and_the_post_fails_refunded(
    tenant: Tenant,
    client: httpx.AsyncClient,
    platform: Platform,
    worker: WorkerContext,
    stand_in: XStandIn,
    account: ConnectedAccount,
) -> None:
    before = await balance(platform, tenant.account_id)
    data = await tenant.data("schedule_post", {"caption": "After revocation", "platforms": ["twitter"]})
    assert await balance(platform, tenant.account_id) == before - 1
    stand_in.revoke_everything()
    await drain(worker)
    post = await post_row(platform, data["results"]["Twitter"]["postId"])
    assert post.status == "failed" and post.refunded
    assert post.error is not None and post.error.startswith("needs_reauth: ")
    assert await balance(platform, tenant.account_id) == before
    assert stand_in.own_tweets() == []
    row = await stored_account(platform, account.id)
    assert row.status == "needs_reauth"
    usable = await tenant.data("list_connected_accounts", {})
    assert usable["accounts"] == []
    # Signing in again makes the same account usable again.
    stand_in.hang_after_accepting = False
    again = await sign_in(tenant, client, stand_in)
    assert (again.id, again.status) == (account.id, "active")


async def test_a_rate_limited_post_waits_for_x_s_reset_and_is_published_once(
    tenant: Tenant, client: httpx.AsyncClient, platform: Platform, worker: WorkerContext, x: tuple[XStandIn, str]
) -> None:
    stand_in, _ = x
    await sign_in(tenant, client, stand_in)
    reset = int((datetime.now(UTC) + timedelta(minutes=10)).timestamp())
    stand_in.rate_limit_reset = reset
    data = await tenant.data("schedule_post", {"caption": "Behind the limit", "platforms": ["twitter"]})
    post_id = data["results"]["Twitter"]["postId"]
    await drain(worker)
    post = await post_row(platform, post_id)
    assert post.status == "scheduled"
    assert post.due_at == datetime.fromtimestamp(reset, UTC), "not retried before x-rate-limit-reset"
    assert post.failures == 0, "a rate limit does not use up one of the post's retries"
    assert stand_in.own_tweets() == []
    await make_due(platform, post_id)
    await drain(worker)
    assert (await post_row(platform, post_id)).status == "published"
    assert len(stand_in.own_tweets()) == 1


async def test_a_video_x_cannot_process_fails_the_post_with_x_s_reason_and_refunds_it(
    tenant: Tenant, client: httpx.AsyncClient, platform: Platform, worker: WorkerContext, x: tuple[XStandIn, str]
) -> None:
    stand_in, _ = x
    await sign_in(tenant, client, stand_in)
    key = await stored(tenant, mp4(64, 36, 2), "video/mp4")
    stand_in.fail_processing = True
    data = await tenant.data("schedule_post", {"caption": "A clip", "platforms": ["twitter"], "r2_key": key})
    await drain(worker)
    post = await post_row(platform, data["results"]["Twitter"]["postId"])
    assert (post.status, post.refunded) == ("failed", True)
    assert post.error == "x could not process media 1: Unsupported video format"
    assert stand_in.own_tweets() == []
    [media] = stand_in.media.values()
    assert media["category"] == "tweet_video"


async def test_a_video_is_uploaded_in_chunks_and_attached_after_processing(
    tenant: Tenant, platform: Platform, worker: WorkerContext, stand_in: XStandIn, account: ConnectedAccount
) -> None:
    video = mp4(64, 36, 2)
    key = await stored(tenant, video, "video/mp4")
    data = await tenant.data("schedule_post", {"caption": "A clip", "platforms": ["twitter"], "r2_key": key})
    await drain(worker)
    assert (await post_row(platform, data["results"]["Twitter"]["postId"])).status == "published"
    [media_id] = stand_in.own_tweets()[0]["media_ids"]
    assert stand_in.media[media_id]["data"] == video
    assert stand_in.media[media_id]["polls"] == 2


async def test_duplicate_content_x_refuses_fails_the_post_without_touching_the_account(
    tenant: Tenant, platform: Platform, worker: WorkerContext, stand_in: XStandIn, account: ConnectedAccount
) -> None:
    stand_in.add_tweet("Same words as this morning", created_at=datetime.now(UTC) - timedelta(hours=3))
    data = await tenant.data("schedule_post", {"caption": "Same words as this morning", "platforms": ["twitter"]})
    await drain(worker)
    post = await post_row(platform, data["results"]["Twitter"]["postId"])
    assert (post.status, post.refunded) == ("failed", True)
    assert post.error is not None and "duplicate content" in post.error
    assert len(stand_in.own_tweets()) == 1
    assert (await stored_account(platform, account.id)).status == "active"


async def test_metrics_and_replies_come_from_x(
    tenant: Tenant, client: httpx.AsyncClient, platform: Platform, worker: WorkerContext, x: tuple[XStandIn, str]
) -> None:
    stand_in, _ = x
    account = await sign_in(tenant, client, stand_in)
    data = await tenant.data("schedule_post", {"caption": "Count me", "platforms": ["twitter"]})
    await drain(worker)
    post = await post_row(platform, data["results"]["Twitter"]["postId"])
    assert post.external_post_id is not None
    stand_in.add_tweet("Love it", reply_to=post.external_post_id, author_id="99")

    connector, view = configured_connector(platform, "x", await stored_account(platform, account.id))
    metrics = await connector.fetch_metrics(view, post.external_post_id)
    assert metrics == {"views": 120, "likes": 5, "comments": 1, "shares": 2, "saves": 3, "quotes": 1}
    [comment] = await connector.list_comments(view, post.external_post_id, limit=10)
    assert (comment.text, comment.author, comment.parent_id) == ("Love it", "user99", post.external_post_id)
    answer = await connector.reply_to_comment(view, post.external_post_id, comment.id, "Thanks!")
    assert stand_in.tweets[answer.id]["referenced_tweets"] == [{"type": "replied_to", "id": comment.id}]
    await connector.delete_comment(view, answer.id)
    assert answer.id not in stand_in.tweets


async def test_without_its_app_settings_the_x_connector_names_the_settings_it_needs(
    tenant: Tenant, client: httpx.AsyncClient, platform: Platform
) -> None:
    from toolhost.platform.results import ValidationFailed

    async with platform.session_factory() as session, session.begin():
        with pytest.raises(ValidationFailed) as refused:
            await accounts_service.create(
                session=session,
                settings=platform.settings,
                project_id=tenant.project_id,
                platform="twitter",
                connector_name="x",
                fields={},
            )
    assert refused.value.details["missing_settings"] == [
        "TOOLHOST_DISTRIBUTION__CONNECTORS__X_CLIENT_ID",
        "TOOLHOST_DISTRIBUTION__CONNECTORS__X_CLIENT_SECRET",
    ]
    started = await tenant.data("start_platform_connection", {"platform": "twitter"})
    path = str(started["deep_link"]).removeprefix("http://testserver")
    page = await client.get(path)
    assert "TOOLHOST_DISTRIBUTION__CONNECTORS__X_CLIENT_ID" in page.text
    oauth = await client.get(f"{path}/oauth/x")
    assert oauth.status_code == 400 and "TOOLHOST_DISTRIBUTION__CONNECTORS__X_CLIENT_SECRET" in oauth.text


@pytest.fixture
def only_x() -> None:
    """Marks a test whose server offers the x connector alone (and without its app settings)."""


async def test_start_platform_connection_names_the_missing_settings_when_only_x_is_enabled(
    tenant: Tenant, only_x: None
) -> None:
    response = await tenant.call("start_platform_connection", {"platform": "twitter"})
    error = response.json()["structuredContent"]["error"]
    assert error["error_type"] == "validation_error"
    assert "the x connector needs TOOLHOST_DISTRIBUTION__CONNECTORS__X_CLIENT_ID" in error["message"]
    assert error["missing_settings"] == [
        "TOOLHOST_DISTRIBUTION__CONNECTORS__X_CLIENT_ID",
        "TOOLHOST_DISTRIBUTION__CONNECTORS__X_CLIENT_SECRET",
    ]


async def test_a_rate_limit_that_resets_within_the_wait_is_waited_out_in_place(
    tenant: Tenant, client: httpx.AsyncClient, platform: Platform, x: tuple[XStandIn, str]
) -> None:
    stand_in, _ = x
    account = await sign_in(tenant, client, stand_in)
    connector = Connectors(platform.settings).get("x")
    assert isinstance(connector, XConnector)
    waits: list[float] = []

    async def sleep(seconds: float) -> None:
        waits.append(seconds)

    connector.sleep, connector.rate_limit_wait = sleep, 30
    stand_in.rate_limit_reset = int((datetime.now(UTC) + timedelta(seconds=10)).timestamp())
    view = accounts_service.session_of(
        await stored_account(platform, account.id), TokenVault(platform.settings.keyring)
    )
    saved: list[dict[str, object]] = []

    async def save_state(state: dict[str, object]) -> None:
        saved.append(state)

    post = OutgoingPost(
        post_id=str(uuid.uuid4()),
        project_id=str(tenant.project_id),
        platform="twitter",
        caption="Right after the reset",
        title=None,
        hashtags=[],
        media=[],
        media_type=None,
        platform_metadata={},
        scheduled_at=None,
        idempotency_key="key-1234567890",
        attempt=1,
        created_at=datetime.now(UTC),
    )
    result = await connector.publish(view, post, PublishContext(state={}, save_state=save_state))
    [tweet] = stand_in.own_tweets()
    assert result.external_post_id == tweet["id"]
    [wait] = waits
    assert 9 <= wait <= 12, "it waited until x-rate-limit-reset, not a fixed delay"
    assert saved[-1]["posted"] == [tweet["id"]]


async def test_two_workers_refreshing_one_account_keep_it_connected_although_x_rotates_refresh_tokens(
    tenant: Tenant, client: httpx.AsyncClient, platform: Platform, x: tuple[XStandIn, str]
) -> None:
    stand_in, _ = x
    account = await sign_in(tenant, client, stand_in)
    vault = TokenVault(platform.settings.keyring)
    row = await stored_account(platform, account.id)
    material = vault.open(row.secret)
    material["expires_at"] = int(datetime.now(UTC).timestamp()) - 1
    await store_token_material(platform, account.id, material)
    row = await stored_account(platform, account.id)
    connector = Connectors(platform.settings).get("x")
    assert isinstance(connector, XConnector)
    first = accounts_service.session_of(row, vault, session_factory=platform.session_factory)
    second = accounts_service.session_of(row, vault, session_factory=platform.session_factory)

    token = await connector.access_token(first)
    # The second worker still holds the spent refresh token: X refuses it, the stored tokens are taken instead.
    assert await connector.access_token(second) == token
    assert stand_in.refreshes == 1
    assert vault.open((await stored_account(platform, account.id)).secret)["access_token"] == token
    assert (await stored_account(platform, account.id)).status == "active"
