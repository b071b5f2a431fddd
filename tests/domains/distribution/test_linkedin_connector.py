"""The `linkedin` connector against the local LinkedIn stand-in: connecting through the connect page (OAuth 2.0
authorization code with a checked state), publishing as a member or an organisation with images or a video
exactly once, and each documented error case."""

from __future__ import annotations

import asyncio
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
from tests.domains.distribution.linkedin_standin import LinkedInStandIn
from tests.domains.distribution.oauth_flows import (
    configured_connector,
    expire_lease,
    kill_after_accepting,
    listed_account,
    sign_in_through_connect_page,
    stored_account,
)
from tests.domains.distribution.standins import serve
from tests.domains.distribution.test_media_rules import mp4, png, refused, stored
from tests.domains.distribution.test_schedule_post import balance, post_row
from toolhost.config import Settings
from toolhost.domains.distribution import accounts as accounts_service
from toolhost.domains.distribution.models import ConnectedAccount, Post
from toolhost.platform.dates import iso
from toolhost.platform.jobs import WorkerContext
from toolhost.platform.runtime import Platform
from toolhost.platform.worker import run_jobs
from toolhost.providers.connectors.vault import TokenVault

AUTHORIZE = "https://linkedin.example.test/oauth/v2/authorization"


@pytest.fixture
async def linkedin() -> AsyncIterator[LinkedInStandIn]:
    stand_in = LinkedInStandIn()
    async with serve(stand_in.app()) as base:
        stand_in.base = base
        yield stand_in


@pytest.fixture
def settings(request: pytest.FixtureRequest, database_url: str, tmp_path: Path) -> Settings:
    """The LinkedIn app's settings point at the stand-in; a rate limit is never waited out in place."""
    if "linkedin" not in request.fixturenames:
        return local_settings(database_url, tmp_path / "media")
    stand_in: LinkedInStandIn = request.getfixturevalue("linkedin")
    return local_settings(
        database_url,
        tmp_path / "media",
        distribution={
            "connectors": {
                "linkedin_client_id": stand_in.client_id,
                "linkedin_client_secret": stand_in.client_secret,
                "linkedin_authorize_url": AUTHORIZE,
                "linkedin_token_url": f"{stand_in.base}/oauth/v2/accessToken",
                "linkedin_api_url": stand_in.base,
                "linkedin_organizations": "organizations" in request.fixturenames,
                "rate_limit_wait": 0,
            }
        },
    )


@pytest.fixture
def organizations() -> None:
    """Marks a test whose LinkedIn app has the Community Management API (organisation scopes)."""


async def sign_in(tenant: Tenant, client: httpx.AsyncClient, stand_in: LinkedInStandIn) -> ConnectedAccount:
    [listed] = await sign_in_through_connect_page(
        tenant, client, stand_in, platform="linkedin", connector="linkedin", label="LinkedIn", authorize=AUTHORIZE
    )
    return listed_account(listed)


@pytest.fixture
async def account(
    tenant: Tenant, client: httpx.AsyncClient, platform: Platform, linkedin: LinkedInStandIn
) -> ConnectedAccount:
    """The brand's LinkedIn member, connected through the connect page before the test begins."""
    return await sign_in(tenant, client, linkedin)


async def save_marker(platform: Platform, post_id: str, *, since: datetime) -> None:
    """An earlier worker saved its attempt marker and died, before or after its request reached LinkedIn."""
    async with platform.session_factory() as session, session.begin():
        await session.execute(
            update(Post).where(Post.id == uuid.UUID(post_id)).values(connector_state={"attempt": {"since": iso(since)}})
        )


async def schedule(tenant: Tenant, arguments: dict[str, Any]) -> str:
    data = await tenant.data("schedule_post", {"platforms": ["linkedin"], **arguments})
    return str(data["results"]["LinkedIn"]["postId"])


