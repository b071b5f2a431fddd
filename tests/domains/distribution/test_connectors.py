"""Mastodon, Bluesky and YouTube connectors against local stand-ins of their APIs, through the publish jobs."""

from __future__ import annotations

import base64
import io
import uuid
from collections.abc import AsyncIterator
from datetime import UTC, datetime, timedelta
from pathlib import Path

import pytest
from PIL import Image
from sqlalchemy import select, update

from tests.conftest import Tenant
from tests.domains.distribution.conftest import drain, local_settings, make_due
from tests.domains.distribution.standins import BlueskyStandIn, MastodonStandIn, YouTubeStandIn, serve
from toolhost.config import Settings
from toolhost.domains.distribution import accounts as accounts_service
from toolhost.domains.distribution.models import ConnectedAccount, Post
from toolhost.platform.jobs import Job, WorkerContext
from toolhost.platform.runtime import Platform
from toolhost.providers.connectors.registry import Connectors
from toolhost.providers.connectors.vault import TokenVault


def png_bytes() -> bytes:
    buffer = io.BytesIO()
    Image.new("RGB", (8, 8), (200, 30, 30)).save(buffer, format="PNG")
    return buffer.getvalue()


MP4 = b"\x00\x00\x00\x18ftypmp42\x00\x00\x00\x00mp42isom" + bytes(range(256)) * 40


async def upload(tenant: Tenant, data: bytes, content_type: str) -> str:
    uploaded = await tenant.data(
        "upload_media", {"file_data": base64.b64encode(data).decode(), "content_type": content_type}
    )
    return str(uploaded["r2_key"])


async def connect(
    platform: Platform, project_id: uuid.UUID, platform_name: str, connector: str, fields: dict[str, str]
) -> ConnectedAccount:
    async with platform.session_factory() as session, session.begin():
        account, _ = await accounts_service.create(
            session=session,
            settings=platform.settings,
            project_id=project_id,
            platform=platform_name,
            connector_name=connector,
            fields=fields,
        )
    return account


async def the_post(platform: Platform, post_id: str) -> Post:
    async with platform.session_factory() as session:
        post = await session.get(Post, uuid.UUID(post_id))
        assert post is not None
        return post


async def crash_and_expire(platform: Platform, post_id: str) -> None:
    """As if a worker had claimed the post's job, published, and died before recording it."""
    async with platform.session_factory() as session, session.begin():
        post = await session.get(Post, uuid.UUID(post_id))
        assert post is not None
        post.status = "publishing"
        await session.execute(
            update(Job)
            .where(Job.id == post.job_id)
            .values(
                status="processing",
                billing_status="reserved",
                completed_at=None,
                lease_owner="dead-worker",
                lease_expires_at=datetime.now(UTC) - timedelta(seconds=1),
            )
        )


@pytest.fixture
async def mastodon() -> AsyncIterator[tuple[MastodonStandIn, str]]:
    stand_in = MastodonStandIn()
    async with serve(stand_in.app()) as base:
        yield stand_in, base


async def test_mastodon_publishes_a_status_with_its_media_once_under_the_idempotency_key(
    tenant: Tenant, platform: Platform, worker: WorkerContext, mastodon: tuple[MastodonStandIn, str]
) -> None:
    stand_in, base = mastodon
    account = await connect(
        platform,
        tenant.project_id,
        "mastodon",
        "mastodon",
        {"instance_url": base, "access_token": stand_in.token},
    )
    assert account.username == "@alice@127.0.0.1"
    async with platform.session_factory() as session:
        stored = await session.scalar(select(ConnectedAccount.secret).where(ConnectedAccount.id == account.id))
    assert stored is not None
    assert stand_in.token not in stored
    assert TokenVault(platform.settings.keyring).open(stored)["access_token"] == stand_in.token

    key = await upload(tenant, png_bytes(), "image/png")
    data = await tenant.data(
        "schedule_post",
        {
            "caption": "Toot with a picture",
            "platforms": ["mastodon"],
            "r2_key": key,
            "platform_metadata": {"mastodon": {"visibility": "unlisted"}},
        },
    )
    post_id = data["results"]["Mastodon"]["postId"]
    await drain(worker)
    post = await the_post(platform, post_id)
    assert post.status == "published"
    [status] = stand_in.statuses.values()
    assert post.external_post_id == status["id"]
    assert post.external_url == status["url"]
    assert status["media_ids"] == ["1"]
    assert status["visibility"] == "unlisted"
    assert stand_in.media["1"]["type"] == "image/png"
    assert stand_in.media["1"]["head"].startswith(b"\x89PNG")

    await crash_and_expire(platform, post_id)
    await drain(worker)
    assert len(stand_in.statuses) == 1
    assert len(stand_in.media) == 1
    assert stand_in.requests == ["status"] * 2
    assert (await the_post(platform, post_id)).status == "published"

    connector = Connectors(platform.settings).get("mastodon")
    assert connector is not None
    view = accounts_service.session_of(account, TokenVault(platform.settings.keyring))
    assert await connector.fetch_metrics(view, status["id"]) == {"likes": 3, "shares": 2, "comments": 1}
    reply = await connector.post_comment(view, status["id"], "Thanks all")
    assert [comment.id for comment in await connector.list_comments(view, status["id"], limit=10)] == [reply.id]


