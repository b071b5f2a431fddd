"""find_next_slots, schedule_content_plan, the connect page, wait_for_connection, webhook events, the CLI."""

from __future__ import annotations

import asyncio
import json
import re
import time
import uuid
from pathlib import Path

import httpx
import pytest
from sqlalchemy import func, select
from typer.testing import CliRunner

from tests.conftest import TEST_SECRET, EndlessBody, Tenant
from tests.domains.distribution.conftest import connect_webhook
from toolhost.db.session import create_engine, create_session_factory
from toolhost.domains.distribution import cli
from toolhost.domains.distribution.models import ConnectedAccount, ConnectorEvent, Post
from toolhost.platform import accounts
from toolhost.platform.runtime import Platform
from toolhost.providers.connectors import webhook
from toolhost.providers.connectors.vault import TokenVault

MONDAY = "2030-01-07T00:00:00Z"  # a Monday


async def test_slots_prefer_midweek_preferred_hours_and_keep_their_distance_from_scheduled_posts(
    tenant: Tenant, platform: Platform, receiver: tuple[object, str]
) -> None:
    first = await tenant.data("find_next_slots", {"platforms": ["twitter"], "count": 3, "start_after": MONDAY})
    assert [slot["datetime"] for slot in first["slots"]] == [
        "2030-01-08T09:00:00Z",
        "2030-01-09T09:00:00Z",
        "2030-01-10T09:00:00Z",
    ]
    assert first["slots"][0]["day_of_week"] == "tue"
    assert first["slots"][0]["engagement_score"] == 5
    await connect_webhook(platform, tenant.project_id, receiver[1])
    await tenant.data(
        "schedule_post", {"caption": "Taken", "platforms": ["twitter"], "schedule_at": "2030-01-08T10:00:00Z"}
    )
    second = await tenant.data("find_next_slots", {"platforms": ["twitter"], "count": 3, "start_after": MONDAY})
    assert "2030-01-08T09:00:00Z" not in [slot["datetime"] for slot in second["slots"]]
    assert second["conflicts_avoided"] >= 1
    response = await tenant.call("find_next_slots", {"platforms": ["twitter"], "start_after": "next week"})
    assert response.json()["structuredContent"]["error"]["error_type"] == "validation_error"


async def test_schedule_content_plan_schedules_once_per_post_and_a_repeat_costs_nothing(
    tenant: Tenant, platform: Platform, receiver: tuple[object, str]
) -> None:
    await connect_webhook(platform, tenant.project_id, receiver[1])
    plan = {
        "posts": [
            {
                "id": "p1",
                "platform": "twitter",
                "caption": "Three ways to cut your weekly planning time in half.",
            },
            {
                "id": "p2",
                "platform": "twitter",
                "caption": "Why most content calendars fail by week three.",
                "status": "rejected",
            },
            {"id": "p3", "platform": "bluesky", "caption": "No bluesky account is connected for this one."},
        ]
    }
    dry = await tenant.data("schedule_content_plan", {"plan": plan, "dry_run": True})
    assert dry["dry_run"] is True
    assert dry["approvals"] == {"total": 3, "eligible": 2, "skipped": 1}
    assert all("quality" in post for post in dry["posts"])
    async with platform.session_factory() as session:
        assert await session.scalar(select(func.count()).select_from(Post)) == 0

    response = await tenant.call("schedule_content_plan", {"plan": plan, "enforce_quality": False})
    problem = response.json()["structuredContent"]["error"]
    assert "no active account" in problem["message"]  # routing is checked before anything is created

    plan["posts"].pop()
    live = await tenant.data("schedule_content_plan", {"plan": plan, "enforce_quality": False})
    assert live["summary"] == {"total_posts": 1, "scheduled": 1, "failed": 0}
    [result] = live["posts"]
    again = await tenant.data("schedule_content_plan", {"plan": plan, "enforce_quality": False})
    assert again["posts"] == [result]
    async with platform.session_factory() as session:
        [post] = list(await session.scalars(select(Post)))
    assert str(post.id) == result["post_id"]
    assert post.idempotency_key.startswith("plan-")
    assert post.scheduled_at is not None
    assert post.scheduled_at.hour in (9, 12, 15, 18)
    usage = await tenant.data("get_mcp_usage", {"response_format": "json"})
    charged = {item["tool_name"]: item["credits_total"] for item in usage["tools"]}
    assert charged["schedule_content_plan"] == 1, "the post it scheduled is in the usage record; the repeat is free"


