"""The seed's plan-approval family over HTTP: creation, one decision per item, listing, isolation."""

from __future__ import annotations

import uuid
from typing import Any

from sqlalchemy import func, select

from tests.conftest import Tenant, TenantFactory
from toolhost.domains.approvals.models import ApprovalItem
from toolhost.platform.runtime import Platform

POSTS = [
    {"id": "day1-linkedin-1", "platform": "linkedin", "caption": "Launch day", "hashtags": ["#launch"]},
    {"id": "day1-twitter-1", "platform": "twitter", "caption": "We shipped"},
]


async def stored_plan(tenant: Tenant, status: str = "draft") -> str:
    saved = await tenant.data("save_content_plan", {"plan": {"topic": "Launch", "posts": POSTS}, "status": status})
    return str(saved["plan_id"])


async def created_items(tenant: Tenant, plan_id: str) -> list[dict[str, Any]]:
    created = await tenant.data("create_plan_approvals", {"plan_id": plan_id, "posts": POSTS})
    return list(created["items"])


async def test_approvals_are_created_once_per_plan_and_post(tenant: Tenant) -> None:
    plan_id = await stored_plan(tenant)
    first = await tenant.data("create_plan_approvals", {"plan_id": plan_id, "posts": POSTS})
    assert first["created"] == 2
    assert [item["status"] for item in first["items"]] == ["pending", "pending"]
    again = await tenant.data("create_plan_approvals", {"plan_id": plan_id, "posts": POSTS})
    assert again["created"] == 0
    assert [item["id"] for item in again["items"]] == [item["id"] for item in first["items"]]
    listed = await tenant.data("list_plan_approvals", {"plan_id": plan_id, "response_format": "json"})
    assert listed["total"] == 2
    assert listed["items"][0]["original_post"] == POSTS[0]


async def test_creating_approvals_needs_a_stored_plan_and_at_least_one_post(tenant: Tenant) -> None:
    missing = await tenant.call("create_plan_approvals", {"plan_id": str(uuid.uuid4()), "posts": POSTS})
    assert missing.status_code == 404
    plan_id = await stored_plan(tenant)
    empty = await tenant.call("create_plan_approvals", {"plan_id": plan_id, "posts": []})
    assert empty.status_code == 400
    assert empty.json()["error"]["field_errors"][0]["path"] == "posts"


async def test_a_decision_is_final_and_repeating_it_returns_the_item(tenant: Tenant) -> None:
    plan_id = await stored_plan(tenant)
    item = (await created_items(tenant, plan_id))[0]
    decided = await tenant.data(
        "respond_plan_approval", {"approval_id": item["id"], "decision": "approved", "reason": "Good"}
    )
    assert decided["status"] == "approved"
    assert decided["decided_by"] == "test-key"
    assert decided["decided_at"] is not None
    repeated = await tenant.data(
        "respond_plan_approval", {"approval_id": item["id"], "decision": "approved", "reason": "Good"}
    )
    assert repeated == decided
    for other in ({"decision": "rejected"}, {"decision": "approved", "reason": "Different"}):
        response = await tenant.call("respond_plan_approval", {"approval_id": item["id"], **other})
        assert response.status_code == 200
        body = response.json()
        assert body["isError"] is True
        assert body["error"]["error_type"] == "conflict"
        assert body["error"]["current_status"] == "approved"


async def test_edited_needs_the_edited_post_and_keeps_it(tenant: Tenant) -> None:
    plan_id = await stored_plan(tenant)
    item = (await created_items(tenant, plan_id))[1]
    missing = await tenant.call("respond_plan_approval", {"approval_id": item["id"], "decision": "edited"})
    assert missing.status_code == 400
    assert "edited_post" in missing.json()["error"]["message"]
    edited_post = {"caption": "We shipped it, finally."}
    decided = await tenant.data(
        "respond_plan_approval", {"approval_id": item["id"], "decision": "edited", "edited_post": edited_post}
    )
    assert decided["status"] == "edited" and decided["edited_post"] == edited_post
    plan = await tenant.data("get_content_plan", {"plan_id": plan_id})
    assert plan["plan"]["posts"][1]["caption"] == "We shipped", "the plan payload keeps the original caption"


async def test_a_reason_over_1000_characters_changes_nothing(tenant: Tenant) -> None:
    plan_id = await stored_plan(tenant)
    item = (await created_items(tenant, plan_id))[0]
    response = await tenant.call(
        "respond_plan_approval", {"approval_id": item["id"], "decision": "rejected", "reason": "x" * 1001}
    )
    assert response.status_code == 400
    assert response.json()["error"]["field_errors"][0]["path"] == "reason"
    listed = await tenant.data("list_plan_approvals", {"plan_id": plan_id, "status": "pending"})
    assert listed["total"] == 2


