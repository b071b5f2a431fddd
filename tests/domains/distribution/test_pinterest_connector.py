"""The `pinterest` connector against the local Pinterest stand-in: connecting through the connect page (comma-
separated scopes, a checked state, HTTP Basic at the token endpoint), Pins with an image, a carousel or a video
exactly once, their analytics, and each documented error case."""

from __future__ import annotations

import asyncio
import base64
import uuid
from collections.abc import AsyncIterator
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any
from urllib.parse import parse_qs, urlsplit

import httpx
import pytest
from sqlalchemy import update

from tests.conftest import Tenant
from tests.domains.distribution.conftest import drain, local_settings, make_due
from tests.domains.distribution.oauth_flows import (
    configured_connector,
    expire_lease,
    kill_after_accepting,
    sign_in_through_connect_page,
    stored_account,
)
from tests.domains.distribution.pinterest_standin import PinterestStandIn
from tests.domains.distribution.standins import serve
from tests.domains.distribution.test_media_rules import mp4, png, refused, stored
from tests.domains.distribution.test_schedule_post import balance, post_row
from toolhost.config import Settings
from toolhost.domains.distribution import accounts as accounts_service
from toolhost.domains.distribution.models import ConnectedAccount, Post
from toolhost.platform.jobs import Job, WorkerContext
from toolhost.platform.results import ValidationFailed
from toolhost.platform.runtime import Platform
from toolhost.platform.worker import run_jobs
from toolhost.providers.connectors.vault import TokenVault

AUTHORIZE = "https://pinterest.example.test/oauth/"


@pytest.fixture
async def pinterest() -> AsyncIterator[PinterestStandIn]:
    stand_in = PinterestStandIn()
    async with serve(stand_in.app()) as base:
        stand_in.base = base
        yield stand_in


@pytest.fixture
def settings(request: pytest.FixtureRequest, database_url: str, tmp_path: Path) -> Settings:
    """The Pinterest app's settings point at the stand-in; a rate limit is never waited out in place."""
    if "pinterest" not in request.fixturenames:
        return local_settings(database_url, tmp_path / "media")
    stand_in: PinterestStandIn = request.getfixturevalue("pinterest")
    return local_settings(
        database_url,
        tmp_path / "media",
        distribution={
            "connectors": {
                "pinterest_client_id": stand_in.client_id,
                "pinterest_client_secret": stand_in.client_secret,
                "pinterest_authorize_url": AUTHORIZE,
                "pinterest_token_url": f"{stand_in.base}/v5/oauth/token",
                "pinterest_api_url": f"{stand_in.base}/v5",
                "rate_limit_wait": 0,
            }
        },
    )


async def sign_in(
    tenant: Tenant, client: httpx.AsyncClient, platform: Platform, stand_in: PinterestStandIn
) -> ConnectedAccount:
    [listed] = await sign_in_through_connect_page(
        tenant, client, stand_in, platform="pinterest", connector="pinterest", label="Pinterest", authorize=AUTHORIZE
    )
    return await stored_account(platform, uuid.UUID(listed["id"]))


@pytest.fixture
async def account(
    tenant: Tenant, client: httpx.AsyncClient, platform: Platform, pinterest: PinterestStandIn
) -> ConnectedAccount:
    """The brand's Pinterest account, connected through the connect page before the test begins."""
    return await sign_in(tenant, client, platform, pinterest)


async def schedule(tenant: Tenant, arguments: dict[str, Any]) -> str:
    data = await tenant.data("schedule_post", {"platforms": ["pinterest"], **arguments})
    return str(data["results"]["Pinterest"]["postId"])


async def an_image(tenant: Tenant) -> str:
    return await stored(tenant, png(100, 150), "image/png")