async def test_the_connect_page_creates_a_webhook_account_and_shows_its_secret_once(
    tenant: Tenant, client: httpx.AsyncClient, platform: Platform
) -> None:
    started = await tenant.data("start_platform_connection", {"platform": "threads"})
    assert started["deep_link"].startswith("http://testserver/app/connect/")
    waited = await tenant.data("wait_for_connection", {"platform": "threads", "timeout_s": 5, "poll_interval_s": 2})
    assert waited["connected"] is False
    assert waited["timed_out"] is True

    path = started["deep_link"].removeprefix("http://testserver")
    page = await client.get(path)
    assert page.status_code == 200
    assert 'name="url"' in page.text and '<label for="webhook-url">Receiver URL (https)</label>' in page.text
    # Styled like the sign-in pages: their layout and stylesheet, named by the platform's display name.
    assert "<title>Connect Threads · toolhost</title>" in page.text and "<header><strong>toolhost</strong>" in page.text
    assert "'unsafe-inline'" not in page.headers["content-security-policy"]
    done = await client.post(path, data={"connector": "webhook", "url": "http://127.0.0.1:9/hook"})
    assert done.status_code == 200
    secret = re.search(r"<code>(whsec_[^<]+)</code>", done.text)
    assert secret is not None
    async with platform.session_factory() as session:
        account = await session.scalar(select(ConnectedAccount).where(ConnectedAccount.platform == "threads"))
    assert account is not None
    assert TokenVault(platform.settings.keyring).open(account.secret)["signing_secret"] == secret.group(1)
    assert (await client.get(path)).status_code == 404  # single use

    connected = await tenant.data("wait_for_connection", {"platform": "threads"})
    assert (connected["connected"], connected["account_id"]) == (True, str(account.id))
    listed = await tenant.data("list_connected_accounts", {})
    assert [item["id"] for item in listed["accounts"]] == [str(account.id)]
    assert "secret" not in json.dumps(listed)

    response = await tenant.call("start_platform_connection", {"platform": "shopify"})
    assert response.json()["structuredContent"]["error"]["error_type"] == "validation_error"


async def test_webhook_events_need_the_account_signature(
    tenant: Tenant, client: httpx.AsyncClient, platform: Platform
) -> None:
    account_id = await connect_webhook(platform, tenant.project_id, "http://127.0.0.1:9/hook")
    async with platform.session_factory() as session:
        account = await session.get(ConnectedAccount, account_id)
    assert account is not None
    secret = TokenVault(platform.settings.keyring).open(account.secret)["signing_secret"]
    body = json.dumps(
        {
            "account_id": str(account_id),
            "metrics": [{"external_post_id": "ext-1", "metrics": {"likes": 4, "shares": 1}}],
            "comments": [{"external_post_id": "ext-1", "id": "c1", "text": "Nice"}],
        }
    ).encode()
    signed = {webhook.SIGNATURE_HEADER: webhook.sign(secret, body, int(time.time()))}
    response = await client.post("/v1/connectors/webhook/events", content=body, headers=signed)
    assert response.status_code == 202
    assert response.json() == {"accepted": 2}
    forged = {webhook.SIGNATURE_HEADER: webhook.sign("whsec_wrong", body, int(time.time()))}
    assert (await client.post("/v1/connectors/webhook/events", content=body, headers=forged)).status_code == 401
    async with platform.session_factory() as session:
        kinds = sorted(event.kind for event in await session.scalars(select(ConnectorEvent)))
    assert kinds == ["comment", "metrics"]


async def test_oversized_webhook_events_are_refused_before_they_are_read(client: httpx.AsyncClient) -> None:
    body = EndlessBody()
    response = await client.post("/v1/connectors/webhook/events", content=body)
    assert response.status_code == 413
    assert body.sent < 3_000_000  # the 1 MB limit, not the 64 MB sent


