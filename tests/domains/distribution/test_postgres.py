"""Storage and concurrency on PostgreSQL: SKIP LOCKED claims, racing identical requests, the migration."""

from __future__ import annotations

import asyncio

import httpx
import pytest
from sqlalchemy import func, select

from tests.conftest import Tenant, worker_context
from tests.domains.distribution import test_media_retention, test_planning_and_connections, test_schedule_post
from tests.domains.distribution.conftest import connect_webhook, drain
from tests.domains.distribution.standins import WebhookReceiver
from tests.platform import test_rest_api
from toolhost.domains.distribution.models import IdempotencyRecord, Post
from toolhost.platform.jobs import WorkerContext
from toolhost.platform.runtime import Platform
from toolhost.platform.worker import claim

pytestmark = pytest.mark.postgres


@pytest.fixture
def database_url(postgres_url: str) -> str:
    """A fresh migrated PostgreSQL database (the tests skip, with the reason, when it is unreachable)."""
    return postgres_url


def workers(worker: WorkerContext, count: int) -> list[WorkerContext]:
    return [worker_context(worker.platform, f"w{index}") for index in range(count)]


async def test_concurrent_claims_skip_each_others_rows(
    tenant: Tenant, platform: Platform, worker: WorkerContext, receiver: tuple[WebhookReceiver, str]
) -> None:
    assert platform.engine.dialect.name == "postgresql"
    await connect_webhook(platform, tenant.project_id, receiver[1])
    for index in range(60):
        await tenant.data("schedule_post", {"caption": f"Post {index}", "platforms": ["twitter"]})
    batches = await asyncio.gather(*(claim(context, "publish", limit=25) for context in workers(worker, 4)))
    claimed = [run.job_id for batch in batches for run in batch]
    assert len(claimed) == 60
    assert len(set(claimed)) == 60
    assert sum(1 for batch in batches if batch) >= 2


@pytest.mark.usefixtures("postgres_connections_to_itself")
async def test_workers_racing_on_due_posts_deliver_each_exactly_once(
    tenant: Tenant, platform: Platform, worker: WorkerContext, receiver: tuple[WebhookReceiver, str]
) -> None:
    stand_in, url = receiver
    await connect_webhook(platform, tenant.project_id, url, stand_in)
    for index in range(40):
        await tenant.data("schedule_post", {"caption": f"Race {index}", "platforms": ["twitter"]})
    handled = await asyncio.gather(*(drain(context) for context in workers(worker, 3)))
    assert sum(handled) == 40
    assert len(stand_in.deliveries) == 40
    assert len(stand_in.published) == 40
    async with platform.session_factory() as session:
        published = await session.scalar(select(func.count()).select_from(Post).where(Post.status == "published"))
    assert published == 40


async def test_identical_requests_racing_create_one_post(
    tenant: Tenant, platform: Platform, receiver: tuple[WebhookReceiver, str]
) -> None:
    await connect_webhook(platform, tenant.project_id, receiver[1])
    arguments = {"caption": "Twice at once", "platforms": ["twitter"], "idempotency_key": "race-key-0001"}
    responses = await asyncio.gather(*(tenant.call("schedule_post", arguments) for _ in range(4)))
    bodies = [response.json() for response in responses]
    assert all(not body["isError"] for body in bodies), bodies
    assert len({body["structuredContent"]["results"]["Twitter"]["postId"] for body in bodies}) == 1
    async with platform.session_factory() as session:
        assert await session.scalar(select(func.count()).select_from(Post)) == 1
        assert await session.scalar(select(func.count()).select_from(IdempotencyRecord)) == 1


async def test_thirty_concurrent_calls_with_one_key_are_debited_once_on_postgresql(
    tenant: Tenant, platform: Platform, receiver: tuple[WebhookReceiver, str]
) -> None:
    await test_schedule_post.test_thirty_concurrent_calls_with_one_key_are_debited_once_and_never_refunded(
        tenant, platform, receiver
    )


async def test_a_repeat_gets_its_stored_answer_with_no_credits_left_on_postgresql(
    tenant: Tenant, platform: Platform, receiver: tuple[WebhookReceiver, str]
) -> None:
    await test_schedule_post.test_a_repeat_gets_its_stored_answer_with_no_credits_left(tenant, platform, receiver)


async def test_media_retention_sweeps_on_postgresql(
    tenant: Tenant, platform: Platform, receiver: tuple[WebhookReceiver, str]
) -> None:
    await test_media_retention.test_expired_unreferenced_media_is_deleted_and_referenced_media_kept(
        tenant, platform, receiver
    )


async def test_text_postgresql_cannot_store_is_a_validation_error_there_too(
    tenant: Tenant, platform: Platform, client: httpx.AsyncClient
) -> None:
    # PostgreSQL refuses U+0000 in text and jsonb, where SQLite stores it: a 500 here only.
    assert platform.engine.dialect.name == "postgresql"
    await (
        test_planning_and_connections.test_every_malformed_webhook_events_body_is_a_validation_error_with_a_request_id(
            tenant, client, platform
        )
    )
    await test_rest_api.test_a_nul_character_in_any_text_is_a_validation_error_naming_its_field(tenant)
    await test_rest_api.test_an_unpaired_surrogate_escape_in_any_text_is_a_validation_error_naming_its_field(tenant)