async def test_the_connect_page_signs_in_to_pinterest_with_comma_separated_scopes_and_http_basic(
    tenant: Tenant, client: httpx.AsyncClient, platform: Platform, pinterest: PinterestStandIn
) -> None:
    started = await tenant.data("start_platform_connection", {"platform": "pinterest"})
    path = str(started["deep_link"]).removeprefix("http://testserver")
    await client.get(path)
    redirect = await client.get(f"{path}/oauth/pinterest")
    query = {name: values[0] for name, values in parse_qs(urlsplit(redirect.headers["location"]).query).items()}
    assert query["scope"] == "boards:read,boards:write,pins:read,pins:write,user_accounts:read"
    assert "code_challenge" not in query, "Pinterest documents no PKCE"
    code = pinterest.approve(query)
    forged = await client.get("/app/connect/oauth/callback", params={"code": code, "state": "forged"})
    assert forged.status_code == 400 and pinterest.token_requests == []
    done = await client.get("/app/connect/oauth/callback", params={"code": code, "state": query["state"]})
    assert done.status_code == 200, done.text
    assert pinterest.username in done.text
    [grant] = pinterest.token_requests
    assert (grant["grant_type"], grant["continuous_refresh"]) == ("authorization_code", "true")
    assert "client_secret" not in grant, "the secret travels as HTTP Basic"
    [listed] = (await tenant.data("list_connected_accounts", {}))["accounts"]
    assert (listed["connector"], listed["status"]) == ("pinterest", "active")
    row = await stored_account(platform, uuid.UUID(listed["id"]))
    material = TokenVault(platform.settings.keyring).open(row.secret)
    assert material["access_token"] in pinterest.access_tokens and material["access_token"] not in row.secret
    assert material["refresh_token"] in pinterest.refresh_tokens
    assert row.settings["boards"] == [{"id": "549755885175", "name": "Recipes"}]


async def test_an_image_pin_is_created_once_on_the_only_board_with_its_title_link_and_alt_text(
    tenant: Tenant, platform: Platform, worker: WorkerContext, pinterest: PinterestStandIn, account: ConnectedAccount
) -> None:
    image = png(100, 150)
    key = await stored(tenant, image, "image/png")
    post_id = await schedule(
        tenant,
        {
            "caption": "Three weeknight soups",
            "title": "Soups for busy evenings",
            "hashtags": ["#soup"],
            "r2_key": key,
            "platform_metadata": {"pinterest": {"link": "https://example.com/soups", "alt_text": "A pot of soup"}},
        },
    )
    await drain(worker)
    post = await post_row(platform, post_id)
    assert post.status == "published", post.error
    [pin] = pinterest.pins.values()
    assert post.external_post_id == pin["id"]
    assert post.external_url == f"https://www.pinterest.com/pin/{pin['id']}/"
    assert (pin["board_id"], pin["title"]) == ("549755885175", "Soups for busy evenings")
    assert pin["description"] == "Three weeknight soups\n\n#soup"
    assert (pin["link"], pin["alt_text"]) == ("https://example.com/soups", "A pot of soup")
    assert pin["media_source"]["source_type"] == "image_base64"
    assert pin["images"] == [image]
    assert pinterest.create_requests == 1


async def test_two_images_become_a_carousel_pin_on_the_board_the_post_names(
    tenant: Tenant, client: httpx.AsyncClient, platform: Platform, worker: WorkerContext, pinterest: PinterestStandIn
) -> None:
    pinterest.boards.append({"id": "549755885176", "name": "Travel"})
    await sign_in(tenant, client, platform, pinterest)
    keys = [await an_image(tenant), await stored(tenant, png(80, 120), "image/png")]
    post_id = await schedule(
        tenant,
        {"caption": "Two views", "r2_keys": keys, "platform_metadata": {"pinterest": {"board_id": "549755885176"}}},
    )
    await drain(worker)
    assert (await post_row(platform, post_id)).status == "published"
    [pin] = pinterest.pins.values()
    assert pin["board_id"] == "549755885176"
    assert pin["media_source"]["source_type"] == "multiple_image_base64"
    assert len(pin["images"]) == 2