async def test_the_connect_page_signs_in_to_linkedin_with_a_checked_state_and_the_secret_in_the_form(
    tenant: Tenant, client: httpx.AsyncClient, platform: Platform, linkedin: LinkedInStandIn
) -> None:
    started = await tenant.data("start_platform_connection", {"platform": "linkedin"})
    path = str(started["deep_link"]).removeprefix("http://testserver")
    assert (await client.get(path)).status_code == 200
    redirect = await client.get(f"{path}/oauth/linkedin")
    query = {name: values[0] for name, values in parse_qs(urlsplit(redirect.headers["location"]).query).items()}
    assert query["scope"] == "openid profile w_member_social"
    assert "code_challenge" not in query, "LinkedIn takes PKCE only from some apps"
    code = linkedin.approve(query)

    forged = await client.get("/app/connect/oauth/callback", params={"code": code, "state": "forged-state"})
    assert forged.status_code == 400
    assert linkedin.token_requests == [], "a forged state never reaches LinkedIn's token endpoint"

    done = await client.get("/app/connect/oauth/callback", params={"code": code, "state": query["state"]})
    assert done.status_code == 200, done.text
    assert "Alice Example" in done.text
    [grant] = linkedin.token_requests
    assert grant["grant_type"] == "authorization_code"
    assert (grant["client_id"], grant["client_secret"]) == (linkedin.client_id, linkedin.client_secret)
    [listed] = (await tenant.data("list_connected_accounts", {}))["accounts"]
    assert (listed["connector"], listed["status"]) == ("linkedin", "active")
    row = await stored_account(platform, uuid.UUID(listed["id"]))
    material = TokenVault(platform.settings.keyring).open(row.secret)
    assert material["access_token"] in linkedin.access_tokens and material["access_token"] not in row.secret
    assert row.expires_at is not None, "without a refresh token the account lives as long as its token"
    assert row.settings == {"person_urn": f"urn:li:person:{linkedin.member_id}", "organizations": []}


async def test_a_text_post_is_published_once_as_the_member_with_its_hashtags_as_linkedin_markup(
    tenant: Tenant, platform: Platform, worker: WorkerContext, linkedin: LinkedInStandIn, account: ConnectedAccount
) -> None:
    post_id = await schedule(tenant, {"caption": "Launch day (finally) #launch", "hashtags": ["#product"]})
    await drain(worker)
    post = await post_row(platform, post_id)
    assert post.status == "published", post.error
    [published] = linkedin.posts.values()
    assert post.external_post_id == published["id"], "the x-restli-id of the created post is recorded"
    assert post.external_url == f"https://www.linkedin.com/feed/update/{published['id']}/"
    assert published["author"] == f"urn:li:person:{linkedin.member_id}"
    assert published["commentary"] == r"Launch day \(finally\) {hashtag|\#|launch}" + "\n\n{hashtag|\\#|product}"
    assert linkedin.create_requests == 1
    assert all(seen["linkedin-version"] == "202510" for seen in linkedin.headers_seen)
    assert all(seen["x-restli-protocol-version"] == "2.0.0" for seen in linkedin.headers_seen)


async def test_two_images_become_a_multi_image_post_uploaded_through_the_images_api(
    tenant: Tenant, platform: Platform, worker: WorkerContext, linkedin: LinkedInStandIn, account: ConnectedAccount
) -> None:
    keys = [await stored(tenant, png(120, 80), "image/png"), await stored(tenant, png(60, 60), "image/png")]
    post_id = await schedule(tenant, {"caption": "Two views", "r2_keys": keys})
    await drain(worker)
    assert (await post_row(platform, post_id)).status == "published"
    [published] = linkedin.posts.values()
    images = [image["id"] for image in published["content"]["multiImage"]["images"]]
    assert len(images) == 2
    assert all(linkedin.images[urn]["data"][:8] == b"\x89PNG\r\n\x1a\n" for urn in images)
    assert {linkedin.images[urn]["owner"] for urn in images} == {f"urn:li:person:{linkedin.member_id}"}


