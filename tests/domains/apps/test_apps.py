"""The apps tools over HTTP and MCP: a week of real posts, the latest snapshots, the UI resource, the pages."""

from __future__ import annotations

import re
import uuid
from datetime import UTC, date, datetime, timedelta
from typing import Any
from urllib.parse import urlencode

import httpx
import mcp_types as types
from sqlalchemy import update
from starlette.applications import Starlette

from tests.conftest import PersonFactory, Tenant, TenantFactory, csrf_of, sign_in
from tests.domains.analytics.conftest import now, open_channel
from tests.platform.test_mcp import mcp_client
from toolhost.domains.distribution.models import Post
from toolhost.platform.models import WebSession
from toolhost.platform.runtime import Platform


def _monday(day: date) -> date:
    return day - timedelta(days=day.weekday())


async def _post(platform: Platform, tenant: Tenant, account_id: uuid.UUID, **fields: object) -> Post:
    """A post row as the distribution domain leaves it (for states a test cannot reach quickly by tools)."""
    moment = fields.pop("at")
    assert isinstance(moment, datetime)
    async with platform.session_factory() as session, session.begin():
        post = Post(
            project_id=tenant.project_id,
            account_id=tenant.account_id,
            connected_account_id=account_id,
            platform="twitter",
            caption="A caption",
            due_at=moment,
            idempotency_key=uuid.uuid4().hex,
            created_at=moment,
            **fields,
        )
        session.add(post)
    return post


async def test_calendar_shows_the_weeks_draft_scheduled_and_published_posts_only(
    tenant: Tenant, client: httpx.AsyncClient, platform: Platform
) -> None:
    channel = await open_channel(platform, client, tenant.project_id, tenant.account_id)
    start = _monday(now().date()) + timedelta(days=7)
    monday = datetime(start.year, start.month, start.day, tzinfo=UTC)
    scheduled = await tenant.data(
        "schedule_post",
        {
            "platforms": ["twitter"],
            "caption": "Launch day",
            "title": "Launch",
            "schedule_at": (monday + timedelta(days=2, hours=9)).isoformat(),
        },
    )
    scheduled_id = scheduled["results"]["Twitter"]["postId"]
    published = await channel.published(at=monday + timedelta(days=1), caption="Done", title="Shipped")
    draft = await _post(
        platform, tenant, channel.account_id, status="draft", title="Idea", at=monday + timedelta(hours=3)
    )
    await _post(
        platform, tenant, channel.account_id, status="cancelled", title="Dropped", at=monday + timedelta(hours=4)
    )
    await channel.published(at=monday + timedelta(days=8), caption="Next week")

    data = await tenant.data("open_content_calendar", {"start_date": start.isoformat()})
    assert data["start_date"] == start.isoformat() and data["project_id"] == str(tenant.project_id)
    assert [post["id"] for post in data["posts"]] == [str(draft.id), str(published.id), scheduled_id]
    assert [post["status"] for post in data["posts"]] == ["draft", "published", "scheduled"]
    assert set(data["posts"][0]) == {
        "id",
        "platform",
        "status",
        "title",
        "first_line",
        "external_post_id",
        "published_at",
        "scheduled_at",
        "created_at",
        "error",
    }
    # What a card names each post by: its caption's first line, never "(untitled)".
    assert [post["first_line"] for post in data["posts"]] == ["A caption", "Done", "Launch day"]
    assert "mcp:distribute" in data["scopes"]


async def test_calendar_defaults_to_this_utc_weeks_monday_and_says_so_in_one_sentence(tenant: Tenant) -> None:
    response = await tenant.call("open_content_calendar", {})
    body = response.json()
    assert response.status_code == 200 and not body["isError"]
    assert body["structuredContent"]["start_date"] == _monday(now().date()).isoformat()
    assert body["structuredContent"]["posts"] == []
    assert body["content"][0] == {
        "type": "text",
        "text": f"Content calendar for the week of {_monday(now().date())}: 0 post(s).",
    }