async def test_an_account_with_several_boards_and_no_board_named_fails_the_post_listing_them(
    tenant: Tenant, client: httpx.AsyncClient, platform: Platform, worker: WorkerContext, pinterest: PinterestStandIn
) -> None:
    pinterest.boards.append({"id": "549755885176", "name": "Travel"})
    await sign_in(tenant, client, platform, pinterest)
    post_id = await schedule(tenant, {"caption": "Where to?", "r2_key": await an_image(tenant)})
    await drain(worker)
    post = await post_row(platform, post_id)
    assert (post.status, post.refunded) == ("failed", True)
    assert post.error is not None and "Recipes (549755885175), Travel (549755885176)" in post.error
    assert pinterest.create_requests == 0


async def test_a_video_is_registered_uploaded_with_its_form_fields_and_pinned_once_processed(
    tenant: Tenant, platform: Platform, worker: WorkerContext, pinterest: PinterestStandIn, account: ConnectedAccount
) -> None:
    video = mp4(64, 96, 5)
    post_id = await schedule(tenant, {"caption": "A clip", "r2_key": await stored(tenant, video, "video/mp4")})
    await drain(worker)
    post = await post_row(platform, post_id)
    assert post.status == "published", post.error
    [pin] = pinterest.pins.values()
    [(media_id, upload)] = pinterest.media.items()
    assert pin["media_source"] == {"source_type": "video_id", "media_id": media_id, "cover_image_key_frame_time": 0}
    assert upload["data"] == video
    assert upload["polls"] == 2, "pinned only once Pinterest said succeeded"


async def test_a_video_pinterest_cannot_process_fails_the_post_refunded_and_pins_nothing(
    tenant: Tenant, platform: Platform, worker: WorkerContext, pinterest: PinterestStandIn, account: ConnectedAccount
) -> None:
    pinterest.fail_processing = True
    before = await balance(platform, tenant.account_id)
    post_id = await schedule(tenant, {"caption": "A clip", "r2_key": await stored(tenant, mp4(64, 96, 5), "video/mp4")})
    await drain(worker)
    post = await post_row(platform, post_id)
    assert (post.status, post.refunded) == ("failed", True)
    assert post.error == "pinterest could not process the video (media upload failed)"
    assert await balance(platform, tenant.account_id) == before
    assert pinterest.pins == {}


async def test_a_worker_killed_after_pinterest_created_the_pin_does_not_pin_it_twice(
    tenant: Tenant, platform: Platform, worker: WorkerContext, pinterest: PinterestStandIn, account: ConnectedAccount
) -> None:
    older = pinterest.add_pin(
        "549755885175", title=None, description="Exactly once", created_at=datetime.now(UTC) - timedelta(hours=2)
    )
    post_id = await schedule(tenant, {"caption": "Exactly once", "r2_key": await an_image(tenant)})
    await kill_after_accepting(platform, worker, pinterest, post_id)
    post = await post_row(platform, post_id)
    assert post.status == "publishing" and post.external_post_id is None

    await drain(worker)
    post = await post_row(platform, post_id)
    assert post.status == "published", post.error
    assert pinterest.create_requests == 1, "the retry found the Pin on the board instead of pinning again"
    [ours] = [pin for pin in pinterest.pins.values() if pin["id"] != older["id"]]
    assert post.external_post_id == ours["id"], "the older Pin with the same words is not the one adopted"


async def test_a_lost_attempt_that_never_reached_pinterest_is_pinned_on_the_retry(
    tenant: Tenant, platform: Platform, worker: WorkerContext, pinterest: PinterestStandIn, account: ConnectedAccount
) -> None:
    post_id = await schedule(tenant, {"caption": "Never arrived", "r2_key": await an_image(tenant)})
    # An earlier worker saved its attempt marker and died before its request reached Pinterest.
    since = (datetime.now(UTC) - timedelta(minutes=3)).isoformat()
    async with platform.session_factory() as session, session.begin():
        await session.execute(
            update(Post).where(Post.id == uuid.UUID(post_id)).values(connector_state={"attempt": {"since": since}})
        )
    await drain(worker)
    post = await post_row(platform, post_id)
    assert post.status == "published", post.error
    assert pinterest.create_requests == 1 and len(pinterest.pins) == 1