async def test_listing_filters_by_status_and_formats_as_text_or_json(tenant: Tenant) -> None:
    plan_id = await stored_plan(tenant)
    items = await created_items(tenant, plan_id)
    await tenant.data("respond_plan_approval", {"approval_id": items[0]["id"], "decision": "rejected"})
    rejected = await tenant.data("list_plan_approvals", {"plan_id": plan_id, "status": "rejected"})
    assert [item["post_id"] for item in rejected["items"]] == ["day1-linkedin-1"]
    text = (await tenant.call("list_plan_approvals", {"plan_id": plan_id})).json()["content"][0]["text"]
    assert "2 approval item(s)" in text and "day1-linkedin-1: rejected" in text


async def test_deciding_every_item_of_a_plan_in_review_moves_the_plan(tenant: Tenant) -> None:
    approved_plan = await stored_plan(tenant, status="in_review")
    items = await created_items(tenant, approved_plan)
    await tenant.data("respond_plan_approval", {"approval_id": items[0]["id"], "decision": "rejected"})
    assert (await tenant.data("get_content_plan", {"plan_id": approved_plan}))["status"] == "in_review"
    await tenant.data("respond_plan_approval", {"approval_id": items[1]["id"], "decision": "approved"})
    plan = await tenant.data("get_content_plan", {"plan_id": approved_plan})
    assert plan["status"] == "approved"
    assert [post["status"] for post in plan["plan"]["posts"]] == ["rejected", "approved"]

    rejected_plan = await stored_plan(tenant, status="in_review")
    for item in await created_items(tenant, rejected_plan):
        await tenant.data("respond_plan_approval", {"approval_id": item["id"], "decision": "rejected"})
    assert (await tenant.data("get_content_plan", {"plan_id": rejected_plan}))["status"] == "draft"


async def test_another_tenants_plan_and_approval_ids_are_not_found(
    make_tenant: TenantFactory, platform: Platform
) -> None:
    owner = await make_tenant()
    stranger = await make_tenant()
    plan_id = await stored_plan(owner)
    item = (await created_items(owner, plan_id))[0]
    for tool, arguments in (
        ("get_content_plan", {"plan_id": plan_id}),
        ("list_plan_approvals", {"plan_id": plan_id}),
        ("create_plan_approvals", {"plan_id": plan_id, "posts": POSTS}),
        ("respond_plan_approval", {"approval_id": item["id"], "decision": "approved"}),
    ):
        response = await stranger.call(tool, arguments)
        assert response.status_code == 404, tool
        assert "Launch" not in response.text
    async with platform.session_factory() as session:
        assert (
            await session.scalar(select(func.count()).select_from(ApprovalItem).where(ApprovalItem.status != "pending"))
            == 0
        )


async def test_a_plan_id_with_a_project_of_another_id_is_not_found(make_tenant: TenantFactory) -> None:
    agency = await make_tenant(projects=2)
    saved = await agency.data(
        "save_content_plan",
        {"plan": {"topic": "A", "posts": POSTS}, "project_id": str(agency.project_ids[0])},
    )
    response = await agency.call(
        "create_plan_approvals",
        {"plan_id": saved["plan_id"], "posts": POSTS, "project_id": str(agency.project_ids[1])},
    )
    assert response.status_code == 404


async def test_saving_a_plan_again_replaces_it_and_keeps_its_approvals(tenant: Tenant) -> None:
    plan_id = await stored_plan(tenant)
    await created_items(tenant, plan_id)
    replaced = await tenant.data(
        "save_content_plan", {"plan": {"plan_id": plan_id, "topic": "", "posts": [{"caption": "only one"}]}}
    )
    assert replaced["plan_id"] == plan_id
    plan = await tenant.data("get_content_plan", {"plan_id": plan_id})
    assert plan["topic"] == "Untitled Plan"
    assert plan["plan"]["posts"] == [{"caption": "only one", "id": "post-1"}]
    assert (await tenant.data("list_plan_approvals", {"plan_id": plan_id}))["total"] == 2


async def test_plan_and_argument_project_ids_must_agree(make_tenant: TenantFactory) -> None:
    agency = await make_tenant(projects=2)
    response = await agency.call(
        "save_content_plan",
        {
            "plan": {"topic": "A", "posts": POSTS, "project_id": str(agency.project_ids[1])},
            "project_id": str(agency.project_ids[0]),
        },
    )
    assert response.status_code == 200
    assert response.json()["isError"] is True
    assert response.json()["error"]["error_type"] == "validation_error"