async def test_calendar_result_carries_a_self_contained_ui_resource_after_the_text_block(
    tenant: Tenant, client: httpx.AsyncClient, platform: Platform
) -> None:
    channel = await open_channel(platform, client, tenant.project_id, tenant.account_id)
    hostile = "</script><script>alert(1)</script>"
    await channel.published(at=now(), caption="x", title=hostile)
    body = (await tenant.call("open_content_calendar", {})).json()
    assert [block["type"] for block in body["content"]] == ["text", "resource"]
    resource = body["content"][1]["resource"]
    assert resource["uri"] == "ui://content-calendar/v1/mcp-app.html"
    assert resource["mimeType"] == "text/html;profile=mcp-app"
    page = resource["text"]
    assert not re.search(r"https?://", page), "the UI must reach no external domain"
    assert not re.search(r"<(link|img|iframe)\b|\bsrc=", page)
    assert hostile not in page and "\\u003c/script\\u003e\\u003cscript\\u003ealert(1)" in page
    assert page.count("</script>") == 2
    assert '"reschedule_post"' in page and '"schedule_post"' in page and "expected_scheduled_at" in page


async def test_apps_tools_refuse_bad_arguments_with_field_paths(tenant: Tenant) -> None:
    cases = [
        ("open_content_calendar", {"start_date": "2026-02-30"}, "start_date"),
        ("open_content_calendar", {"start_date": "next monday"}, "start_date"),
        ("open_content_calendar", {"project_id": "not-a-uuid"}, "project_id"),
        ("open_analytics_pulse", {"days": 0}, "days"),
        ("open_analytics_pulse", {"days": 366}, "days"),
        ("open_analytics_pulse", {"platform": "myspace"}, "platform"),
    ]
    for name, arguments, path in cases:
        response = await tenant.call(name, arguments)
        body = response.json()
        assert response.status_code == 400, (name, arguments)
        assert body["error"]["error_type"] == "validation_error"
        assert body["error"]["field_errors"][0]["path"] == path


async def test_another_tenants_project_is_not_found_and_its_posts_never_show(
    tenant: Tenant, make_tenant: TenantFactory, client: httpx.AsyncClient, platform: Platform
) -> None:
    channel = await open_channel(platform, client, tenant.project_id, tenant.account_id)
    post = await channel.published(at=now(), caption="Mine", title="Mine")
    await channel.push(post, views=100, likes=10, comments=0, shares=0)
    stranger = await make_tenant()
    for name in ("open_content_calendar", "open_analytics_pulse"):
        response = await stranger.call(name, {"project_id": str(tenant.project_id)})
        assert response.status_code == 404 and response.json()["error"]["error_type"] == "not_found"
    assert (await stranger.data("open_content_calendar", {}))["posts"] == []
    pulse = await stranger.data("open_analytics_pulse", {})
    assert pulse["summary"]["views"] == 0 and pulse["posts"] == []


async def test_a_calendar_reschedule_with_a_stale_time_is_a_conflict_and_a_fresh_one_moves_the_post(
    tenant: Tenant, client: httpx.AsyncClient, platform: Platform
) -> None:
    await open_channel(platform, client, tenant.project_id, tenant.account_id)
    start = _monday(now().date()) + timedelta(days=14)
    first = datetime(start.year, start.month, start.day, 10, tzinfo=UTC)
    await tenant.data("schedule_post", {"platforms": ["twitter"], "caption": "Hello", "schedule_at": first.isoformat()})
    week = await tenant.data("open_content_calendar", {"start_date": start.isoformat()})
    shown = week["posts"][0]
    # What the UI sends: the post's time as the calendar showed it.
    moved = {"post_id": shown["id"], "scheduled_at": (first + timedelta(days=1)).isoformat()}
    stale = await tenant.call(
        "reschedule_post", {**moved, "expected_scheduled_at": (first + timedelta(hours=1)).isoformat()}
    )
    assert stale.json()["structuredContent"]["error"]["code"] == "schedule_conflict"
    await tenant.data("reschedule_post", {**moved, "expected_scheduled_at": shown["scheduled_at"]})
    again = await tenant.data("open_content_calendar", {"start_date": start.isoformat()})
    assert again["posts"][0]["scheduled_at"].startswith((start + timedelta(days=1)).isoformat())


async def test_pulse_without_posts_is_an_honest_empty_success(tenant: Tenant) -> None:
    body = (await tenant.call("open_analytics_pulse", {})).json()
    assert not body["isError"]
    assert body["structuredContent"]["summary"] == {
        "views": 0,
        "engagement": 0,
        "engagement_rate": 0.0,
        "posts": 0,
        "posts_with_metrics": 0,
    }
    assert body["structuredContent"]["platform_totals"] == [] and body["structuredContent"]["posts"] == []
    assert "no published posts" in body["content"][0]["text"]
    assert body["content"][1]["resource"]["uri"] == "ui://analytics-pulse/v1/mcp-app.html"