async def test_a_video_is_uploaded_in_parts_finalized_and_posted_once_available(
    tenant: Tenant, platform: Platform, worker: WorkerContext, linkedin: LinkedInStandIn, account: ConnectedAccount
) -> None:
    video = mp4(64, 36, 4)
    post_id = await schedule(tenant, {"caption": "A clip", "r2_key": await stored(tenant, video, "video/mp4")})
    await drain(worker)
    assert (await post_row(platform, post_id)).status == "published"
    [published] = linkedin.posts.values()
    urn = published["content"]["media"]["id"]
    assert linkedin.videos[urn]["data"] == video
    assert linkedin.videos[urn]["polls"] == 2, "posted only once LinkedIn said AVAILABLE"


async def test_a_video_linkedin_cannot_process_fails_the_post_with_its_reason_and_refunds_it(
    tenant: Tenant, platform: Platform, worker: WorkerContext, linkedin: LinkedInStandIn, account: ConnectedAccount
) -> None:
    linkedin.fail_processing = True
    post_id = await schedule(tenant, {"caption": "A clip", "r2_key": await stored(tenant, mp4(64, 36, 4), "video/mp4")})
    await drain(worker)
    post = await post_row(platform, post_id)
    assert (post.status, post.refunded) == ("failed", True)
    assert post.error == "linkedin could not process media 1: Video codec is not supported"
    assert linkedin.posts == {}


async def test_a_worker_killed_after_linkedin_accepted_the_post_does_not_post_it_twice(
    tenant: Tenant, platform: Platform, worker: WorkerContext, linkedin: LinkedInStandIn, account: ConnectedAccount
) -> None:
    post_id = await schedule(tenant, {"caption": "Exactly once, no marker"})
    # The worker dies: LinkedIn has the post, toolhost never heard back
    await kill_after_accepting(platform, worker, linkedin, post_id)

    await drain(worker)
    post = await post_row(platform, post_id)
    [published] = linkedin.posts.values()
    assert post.status == "published", post.error
    assert post.external_post_id == published["id"]
    assert linkedin.create_requests == 1, "the retry found the post instead of posting it again"
    assert published["commentary"] == "Exactly once, no marker", "nothing was added to the text"


async def test_a_member_s_lost_post_is_adopted_from_linkedin_s_duplicate_refusal_instead_of_posted_twice(
    tenant: Tenant, platform: Platform, worker: WorkerContext, linkedin: LinkedInStandIn, account: ConnectedAccount
) -> None:
    linkedin.refuse_reading_posts = True  # no r_member_social, as for every app that is not a partner
    linkedin.hang_after_accepting = True
    post_id = await schedule(tenant, {"caption": "Maybe posted"})
    running = asyncio.create_task(run_jobs(worker))
    async with asyncio.timeout(30):
        await linkedin.accepted.wait()
    running.cancel()  # the worker dies: LinkedIn has the post, toolhost never heard back
    with pytest.raises(asyncio.CancelledError):
        await running
    linkedin.release.set()
    linkedin.hang_after_accepting = False
    await expire_lease(platform, post_id)
    await drain(worker)
    post = await post_row(platform, post_id)
    [published] = linkedin.posts.values()
    assert post.status == "published", post.error
    assert post.external_post_id == published["id"], "the post LinkedIn named as the duplicate is adopted"
    assert linkedin.create_requests == 2


async def test_a_member_s_lost_attempt_that_never_reached_linkedin_is_posted_on_the_retry(
    tenant: Tenant, platform: Platform, worker: WorkerContext, linkedin: LinkedInStandIn, account: ConnectedAccount
) -> None:
    linkedin.refuse_reading_posts = True
    post_id = await schedule(tenant, {"caption": "Never arrived"})
    await save_marker(platform, post_id, since=datetime.now(UTC) - timedelta(minutes=2))
    await drain(worker)
    post = await post_row(platform, post_id)
    [published] = linkedin.posts.values()
    assert post.status == "published", post.error
    assert (post.external_post_id, linkedin.create_requests) == (published["id"], 1)


