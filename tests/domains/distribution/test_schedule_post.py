"""schedule_post through HTTP, published by its publish job to a local webhook receiver."""

from __future__ import annotations

import asyncio
import uuid
from datetime import UTC, datetime, timedelta
from typing import Any

import pytest
from sqlalchemy import func, select, update

from tests.conftest import Tenant, TenantFactory, worker_context
from tests.domains.distribution.conftest import connect_webhook, drain, make_due
from tests.domains.distribution.standins import WebhookReceiver
from toolhost.domains.distribution import idempotency
from toolhost.domains.distribution.models import IdempotencyRecord, Post
from toolhost.platform.jobs import Job, WorkerContext
from toolhost.platform.models import Account, CreditEntry
from toolhost.platform.runtime import Platform
from toolhost.platform.worker import claim, run_jobs
from toolhost.providers.connectors import webhook
from toolhost.providers.connectors.webhook import WebhookConnector


def later(hours: float = 2) -> str:
    return (datetime.now(UTC) + timedelta(hours=hours)).isoformat()


async def balance(platform: Platform, account_id: uuid.UUID) -> int:
    async with platform.session_factory() as session:
        account = await session.get(Account, account_id)
        assert account is not None
        return account.credit_balance


async def post_row(platform: Platform, post_id: str) -> Post:
    async with platform.session_factory() as session:
        post = await session.get(Post, uuid.UUID(post_id))
        assert post is not None
        return post


async def error_of(tenant: Tenant, tool: str, arguments: dict[str, Any]) -> tuple[int, dict[str, Any]]:
    response = await tenant.call(tool, arguments)
    body = response.json()
    assert body["isError"], body
    return response.status_code, body["structuredContent"]["error"]


async def test_a_post_without_schedule_at_is_published_once_through_the_signed_webhook(
    tenant: Tenant, platform: Platform, worker: WorkerContext, receiver: tuple[WebhookReceiver, str]
) -> None:
    stand_in, url = receiver
    await connect_webhook(platform, tenant.project_id, url, stand_in)
    data = await tenant.data(
        "schedule_post",
        {"caption": "Launch day: the new planner is live.", "platforms": ["twitter"], "hashtags": ["launch"]},
    )
    post_id = data["results"]["Twitter"]["postId"]
    assert data["scheduledAt"] is None
    assert (await post_row(platform, post_id)).status == "pending"

    assert await drain(worker) == 1

    assert len(stand_in.deliveries) == 1
    assert stand_in.bad_signatures == 0
    delivery = stand_in.deliveries[0]
    assert delivery["key"] == f"{data['idempotency_key']}-twitter"
    assert delivery["body"]["caption"] == "Launch day: the new planner is live."
    assert delivery["body"]["text"].endswith("#launch")
    post = await post_row(platform, post_id)
    assert post.status == "published"
    assert post.external_post_id == f"ext-{delivery['key'][-12:]}"
    assert post.external_url
    assert post.published_at is not None
    async with platform.session_factory() as session:
        job = await session.get(Job, uuid.UUID(data["results"]["Twitter"]["jobId"]))
        assert job is not None
        assert (job.status, job.billing_status) == ("completed", "charged")
    listed = await tenant.data("list_recent_posts", {"status": "published"})
    assert [item["id"] for item in listed["posts"]] == [post_id]


async def test_an_identical_retry_returns_the_first_post_and_costs_nothing(
    tenant: Tenant, platform: Platform, receiver: tuple[WebhookReceiver, str]
) -> None:
    await connect_webhook(platform, tenant.project_id, receiver[1])
    arguments = {"caption": "Same words twice", "platforms": ["twitter"], "schedule_at": later()}
    before = await balance(platform, tenant.account_id)
    first = await tenant.data("schedule_post", arguments)
    again = await tenant.data("schedule_post", arguments)
    assert again == first
    assert await balance(platform, tenant.account_id) == before - 1
    keyed = {**arguments, "idempotency_key": "client-key-001", "caption": "With my own key"}
    assert await tenant.data("schedule_post", keyed) == await tenant.data("schedule_post", keyed)
    async with platform.session_factory() as session:
        assert await session.scalar(select(func.count()).select_from(Post)) == 2
    status, error = await error_of(tenant, "schedule_post", {**keyed, "caption": "Another request, same key"})
    assert status == 200
    assert error["error_type"] == "conflict"
    usage = await tenant.data("get_mcp_usage", {"response_format": "json"})
    [scheduling] = [item for item in usage["tools"] if item["tool_name"] == "schedule_post"]
    assert scheduling["call_count"] == 5
    assert scheduling["credits_total"] == 2, "the two repeats are recorded as free, not as one credit each"


