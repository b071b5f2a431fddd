"""Fixtures of the analytics tests: webhook accounts, published posts and signed metric snapshots."""

from __future__ import annotations

import json
import time
import uuid
from dataclasses import dataclass
from datetime import datetime
from pathlib import Path
from typing import Any

import httpx
import pytest

from tests.conftest import Tenant, settings_for_test
from tests.domains.distribution.standins import MastodonStandIn
from toolhost.config import Settings
from toolhost.db.base import utcnow
from toolhost.domains.distribution import accounts as accounts_service
from toolhost.domains.distribution.models import Post
from toolhost.platform.runtime import Platform
from toolhost.providers.connectors import webhook


@pytest.fixture
def settings(database_url: str, tmp_path: Path) -> Settings:
    """Test settings whose fetcher may reach stand-ins and webhook targets on 127.0.0.1."""
    return settings_for_test(
        database_url=database_url,
        media={"root": str(tmp_path / "media")},
        fetch={"allow": ["127.0.0.1"], "allow_http": True},
    )


async def mastodon_channel(
    platform: Platform, client: httpx.AsyncClient, tenant: Tenant, mastodon: tuple[MastodonStandIn, str]
) -> Channel:
    """A Mastodon account of the tenant's project connected to the stand-in instance, as a Channel."""
    stand_in, base = mastodon
    async with platform.session_factory() as session, session.begin():
        account, _ = await accounts_service.create(
            session=session,
            settings=platform.settings,
            project_id=tenant.project_id,
            platform="mastodon",
            connector_name="mastodon",
            fields={"instance_url": base, "access_token": stand_in.token},
        )
    return Channel(platform, client, tenant.project_id, account.id, tenant.account_id, "", "mastodon")


@dataclass
class Channel:
    """A connected webhook account, its signing secret, and helpers to publish posts and push snapshots."""

    platform: Platform
    client: httpx.AsyncClient
    project_id: uuid.UUID
    account_id: uuid.UUID
    owner_account_id: uuid.UUID
    secret: str
    network: str

    async def published(
        self, *, at: datetime, caption: str = "A post", title: str | None = None, media_type: str | None = None
    ) -> Post:
        """A post this account published at `at` (as the dispatcher leaves it)."""
        async with self.platform.session_factory() as session, session.begin():
            post = Post(
                project_id=self.project_id,
                account_id=self.owner_account_id,
                connected_account_id=self.account_id,
                platform=self.network,
                status="published",
                caption=caption,
                title=title,
                media_type=media_type,
                due_at=at,
                idempotency_key=uuid.uuid4().hex,
                external_post_id=f"ext-{uuid.uuid4().hex[:12]}",
                published_at=at,
                created_at=at,
            )
            session.add(post)
        return post

    async def push(self, post: Post, **counts: Any) -> httpx.Response:
        """Sends one snapshot of the post through the signed webhook events endpoint."""
        body = json.dumps(
            {
                "account_id": str(self.account_id),
                "metrics": [{"external_post_id": post.external_post_id, "metrics": counts}],
            }
        ).encode()
        headers = {webhook.SIGNATURE_HEADER: webhook.sign(self.secret, body, int(time.time()))}
        response = await self.client.post("/v1/connectors/webhook/events", content=body, headers=headers)
        assert response.status_code == 202, response.text
        return response


async def open_channel(
    platform: Platform,
    client: httpx.AsyncClient,
    project_id: uuid.UUID,
    owner_account_id: uuid.UUID,
    network: str = "twitter",
) -> Channel:
    """Connects a webhook account the way `toolhost connections add` does."""
    async with platform.session_factory() as session, session.begin():
        account, shown = await accounts_service.create(
            session=session,
            settings=platform.settings,
            project_id=project_id,
            platform=network,
            connector_name="webhook",
            fields={"url": "http://127.0.0.1:9/hook"},
        )
    return Channel(
        platform=platform,
        client=client,
        project_id=project_id,
        account_id=account.id,
        owner_account_id=owner_account_id,
        secret=shown["signing_secret"],
        network=network,
    )


def now() -> datetime:
    return utcnow()