async def test_a_member_s_attempt_lost_longer_ago_than_linkedin_is_relied_on_fails_instead_of_posting(
    tenant: Tenant, platform: Platform, worker: WorkerContext, linkedin: LinkedInStandIn, account: ConnectedAccount
) -> None:
    linkedin.refuse_reading_posts = True
    post_id = await schedule(tenant, {"caption": "Maybe posted long ago"})
    await save_marker(platform, post_id, since=datetime.now(UTC) - timedelta(hours=2))
    await drain(worker)
    post = await post_row(platform, post_id)
    assert (post.status, post.refunded) == ("failed", True)
    assert post.error is not None and "may have posted" in post.error
    assert linkedin.create_requests == 0


async def test_duplicate_content_linkedin_refuses_fails_the_post_without_touching_the_account(
    tenant: Tenant, platform: Platform, worker: WorkerContext, linkedin: LinkedInStandIn, account: ConnectedAccount
) -> None:
    earlier = (datetime.now(UTC) - timedelta(minutes=20)).timestamp()
    linkedin.add_post(f"urn:li:person:{linkedin.member_id}", "Same words as before", created_at=earlier)
    post_id = await schedule(tenant, {"caption": "Same words as before"})
    await drain(worker)
    post = await post_row(platform, post_id)
    assert (post.status, post.refunded) == ("failed", True)
    assert post.error is not None and "duplicate content" in post.error
    assert len(linkedin.posts) == 1
    assert (await stored_account(platform, account.id)).status == "active"


async def test_a_revoked_token_marks_the_account_needs_reauth_and_the_post_fails_refunded(
    tenant: Tenant,
    client: httpx.AsyncClient,
    platform: Platform,
    worker: WorkerContext,
    linkedin: LinkedInStandIn,
    account: ConnectedAccount,
) -> None:
    before = await balance(platform, tenant.account_id)
    post_id = await schedule(tenant, {"caption": "After revocation"})
    linkedin.revoke_everything()
    await drain(worker)
    post = await post_row(platform, post_id)
    assert post.status == "failed" and post.refunded
    assert post.error is not None and post.error.startswith("needs_reauth: ")
    assert await balance(platform, tenant.account_id) == before
    assert linkedin.posts == {}
    assert (await stored_account(platform, account.id)).status == "needs_reauth"
    again = await sign_in(tenant, client, linkedin)
    assert (again.id, again.status) == (account.id, "active")


async def test_an_expired_token_is_refreshed_when_linkedin_issued_a_refresh_token(
    tenant: Tenant, client: httpx.AsyncClient, platform: Platform, worker: WorkerContext, linkedin: LinkedInStandIn
) -> None:
    linkedin.issue_refresh_tokens = True
    await sign_in(tenant, client, linkedin)
    linkedin.access_tokens.clear()  # "Error Handling": 401 EXPIRED_ACCESS_TOKEN
    post_id = await schedule(tenant, {"caption": "Still connected"})
    await drain(worker)
    assert (await post_row(platform, post_id)).status == "published"
    assert [request["grant_type"] for request in linkedin.token_requests] == ["authorization_code", "refresh_token"]
    assert linkedin.token_requests[1]["client_secret"] == linkedin.client_secret


async def test_a_rate_limited_post_waits_for_retry_after_and_is_published_once(
    tenant: Tenant, platform: Platform, worker: WorkerContext, linkedin: LinkedInStandIn, account: ConnectedAccount
) -> None:
    linkedin.rate_limit_retry_after = 600
    post_id = await schedule(tenant, {"caption": "Behind the limit"})
    await drain(worker)
    post = await post_row(platform, post_id)
    assert post.status == "scheduled"
    assert post.due_at is not None and post.due_at > datetime.now(UTC) + timedelta(minutes=9)
    assert post.failures == 0, "a rate limit does not use up one of the post's retries"
    assert linkedin.posts == {}
    await make_due(platform, post_id)
    await drain(worker)
    assert (await post_row(platform, post_id)).status == "published"
    assert len(linkedin.posts) == 1