async def test_an_expired_access_token_is_refreshed_and_the_rotated_refresh_token_kept(
    tenant: Tenant, platform: Platform, worker: WorkerContext, pinterest: PinterestStandIn, account: ConnectedAccount
) -> None:
    pinterest.access_tokens.clear()  # 401 "Authentication failed." for the stored access token
    post_id = await schedule(tenant, {"caption": "Still connected", "r2_key": await an_image(tenant)})
    await drain(worker)
    assert (await post_row(platform, post_id)).status == "published"
    assert [request["grant_type"] for request in pinterest.token_requests] == ["authorization_code", "refresh_token"]
    material = TokenVault(platform.settings.keyring).open((await stored_account(platform, account.id)).secret)
    assert material["refresh_token"] in pinterest.refresh_tokens, "the new continuous refresh token is stored"


async def test_a_revoked_token_marks_the_account_needs_reauth_and_the_post_fails_refunded(
    tenant: Tenant,
    client: httpx.AsyncClient,
    platform: Platform,
    worker: WorkerContext,
    pinterest: PinterestStandIn,
    account: ConnectedAccount,
) -> None:
    before = await balance(platform, tenant.account_id)
    post_id = await schedule(tenant, {"caption": "After revocation", "r2_key": await an_image(tenant)})
    pinterest.revoke_everything()
    await drain(worker)
    post = await post_row(platform, post_id)
    assert (post.status, post.refunded) == ("failed", True)
    assert post.error is not None and post.error.startswith("needs_reauth: ")
    assert await balance(platform, tenant.account_id) == before
    assert (await stored_account(platform, account.id)).status == "needs_reauth"
    again = await sign_in(tenant, client, platform, pinterest)
    assert (again.id, again.status) == (account.id, "active")


async def test_a_rate_limited_pin_waits_for_retry_after_without_using_a_retry(
    tenant: Tenant, platform: Platform, worker: WorkerContext, pinterest: PinterestStandIn, account: ConnectedAccount
) -> None:
    post_id = await schedule(tenant, {"caption": "Behind the limit", "r2_key": await an_image(tenant)})
    pinterest.retry_after = 600
    await drain(worker)
    post = await post_row(platform, post_id)
    assert (post.status, post.failures) == ("scheduled", 0)
    assert post.due_at is not None and post.due_at > datetime.now(UTC) + timedelta(minutes=9)
    assert pinterest.pins == {}
    await make_due(platform, post_id)
    await drain(worker)
    assert (await post_row(platform, post_id)).status == "published"
    assert len(pinterest.pins) == 1


async def test_a_pin_pinterest_blocks_as_spam_fails_without_touching_the_account(
    tenant: Tenant, platform: Platform, worker: WorkerContext, pinterest: PinterestStandIn, account: ConnectedAccount
) -> None:
    pinterest.spam = True
    post_id = await schedule(tenant, {"caption": "Buy now buy now", "r2_key": await an_image(tenant)})
    await drain(worker)
    post = await post_row(platform, post_id)
    assert (post.status, post.refunded, post.failures) == ("failed", True, 0)
    assert post.error is not None and post.error.startswith("pinterest refused the Pin as spam")
    assert (await stored_account(platform, account.id)).status == "active"