async def test_pulse_uses_the_latest_snapshot_per_post_with_platform_totals_by_views(
    tenant: Tenant, client: httpx.AsyncClient, platform: Platform
) -> None:
    twitter = await open_channel(platform, client, tenant.project_id, tenant.account_id)
    mastodon = await open_channel(platform, client, tenant.project_id, tenant.account_id, network="mastodon")
    first = await twitter.published(at=now() - timedelta(days=2), caption="First", title="First")
    second = await mastodon.published(at=now() - timedelta(days=1), caption="Second")
    unmeasured = await twitter.published(at=now() - timedelta(hours=2), caption="Third")
    await twitter.published(at=now() - timedelta(days=40), caption="Too old")
    await twitter.push(first, views=100, likes=1, comments=1, shares=0)
    await twitter.push(first, views=300, likes=20, comments=4, shares=3)
    await mastodon.push(second, views=500, likes=5, comments=0, shares=0)

    data = await tenant.data("open_analytics_pulse", {})
    assert data["summary"] == {
        "views": 800,
        "engagement": 32,
        "engagement_rate": 4.0,
        "posts": 3,
        "posts_with_metrics": 2,
    }
    assert data["platform_totals"] == [
        {"platform": "mastodon", "views": 500, "engagement": 5, "posts": 1},
        {"platform": "twitter", "views": 300, "engagement": 27, "posts": 2},
    ]
    assert [post["id"] for post in data["posts"]] == [str(second.id), str(first.id), str(unmeasured.id)]
    assert data["posts"][1]["engagement_rate"] == 9.0 and data["posts"][1]["likes"] == 20
    assert data["posts"][2]["captured_at"] is None
    only_twitter = await tenant.data("open_analytics_pulse", {"platform": "twitter", "days": 7})
    assert (only_twitter["platform"], only_twitter["summary"]["views"], only_twitter["days"]) == ("twitter", 300, 7)


async def test_mcp_clients_receive_the_ui_as_an_embedded_resource(app: Starlette, tenant: Tenant) -> None:
    async with mcp_client(app, tenant.key) as client:
        calendar = await client.call_tool("open_content_calendar", {})
        pulse = await client.call_tool("open_analytics_pulse", {"days": 7})
    for result, uri in (
        (calendar, "ui://content-calendar/v1/mcp-app.html"),
        (pulse, "ui://analytics-pulse/v1/mcp-app.html"),
    ):
        assert result.is_error is False
        assert isinstance(result.content[0], types.TextContent)
        block = result.content[1]
        assert isinstance(block, types.EmbeddedResource)
        assert isinstance(block.resource, types.TextResourceContents)
        assert str(block.resource.uri) == uri and block.resource.mime_type == "text/html;profile=mcp-app"
        assert block.resource.text.startswith("<!doctype html>")
    assert pulse.structured_content is not None and pulse.structured_content["days"] == 7


async def test_web_pages_send_anyone_not_signed_in_to_sign_in_and_back(client: httpx.AsyncClient) -> None:
    for path in ("/app/calendar", "/app/analytics?days=7", "/app/approvals"):
        response = await client.get(path, headers={"Authorization": "Bearer thk_a_key_opens_no_page"})
        assert response.status_code == 303
        assert response.headers["location"] == "/signin?" + urlencode({"next": path})


async def test_web_pages_carry_no_data_and_no_key_and_allow_only_their_own_nonce_script(
    client: httpx.AsyncClient, make_person: PersonFactory
) -> None:
    person = await make_person()
    await sign_in(client, person.email, person.password)
    for path, tool_name in (
        ("/app/calendar", "open_content_calendar"),
        ("/app/analytics", "open_analytics_pulse"),
        ("/app/approvals", "list_plan_approvals"),
    ):
        response = await client.get(path)
        assert response.status_code == 200 and response.headers["content-type"].startswith("text/html")
        policy = response.headers["content-security-policy"]
        nonce = re.search(r"'nonce-([^']+)'", policy)
        assert nonce is not None and f'<script nonce="{nonce.group(1)}">' in response.text
        assert "connect-src 'self'" in policy and "frame-ancestors 'none'" in policy and "form-action 'self'" in policy
        assert f'"tool":"{tool_name}","platforms"' in response.text and '"payload":null' in response.text
        assert person.email in response.text and 'action="/signout"' in response.text
        assert "sessionStorage" not in response.text and "API key" not in response.text
    first, second = [await client.get("/app/calendar") for _ in range(2)]
    assert first.headers["content-security-policy"] != second.headers["content-security-policy"]


