"""Fixtures of the comments tests: the platforms' stand-ins on 127.0.0.1, connected accounts, published posts."""

from __future__ import annotations

import json
import time
import uuid
from collections.abc import AsyncIterator
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

import httpx
import pytest

from tests.domains.distribution.conftest import local_settings
from tests.domains.distribution.standins import (
    BlueskyStandIn,
    MastodonStandIn,
    WebhookReceiver,
    YouTubeStandIn,
    serve,
)
from toolhost.config import Settings
from toolhost.domains.distribution import accounts as accounts_service
from toolhost.domains.distribution.models import Post
from toolhost.platform.runtime import Platform
from toolhost.providers.connectors import webhook


@pytest.fixture
async def youtube() -> AsyncIterator[YouTubeStandIn]:
    stand_in = YouTubeStandIn()
    async with serve(stand_in.app()) as base:
        stand_in.base_url = base
        yield stand_in


@pytest.fixture
async def mastodon() -> AsyncIterator[tuple[MastodonStandIn, str]]:
    stand_in = MastodonStandIn()
    async with serve(stand_in.app()) as base:
        yield stand_in, base


@pytest.fixture
async def bluesky() -> AsyncIterator[tuple[BlueskyStandIn, str]]:
    stand_in = BlueskyStandIn()
    async with serve(stand_in.app()) as base:
        yield stand_in, base


@pytest.fixture
async def receiver_url() -> AsyncIterator[str]:
    """A webhook receiver's URL on 127.0.0.1 (connecting a webhook account checks its target)."""
    async with serve(WebhookReceiver().app()) as base:
        yield f"{base}/hook"


@pytest.fixture
def settings(database_url: str, tmp_path: Path, youtube: YouTubeStandIn) -> Settings:
    """The fetcher may reach the stand-ins; the YouTube connector is configured against its stand-in."""
    base = youtube.base_url
    return local_settings(
        database_url,
        tmp_path / "media",
        distribution={
            "connectors": {
                "youtube_client_id": youtube.client_id,
                "youtube_client_secret": youtube.client_secret,
                "youtube_auth_url": "https://accounts.example.test/o/oauth2/auth",
                "youtube_token_url": f"{base}/token",
                "youtube_api_url": f"{base}/youtube/v3",
                "youtube_upload_url": f"{base}/upload/youtube/v3",
            }
        },
    )


async def connect(
    platform: Platform, project_id: uuid.UUID, platform_name: str, connector: str, fields: dict[str, str]
) -> tuple[uuid.UUID, dict[str, str]]:
    """Connects an account the way the connect page does; returns its id and what is shown once."""
    async with platform.session_factory() as session, session.begin():
        account, shown = await accounts_service.create(
            session=session,
            settings=platform.settings,
            project_id=project_id,
            platform=platform_name,
            connector_name=connector,
            fields=fields,
        )
    return account.id, shown


async def connect_youtube(platform: Platform, project_id: uuid.UUID) -> uuid.UUID:
    account_id, _ = await connect(platform, project_id, "youtube", "youtube", {"refresh_token": "refresh-yt"})
    return account_id


async def published_post(
    platform: Platform,
    *,
    project_id: uuid.UUID,
    account_id: uuid.UUID,
    connected_account_id: uuid.UUID,
    platform_name: str,
    external_post_id: str,
    title: str | None = None,
    age: timedelta = timedelta(hours=1),
) -> None:
    """A post the worker published through the account (its row as the dispatcher leaves it)."""
    published_at = datetime.now(UTC) - age
    async with platform.session_factory() as session, session.begin():
        session.add(
            Post(
                project_id=project_id,
                account_id=account_id,
                connected_account_id=connected_account_id,
                platform=platform_name,
                status="published",
                caption="Launch day",
                title=title,
                due_at=published_at,
                idempotency_key=uuid.uuid4().hex,
                external_post_id=external_post_id,
                published_at=published_at,
            )
        )


async def send_webhook_comments(
    client: httpx.AsyncClient, account_id: uuid.UUID, secret: str, comments: list[dict[str, Any]]
) -> httpx.Response:
    """What a webhook receiver does: POST the comments, signed with the account's secret."""
    body = json.dumps({"account_id": str(account_id), "comments": comments}).encode()
    return await client.post(
        "/v1/connectors/webhook/events",
        content=body,
        headers={
            "Content-Type": "application/json",
            webhook.SIGNATURE_HEADER: webhook.sign(secret, body, int(time.time())),
        },
    )