async def test_mastodon_refuses_a_bad_token_at_connect_time(
    tenant: Tenant, platform: Platform, mastodon: tuple[MastodonStandIn, str]
) -> None:
    from toolhost.platform.results import UpstreamFailed

    with pytest.raises(UpstreamFailed, match="refused the credentials"):
        await connect(
            platform,
            tenant.project_id,
            "mastodon",
            "mastodon",
            {"instance_url": mastodon[1], "access_token": "wrong"},
        )


async def test_bluesky_renews_an_expired_session_uploads_the_image_and_never_posts_twice(
    tenant: Tenant, platform: Platform, worker: WorkerContext
) -> None:
    stand_in = BlueskyStandIn()
    async with serve(stand_in.app()) as base:
        account = await connect(
            platform,
            tenant.project_id,
            "bluesky",
            "bluesky",
            {"handle": stand_in.handle, "app_password": stand_in.password, "service": base},
        )
        assert account.username == stand_in.handle
        assert account.has_refresh_token
        key = await upload(tenant, png_bytes(), "image/png")
        stand_in.expire_access = True
        data = await tenant.data(
            "schedule_post",
            {
                "caption": "Skeet #toolhost https://example.com",
                "platforms": ["bluesky"],
                "r2_key": key,
                "platform_metadata": {"bluesky": {"content_labels": ["graphic"]}},
            },
        )
        post_id = data["results"]["Bluesky"]["postId"]
        await drain(worker)
        post = await the_post(platform, post_id)
        assert post.status == "published", post.error
        [(rkey, record)] = stand_in.records.items()
        assert post.external_post_id == f"at://{stand_in.did}/app.bsky.feed.post/{rkey}"
        assert record["embed"]["images"][0]["image"]["mimeType"] == "image/png"
        assert record["labels"]["values"] == [{"val": "graphic"}]
        assert {facet["features"][0]["$type"] for facet in record["facets"]} == {
            "app.bsky.richtext.facet#tag",
            "app.bsky.richtext.facet#link",
        }
        async with platform.session_factory() as session:
            refreshed = await session.get(ConnectedAccount, account.id)
        assert refreshed is not None
        assert TokenVault(platform.settings.keyring).open(refreshed.secret)["access_jwt"] == stand_in.access

        await crash_and_expire(platform, post_id)
        await drain(worker)
        assert stand_in.creates == 1
        assert (await the_post(platform, post_id)).external_post_id == post.external_post_id


@pytest.fixture
async def youtube_settings(database_url: str, tmp_path: Path) -> AsyncIterator[tuple[Settings, YouTubeStandIn]]:
    stand_in = YouTubeStandIn()
    async with serve(stand_in.app()) as base:
        stand_in.base_url = base
        yield (
            local_settings(
                database_url,
                tmp_path / "media",
                distribution={
                    "connectors": {
                        "youtube_client_id": stand_in.client_id,
                        "youtube_client_secret": stand_in.client_secret,
                        "youtube_token_url": f"{base}/token",
                        "youtube_api_url": f"{base}/youtube/v3",
                        "youtube_upload_url": f"{base}/upload/youtube/v3",
                    }
                },
            ),
            stand_in,
        )


@pytest.fixture
def settings(request: pytest.FixtureRequest, database_url: str, tmp_path: Path) -> Settings:
    if "youtube_settings" in request.fixturenames:
        return request.getfixturevalue("youtube_settings")[0]  # type: ignore[no-any-return]
    return local_settings(database_url, tmp_path / "media")


async def test_youtube_refreshes_its_token_and_resumes_an_interrupted_upload_without_a_second_video(
    tenant: Tenant,
    platform: Platform,
    worker: WorkerContext,
    youtube_settings: tuple[Settings, YouTubeStandIn],
) -> None:
    _, stand_in = youtube_settings
    account = await connect(
        platform, tenant.project_id, "youtube", "youtube", {"refresh_token": stand_in.refresh_token}
    )
    assert account.username == "Alice Channel"
    assert account.has_refresh_token
    key = await upload(tenant, MP4, "video/mp4")
    stand_in.access_token = "revoked-elsewhere"  # the stored access token no longer works: refresh on 401
    stand_in.drop_first_upload = True
    data = await tenant.data(
        "schedule_post",
        {
            "caption": "Demo video",
            "title": "Demo",
            "platforms": ["youtube"],
            "r2_key": key,
            "platform_metadata": {"youtube": {"privacy_status": "unlisted", "tags": ["demo"]}},
        },
    )
    post_id = data["results"]["YouTube"]["postId"]
    await drain(worker)
    post = await the_post(platform, post_id)
    assert post.status == "scheduled"
    assert post.failures == 1
    assert "upload_url" in post.connector_state
    await make_due(platform, post.id)
    await drain(worker)
    post = await the_post(platform, post_id)
    assert post.status == "published", post.error
    [video] = stand_in.videos.values()
    assert len(stand_in.sessions) == 1
    assert video["size"] == len(MP4)
    assert video["head"] == MP4[:12].hex()
    assert video["snippet"]["title"] == "Demo"
    assert video["status"]["privacyStatus"] == "unlisted"
    assert video["status"]["containsSyntheticMedia"] is True
    assert post.external_url == f"https://www.youtube.com/watch?v={video['id']}"
    assert stand_in.refreshes >= 2