async def test_an_organisation_the_member_administers_posts_and_another_is_refused(
    tenant: Tenant,
    platform: Platform,
    worker: WorkerContext,
    linkedin: LinkedInStandIn,
    organizations: None,
    account: ConnectedAccount,
) -> None:
    row = await stored_account(platform, account.id)
    assert row.settings["organizations"] == ["urn:li:organization:2414183"]
    ours = await schedule(
        tenant, {"caption": "From the company", "platform_metadata": {"linkedin": {"organization": "2414183"}}}
    )
    theirs = await schedule(tenant, {"caption": "Not ours", "platform_metadata": {"linkedin": {"organization": "999"}}})
    await drain(worker)
    assert (await post_row(platform, ours)).status == "published"
    [published] = linkedin.posts.values()
    assert published["author"] == "urn:li:organization:2414183"
    refused_post = await post_row(platform, theirs)
    assert refused_post.status == "failed" and refused_post.error is not None
    assert "does not administer urn:li:organization:999" in refused_post.error


async def test_linkedin_media_rules_are_checked_before_any_credit_is_spent(
    tenant: Tenant, platform: Platform, linkedin: LinkedInStandIn, account: ConnectedAccount
) -> None:
    too_long = await refused(tenant, platform, {"caption": "x" * 3001, "platforms": ["linkedin"]})
    assert "linkedin (3000 characters)" in too_long["message"]
    short = await stored(tenant, mp4(64, 36, 2), "video/mp4")
    error = await refused(tenant, platform, {"caption": "Clip", "platforms": ["linkedin"], "r2_key": short})
    assert error["rule"] == "linkedin.video.min_seconds"
    mixed = [await stored(tenant, mp4(64, 36, 4), "video/mp4"), await stored(tenant, png(), "image/png")]
    error = await refused(tenant, platform, {"caption": "Mix", "platforms": ["linkedin"], "r2_keys": mixed})
    assert error["rule"] == "linkedin.video.alone"
    webp = await stored(
        tenant,
        b"RIFF\x1a\x00\x00\x00WEBPVP8L\x0d\x00\x00\x00/\x00\x00\x00\x10\x07\x10\x11\x11\x88\x88\xfe\x07\x00",
        "image/webp",
    )
    error = await refused(tenant, platform, {"caption": "Webp", "platforms": ["linkedin"], "r2_key": webp})
    assert error["rule"] == "linkedin.formats"
    assert linkedin.posts == {}


async def test_metrics_come_from_linkedin_s_social_metadata(
    tenant: Tenant, platform: Platform, worker: WorkerContext, linkedin: LinkedInStandIn, account: ConnectedAccount
) -> None:
    post_id = await schedule(tenant, {"caption": "Count me"})
    await drain(worker)
    post = await post_row(platform, post_id)
    assert post.external_post_id is not None
    connector, view = configured_connector(platform, "linkedin", await stored_account(platform, account.id))
    assert await connector.fetch_metrics(view, post.external_post_id) == {"likes": 6, "comments": 3}


async def test_without_its_app_settings_the_linkedin_connector_names_the_settings_it_needs(
    tenant: Tenant, client: httpx.AsyncClient, platform: Platform
) -> None:
    from toolhost.platform.results import ValidationFailed

    async with platform.session_factory() as session, session.begin():
        with pytest.raises(ValidationFailed) as refused_create:
            await accounts_service.create(
                session=session,
                settings=platform.settings,
                project_id=tenant.project_id,
                platform="linkedin",
                connector_name="linkedin",
                fields={},
            )
    assert refused_create.value.details["missing_settings"] == [
        "TOOLHOST_DISTRIBUTION__CONNECTORS__LINKEDIN_CLIENT_ID",
        "TOOLHOST_DISTRIBUTION__CONNECTORS__LINKEDIN_CLIENT_SECRET",
    ]
    started = await tenant.data("start_platform_connection", {"platform": "linkedin"})
    path = str(started["deep_link"]).removeprefix("http://testserver")
    oauth = await client.get(f"{path}/oauth/linkedin")
    assert oauth.status_code == 400 and "TOOLHOST_DISTRIBUTION__CONNECTORS__LINKEDIN_CLIENT_SECRET" in oauth.text