async def ledger(platform: Platform, account_id: uuid.UUID) -> list[tuple[str, int]]:
    """The account's credit movements by tools, as sorted (kind, signed amount) pairs."""
    async with platform.session_factory() as session:
        entries = await session.scalars(
            select(CreditEntry).where(CreditEntry.account_id == account_id, CreditEntry.tool_name.is_not(None))
        )
        return sorted((entry.kind, entry.amount) for entry in entries)


async def test_thirty_concurrent_calls_with_one_key_are_debited_once_and_never_refunded(
    tenant: Tenant, platform: Platform, receiver: tuple[WebhookReceiver, str]
) -> None:
    await connect_webhook(platform, tenant.project_id, receiver[1])
    arguments = {"caption": "Thirty at once", "platforms": ["twitter"], "idempotency_key": "thirty-at-once"}
    before = await balance(platform, tenant.account_id)

    responses = await asyncio.gather(*(tenant.call("schedule_post", arguments) for _ in range(30)))

    bodies = [response.json() for response in responses]
    assert [response.status_code for response in responses] == [200] * 30, bodies
    assert all(not body["isError"] for body in bodies), bodies
    assert len({body["structuredContent"]["results"]["Twitter"]["postId"] for body in bodies}) == 1
    assert await ledger(platform, tenant.account_id) == [("hold", -1), ("settle", 0)]
    assert await balance(platform, tenant.account_id) == before - 1
    async with platform.session_factory() as session:
        assert await session.scalar(select(func.count()).select_from(Post)) == 1


async def test_a_repeat_gets_its_stored_answer_with_no_credits_left(
    tenant: Tenant, platform: Platform, receiver: tuple[WebhookReceiver, str]
) -> None:
    await connect_webhook(platform, tenant.project_id, receiver[1])
    arguments = {"caption": "Paid", "platforms": ["twitter"], "schedule_at": later(), "idempotency_key": "paid-once"}
    first = await tenant.data("schedule_post", arguments)
    async with platform.session_factory() as session, session.begin():
        await session.execute(update(Account).where(Account.id == tenant.account_id).values(credit_balance=0))
    spent = await ledger(platform, tenant.account_id)

    assert await tenant.data("schedule_post", arguments) == first
    response = await tenant.call("schedule_post", {**arguments, "idempotency_key": "a-new-request"})
    assert (response.status_code, response.json()["structuredContent"]["error"]["error_type"]) == (402, "billing_error")
    assert await ledger(platform, tenant.account_id) == spent


async def test_a_key_held_by_a_running_call_is_waited_for_and_one_left_by_a_dead_process_is_taken_over(
    tenant: Tenant, platform: Platform, receiver: tuple[WebhookReceiver, str], monkeypatch: pytest.MonkeyPatch
) -> None:
    await connect_webhook(platform, tenant.project_id, receiver[1])
    monkeypatch.setattr(idempotency, "CLAIM_WAIT_SECONDS", 0.0)
    arguments = {"caption": "Claimed elsewhere", "platforms": ["twitter"], "idempotency_key": "claimed-elsewhere"}
    await tenant.data("schedule_post", arguments)
    # The key's record as a call still running in another process holds it.
    async with platform.session_factory() as session, session.begin():
        claim = await session.scalar(select(IdempotencyRecord).where(IdempotencyRecord.key == "claimed-elsewhere"))
        assert claim is not None
        claim.payload = {idempotency.CLAIMED_BY: "req_of_another_process"}
    before = await balance(platform, tenant.account_id)

    status, error = await error_of(tenant, "schedule_post", arguments)
    assert (status, error["error_type"], error["code"]) == (200, "conflict", "idempotency_key_in_use")
    assert await balance(platform, tenant.account_id) == before

    async with platform.session_factory() as session, session.begin():
        await session.execute(
            update(IdempotencyRecord)
            .where(IdempotencyRecord.id == claim.id)
            .values(expires_at=datetime.now(UTC) - timedelta(seconds=1))
        )
    taken_over = await tenant.data("schedule_post", arguments)
    assert await tenant.data("schedule_post", arguments) == taken_over
    assert await balance(platform, tenant.account_id) == before - 1