async def test_pinterest_media_and_text_rules_are_checked_before_any_credit_is_spent(
    tenant: Tenant, platform: Platform, pinterest: PinterestStandIn, account: ConnectedAccount
) -> None:
    image = await an_image(tenant)
    no_media = await refused(tenant, platform, {"caption": "Words alone", "platforms": ["pinterest"]})
    assert "pinterest need media" in no_media["message"]
    too_long = await refused(tenant, platform, {"caption": "x" * 801, "platforms": ["pinterest"], "r2_key": image})
    assert "pinterest (800 characters)" in too_long["message"]
    title = await refused(
        tenant, platform, {"caption": "Soup", "title": "t" * 101, "platforms": ["pinterest"], "r2_key": image}
    )
    assert title["rule"] == "pinterest.title_limit"
    short = await stored(tenant, mp4(64, 96, 2), "video/mp4")
    error = await refused(tenant, platform, {"caption": "Clip", "platforms": ["pinterest"], "r2_key": short})
    assert error["rule"] == "pinterest.video.min_seconds"
    wide = await stored(tenant, mp4(256, 96, 5), "video/mp4")
    error = await refused(tenant, platform, {"caption": "Wide", "platforms": ["pinterest"], "r2_key": wide})
    assert error["rule"] == "pinterest.video.aspect_ratio"
    six = [await an_image(tenant) for _ in range(6)]
    error = await refused(tenant, platform, {"caption": "Many", "platforms": ["pinterest"], "r2_keys": six})
    assert error["rule"] == "pinterest.max_items"
    gif = await stored(
        tenant, base64.b64decode("R0lGODlhAQABAIAAAAAAAP///yH5BAEAAAAALAAAAAABAAEAAAIBRAA7"), "image/gif"
    )
    error = await refused(tenant, platform, {"caption": "Gif", "platforms": ["pinterest"], "r2_key": gif})
    assert error["rule"] == "pinterest.formats"
    assert pinterest.pins == {} and pinterest.create_requests == 0


async def test_metrics_come_from_pinterest_s_pin_analytics(
    tenant: Tenant, platform: Platform, worker: WorkerContext, pinterest: PinterestStandIn, account: ConnectedAccount
) -> None:
    post_id = await schedule(tenant, {"caption": "Count me", "r2_key": await an_image(tenant)})
    await drain(worker)
    post = await post_row(platform, post_id)
    assert post.external_post_id is not None
    connector, view = configured_connector(platform, "pinterest", account)
    counters = await connector.fetch_metrics(view, post.external_post_id)
    assert counters == {"views": 240, "saves": 20, "likes": 12, "comments": 2}
    [query] = pinterest.analytics_queries
    assert query["metric_types"] == "IMPRESSION,SAVE,TOTAL_REACTIONS,TOTAL_COMMENTS"


async def test_without_its_app_settings_the_pinterest_connector_names_the_settings_it_needs(
    tenant: Tenant, client: httpx.AsyncClient, platform: Platform
) -> None:
    async with platform.session_factory() as session, session.begin():
        with pytest.raises(ValidationFailed) as refused_create:
            await accounts_service.create(
                session=session,
                settings=platform.settings,
                project_id=tenant.project_id,
                platform="pinterest",
                connector_name="pinterest",
                fields={},
            )
    assert refused_create.value.details["missing_settings"] == [
        "TOOLHOST_DISTRIBUTION__CONNECTORS__PINTEREST_CLIENT_ID",
        "TOOLHOST_DISTRIBUTION__CONNECTORS__PINTEREST_CLIENT_SECRET",
    ]


async def test_a_worker_whose_post_another_worker_took_over_stops_before_pinning_it(
    tenant: Tenant, platform: Platform, worker: WorkerContext, pinterest: PinterestStandIn, account: ConnectedAccount
) -> None:
    pinterest.hold_processing = asyncio.Event()
    post_id = await schedule(
        tenant, {"caption": "A slow clip", "r2_key": await stored(tenant, mp4(64, 96, 5), "video/mp4")}
    )
    running = asyncio.create_task(run_jobs(worker))
    async with asyncio.timeout(30):
        await pinterest.processing_asked.wait()
    # The slow worker's lease ran out meanwhile and another worker claimed the post.
    job_id = (await post_row(platform, post_id)).job_id
    async with platform.session_factory() as session, session.begin():
        await session.execute(update(Job).where(Job.id == job_id).values(lease_owner="worker-b"))
    pinterest.hold_processing.set()
    pinterest.hold_processing = None
    async with asyncio.timeout(30):
        await running
    assert pinterest.create_requests == 0, "the worker that lost the post did not pin it"

    # The other worker died too; the post returns to the queue and is pinned once, reusing the processed video.
    await expire_lease(platform, post_id)
    await drain(worker)
    post = await post_row(platform, post_id)
    assert post.status == "published", post.error
    assert (pinterest.create_requests, len(pinterest.pins), len(pinterest.media)) == (1, 1, 1)