async def test_every_malformed_webhook_events_body_is_a_validation_error_with_a_request_id(
    tenant: Tenant, client: httpx.AsyncClient, platform: Platform
) -> None:
    account_id = await connect_webhook(platform, tenant.project_id, "http://127.0.0.1:9/hook")
    async with platform.session_factory() as session:
        account = await session.get(ConnectedAccount, account_id)
    assert account is not None
    secret = TokenVault(platform.settings.keyring).open(account.secret)["signing_secret"]
    event = b'{"account_id": "%s", "comments": [{"external_post_id": "ext-1", "id": "c1", "text": %s}]}'
    bodies = {
        "nested too deeply": (b"[" * 100_000 + b"]" * 100_000, "$"),
        "an integer of 5,000 digits": (b'{"account_id": ' + b"9" * 5000 + b"}", "$"),
        "bytes that are not UTF-8": (event % (str(account_id).encode(), b'"caf\xe9"'), "$"),
        "a NUL character": (event % (str(account_id).encode(), b'"a\\u0000b"'), "comments[0].text"),
        "an unpaired surrogate": (event % (str(account_id).encode(), b'"a\\ud83db"'), "comments[0].text"),
        "no account": (b'{"metrics": []}', "account_id"),
        "an item without its post": (
            b'{"account_id": "%s", "metrics": [{}]}' % str(account_id).encode(),
            "metrics[0].external_post_id",
        ),
    }
    for reason, (body, path) in bodies.items():
        signed = {webhook.SIGNATURE_HEADER: webhook.sign(secret, body, int(time.time()))}
        response = await client.post("/v1/connectors/webhook/events", content=body, headers=signed)
        assert response.status_code == 400, (reason, response.text)
        result = response.json()
        assert result["isError"] is True and result["error"] == result["structuredContent"]["error"], reason
        assert result["error"]["error_type"] == "validation_error", reason
        assert result["error"]["request_id"].startswith("req_"), reason
        assert result["error"]["field_errors"][0]["path"] == path, (reason, result["error"])
    async with platform.session_factory() as session:
        assert await session.scalar(select(func.count()).select_from(ConnectorEvent)) == 0


def test_connections_add_prints_the_account_id_and_the_secret_once(
    database_url: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("TOOLHOST_DATABASE_URL", database_url)
    monkeypatch.setenv("TOOLHOST_ENVIRONMENT", "test")
    monkeypatch.setenv("TOOLHOST_SECRET_KEY", TEST_SECRET)
    monkeypatch.setenv("TOOLHOST_FETCH__ALLOW", '["127.0.0.1"]')
    monkeypatch.setenv("TOOLHOST_FETCH__ALLOW_HTTP", "true")

    async def project() -> uuid.UUID:
        from toolhost.config import load_settings

        engine = create_engine(database_url)
        async with create_session_factory(engine)() as session, session.begin():
            account = await accounts.create_account(session, name="ops", tier="pro", settings=load_settings())
            created = await accounts.create_project(session, account_id=account.id, name="ops")
        await engine.dispose()
        return created.id

    project_id = asyncio.run(project())
    runner = CliRunner()
    result = runner.invoke(
        cli.app,
        [
            "add",
            "--project",
            str(project_id),
            "--platform",
            "linkedin",
            "--connector",
            "webhook",
            "--url",
            "http://127.0.0.1:9/hook",
        ],
    )
    assert result.exit_code == 0, result.output
    account_id = re.search(r"account_id: (\S+)", result.output)
    secret = re.search(r"signing_secret \(shown once, keep it\): (whsec_\S+)", result.output)
    assert account_id is not None
    assert secret is not None
    listed = runner.invoke(cli.app, ["list", "--project", str(project_id)])
    assert account_id.group(1) in listed.output
    assert secret.group(1) not in listed.output
    refused = runner.invoke(
        cli.app,
        [
            "add",
            "--project",
            str(project_id),
            "--platform",
            "linkedin",
            "--connector",
            "webhook",
            "--url",
            "http://10.0.0.8/hook",
        ],
    )
    assert refused.exit_code == 1