class WorkerDied(BaseException):
    """Stands for the process being killed: no handler of the job machine sees it."""


async def test_a_worker_that_dies_mid_publication_is_retried_with_the_same_key_and_published_once(
    tenant: Tenant,
    platform: Platform,
    worker: WorkerContext,
    receiver: tuple[WebhookReceiver, str],
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    stand_in, url = receiver
    await connect_webhook(platform, tenant.project_id, url, stand_in)
    data = await tenant.data("schedule_post", {"caption": "Crash test", "platforms": ["twitter"]})
    post_id = data["results"]["Twitter"]["postId"]
    job_id = uuid.UUID(data["results"]["Twitter"]["jobId"])

    # Worker A claims the post and delivers it, then dies before recording the outcome.
    deliver = WebhookConnector.publish

    async def deliver_then_die(self: WebhookConnector, *args: Any) -> Any:
        await deliver(self, *args)
        raise WorkerDied

    monkeypatch.setattr(WebhookConnector, "publish", deliver_then_die)
    await run_jobs(worker)
    monkeypatch.setattr(WebhookConnector, "publish", deliver)
    assert len(stand_in.deliveries) == 1
    assert (await post_row(platform, post_id)).status == "publishing"

    # While the lease holds nobody else takes it; once it expires, worker B does, with the same key.
    other = worker_context(platform, "worker-b")
    assert await drain(other) == 0
    async with platform.session_factory() as session, session.begin():
        await session.execute(
            update(Job).where(Job.id == job_id).values(lease_expires_at=datetime.now(UTC) - timedelta(seconds=1))
        )
    await drain(other)

    key = f"{data['idempotency_key']}-twitter"
    assert [delivery["key"] for delivery in stand_in.deliveries] == [key] * 2
    assert len(stand_in.published) == 1
    post = await post_row(platform, post_id)
    assert (post.status, post.attempt) == ("published", 2)
    async with platform.session_factory() as session:
        job = await session.get(Job, job_id)
    assert job is not None and (job.status, job.attempt, job.billing_status) == ("completed", 1, "charged")


async def test_failures_retry_after_1_5_15_minutes_then_fail_with_the_reason_and_a_refund(
    tenant: Tenant, platform: Platform, worker: WorkerContext, receiver: tuple[WebhookReceiver, str]
) -> None:
    stand_in, url = receiver
    stand_in.fail_next = 1000
    await connect_webhook(platform, tenant.project_id, url, stand_in)
    before = await balance(platform, tenant.account_id)
    data = await tenant.data("schedule_post", {"caption": "Unlucky", "platforms": ["twitter"]})
    post_id = data["results"]["Twitter"]["postId"]
    for expected_delay in (60, 300, 900):
        started = datetime.now(UTC)
        assert await drain(worker) == 1
        post = await post_row(platform, post_id)
        assert post.status == "scheduled"
        assert "503" in (post.error or "")
        assert abs((post.due_at - started).total_seconds() - expected_delay) < 5
        await make_due(platform, post.id)
    assert await drain(worker) == 1
    post = await post_row(platform, post_id)
    assert post.status == "failed"
    assert post.failures == 4
    assert post.refunded
    assert len(stand_in.deliveries) == 4 * 3  # three deliveries with backoff inside each attempt
    assert await balance(platform, tenant.account_id) == before
    listed = await tenant.data("list_recent_posts", {"status": "failed"})
    assert listed["posts"][0]["error"] == post.error


async def test_a_receiver_that_rejects_the_post_fails_it_at_once(
    tenant: Tenant, platform: Platform, worker: WorkerContext, receiver: tuple[WebhookReceiver, str]
) -> None:
    stand_in, url = receiver
    stand_in.fail_next, stand_in.fail_status = 1, 422
    await connect_webhook(platform, tenant.project_id, url, stand_in)
    data = await tenant.data("schedule_post", {"caption": "Rejected", "platforms": ["twitter"]})
    await drain(worker)
    post = await post_row(platform, data["results"]["Twitter"]["postId"])
    assert post.status == "failed"
    assert "422" in (post.error or "")
    assert len(stand_in.deliveries) == 1


async def test_reschedule_honours_the_expected_time_and_refuses_published_posts(
    tenant: Tenant, platform: Platform, worker: WorkerContext, receiver: tuple[WebhookReceiver, str]
) -> None:
    await connect_webhook(platform, tenant.project_id, receiver[1], receiver[0])
    first_time = later(2)
    data = await tenant.data(
        "schedule_post", {"caption": "Move me", "platforms": ["twitter"], "schedule_at": first_time}
    )
    post_id = data["results"]["Twitter"]["postId"]
    new_time = later(5)
    status, error = await error_of(
        tenant,
        "reschedule_post",
        {"post_id": post_id, "scheduled_at": new_time, "expected_scheduled_at": later(3)},
    )
    assert status == 200
    assert error["code"] == "schedule_conflict"
    moved = await tenant.data(
        "reschedule_post", {"post_id": post_id, "scheduled_at": new_time, "expected_scheduled_at": first_time}
    )
    assert moved["previous_scheduled_at"] == data["scheduledAt"]
    assert (await post_row(platform, post_id)).scheduled_at == datetime.fromisoformat(new_time)
    _, error = await error_of(tenant, "reschedule_post", {"post_id": post_id, "scheduled_at": later(-1)})
    assert error["error_type"] == "validation_error"

    await make_due(platform, post_id)
    await drain(worker)
    status, error = await error_of(tenant, "reschedule_post", {"post_id": post_id, "scheduled_at": later(9)})
    assert status == 200
    assert (error["code"], error["current_status"]) == ("not_reschedulable", "published")
    assert (await post_row(platform, post_id)).status == "published"


async def test_cancel_refunds_once_and_a_claimed_post_cannot_be_cancelled(
    tenant: Tenant, platform: Platform, worker: WorkerContext, receiver: tuple[WebhookReceiver, str]
) -> None:
    await connect_webhook(platform, tenant.project_id, receiver[1])
    before = await balance(platform, tenant.account_id)
    data = await tenant.data(
        "schedule_post", {"caption": "Cancel me", "platforms": ["twitter"], "schedule_at": later()}
    )
    post_id = data["results"]["Twitter"]["postId"]
    response = await tenant.call("cancel_scheduled_post", {"post_id": post_id, "confirm": "true"})
    assert response.status_code == 400
    cancelled = await tenant.data("cancel_scheduled_post", {"post_id": post_id, "confirm": True})
    assert (cancelled["status"], cancelled["refunded_credits"]) == ("cancelled", 1)
    again = await tenant.data("cancel_scheduled_post", {"post_id": post_id, "confirm": True})
    assert again["already_cancelled"] is True
    assert await balance(platform, tenant.account_id) == before

    now_post = await tenant.data("schedule_post", {"caption": "Being published", "platforms": ["twitter"]})
    await claim(worker, "publish", limit=10)
    status, error = await error_of(
        tenant,
        "cancel_scheduled_post",
        {"post_id": now_post["results"]["Twitter"]["postId"], "confirm": True},
    )
    assert status == 200
    assert error["code"] == "publishing_in_progress"


async def test_a_due_job_whose_post_is_no_longer_waiting_fails_without_delivering(
    tenant: Tenant, platform: Platform, worker: WorkerContext, receiver: tuple[WebhookReceiver, str]
) -> None:
    await connect_webhook(platform, tenant.project_id, receiver[1])
    data = await tenant.data("schedule_post", {"caption": "Finished elsewhere", "platforms": ["twitter"]})
    post_id = data["results"]["Twitter"]["postId"]
    async with platform.session_factory() as session, session.begin():
        await session.execute(update(Post).where(Post.id == uuid.UUID(post_id)).values(status="published"))
    await drain(worker)
    async with platform.session_factory() as session:
        job = await session.scalar(select(Job).where(Job.input["post_id"].as_string() == post_id))
    assert job is not None and job.status == "failed"
    assert job.error is not None and "no longer waiting to be published" in job.error
    assert receiver[0].deliveries == [] and (await post_row(platform, post_id)).status == "published"


async def test_bad_inputs_get_their_documented_errors_and_change_nothing(
    tenant: Tenant, make_tenant: TenantFactory, platform: Platform, receiver: tuple[WebhookReceiver, str]
) -> None:
    before = await balance(platform, tenant.account_id)
    base = {"caption": "Hello", "platforms": ["twitter"]}
    _, error = await error_of(tenant, "schedule_post", base)
    assert error["error_type"] == "validation_error"
    assert "no active account" in error["message"]
    await connect_webhook(platform, tenant.project_id, receiver[1])
    _, error = await error_of(tenant, "schedule_post", {**base, "schedule_at": later(-1)})
    assert error["error_type"] == "validation_error"
    assert error["field_errors"][0]["path"] == "schedule_at"
    status, error = await error_of(tenant, "schedule_post", {**base, "idempotency_key": "seven77"})
    assert status == 400
    assert error["error_type"] == "validation_error"
    _, error = await error_of(
        tenant, "schedule_post", {**base, "auto_rehost": False, "media_url": "http://example.com/a.png"}
    )
    assert error["error_type"] == "validation_error"
    assert "https" in error["message"]
    _, error = await error_of(
        tenant, "schedule_post", {**base, "auto_rehost": False, "media_url": "https://10.1.2.3/a.png"}
    )
    assert error["error_type"] == "validation_error"
    assert "private" in error["message"]
    await connect_webhook(platform, tenant.project_id, receiver[1])
    _, error = await error_of(tenant, "schedule_post", base)
    assert error["error_type"] == "validation_error"
    assert len(error["candidates"]) == 2
    _, error = await error_of(tenant, "schedule_post", {**base, "platforms": ["youtube"]})
    assert error["error_type"] == "validation_error"
    async with platform.session_factory() as session:
        assert await session.scalar(select(func.count()).select_from(Post)) == 0
        assert await session.scalar(select(func.count()).select_from(Job)) == 0
    assert await balance(platform, tenant.account_id) == before

    other = await make_tenant()
    account_id = await connect_webhook(platform, other.project_id, receiver[1])
    theirs = await other.data("schedule_post", {**base, "schedule_at": later(), "account_id": str(account_id)})
    post_id = theirs["results"]["Twitter"]["postId"]
    status, error = await error_of(tenant, "cancel_scheduled_post", {"post_id": post_id, "confirm": True})
    assert (status, error["error_type"]) == (404, "not_found")
    assert (await post_row(platform, post_id)).status == "scheduled"


def test_the_signature_is_an_hmac_of_timestamp_and_body_and_expires() -> None:
    header = webhook.sign("whsec_x", b'{"a":1}', 1_700_000_000)
    assert header.startswith("t=1700000000,v1=")
    assert webhook.verify("whsec_x", b'{"a":1}', header, now=1_700_000_100)
    assert not webhook.verify("whsec_x", b'{"a":2}', header, now=1_700_000_100)
    assert not webhook.verify("whsec_y", b'{"a":1}', header, now=1_700_000_100)
    assert not webhook.verify("whsec_x", b'{"a":1}', header, now=1_700_001_000)