async def test_a_signed_in_page_calls_tools_on_the_session_with_its_csrf_token_and_nothing_less(
    client: httpx.AsyncClient, make_person: PersonFactory, platform: Platform
) -> None:
    person = await make_person(tier="pro")
    await sign_in(client, person.email, person.password)
    page = await client.get("/app/calendar")
    token = csrf_of(page.text)
    calendar = await client.post("/v1/tools/open_content_calendar", json={}, headers={"X-CSRF-Token": token})
    assert calendar.status_code == 200, calendar.text
    assert calendar.json()["structuredContent"]["posts"] == []
    balance = await client.post("/v1/tools/get_credit_balance", json={}, headers={"X-CSRF-Token": token})
    assert balance.json()["structuredContent"]["plan"] == "pro"
    # The cookie alone, as another site's form or fetch would send it, is no credential; nor is a made-up token.
    for headers in ({}, {"X-CSRF-Token": "0" * 64}):
        refused = await client.post("/v1/tools/get_credit_balance", json={}, headers=headers)
        assert refused.status_code == 401 and refused.json()["error"]["error_type"] == "unauthenticated"
    # The usage is the person's, by name.
    usage = await client.post(
        "/v1/tools/get_mcp_usage", json={"response_format": "json"}, headers={"X-CSRF-Token": token}
    )
    assert {item["tool_name"] for item in usage.json()["structuredContent"]["tools"]} >= {"open_content_calendar"}


async def test_when_the_session_expires_the_page_and_its_calls_go_back_to_sign_in(
    client: httpx.AsyncClient, make_person: PersonFactory, platform: Platform
) -> None:
    person = await make_person()
    await sign_in(client, person.email, person.password)
    token = csrf_of((await client.get("/app/calendar")).text)
    async with platform.session_factory() as session, session.begin():
        await session.execute(update(WebSession).values(expires_at=datetime.now(UTC) - timedelta(seconds=1)))
    await platform.authenticator.close()
    page = await client.get("/app/calendar")
    assert page.status_code == 303 and page.headers["location"].startswith("/signin?next=")
    call = await client.post("/v1/tools/get_credit_balance", json={}, headers={"X-CSRF-Token": token})
    assert call.status_code == 401


async def test_the_approvals_queue_lists_only_the_persons_own_plans_with_pending_items(
    client: httpx.AsyncClient, make_person: PersonFactory, tenant: Tenant
) -> None:
    # Another account's plan in review never shows.
    other = await tenant.data("save_content_plan", {"plan": {"topic": "Not yours", "posts": [{"caption": "x"}]}})
    await tenant.data("submit_content_plan_for_approval", {"plan_id": other["plan_id"]})
    refused = await client.get("/app/approvals/plans", headers=tenant.headers)
    assert refused.status_code == 401, "a key is no sign-in for the page's own endpoint"

    person = await make_person()
    await sign_in(client, person.email, person.password)
    token = csrf_of((await client.get("/app/approvals")).text)

    async def call(tool: str, arguments: dict[str, object]) -> dict[str, Any]:
        response = await client.post(f"/v1/tools/{tool}", json=arguments, headers={"X-CSRF-Token": token})
        return response.json()["structuredContent"]  # type: ignore[no-any-return]

    posts = [{"id": "one", "caption": "First"}, {"id": "two", "caption": "Second"}]
    reviewed = await call("save_content_plan", {"plan": {"topic": "Launch week", "posts": posts}})
    await call("submit_content_plan_for_approval", {"plan_id": reviewed["plan_id"]})
    await call("save_content_plan", {"plan": {"topic": "Still a draft", "posts": posts}})
    listed = (await client.get("/app/approvals/plans")).json()["plans"]
    assert [(plan["plan_id"], plan["topic"], plan["pending"]) for plan in listed] == [
        (reviewed["plan_id"], "Launch week", 2)
    ]
    items = (await call("list_plan_approvals", {"plan_id": reviewed["plan_id"]}))["items"]
    for item in items:
        await call("respond_plan_approval", {"approval_id": item["id"], "decision": "approved"})
    assert (await client.get("/app/approvals/plans")).json()["plans"] == []
