"""Topic -> plan -> quality_check_plan -> submit -> decide every item -> approved, and the plan edits."""

from __future__ import annotations

from typing import Any

from tests.conftest import Tenant


async def make_plan(tenant: Tenant, **extra: Any) -> dict[str, Any]:
    arguments = {
        "topic": "Replacing status meetings with async updates",
        "platforms": ["linkedin", "instagram"],
        "days": 3,
        "start_date": "2030-01-07",
        **extra,
    }
    return await tenant.data("plan_content_week", arguments)


async def test_a_topic_becomes_an_approved_plan_through_review(tenant: Tenant) -> None:
    plan = await make_plan(tenant)
    assert plan["status"] == "draft"
    assert len(plan["posts"]) == 6
    assert plan["estimated_credits"] == 10
    assert plan["posts"][0]["id"] == "day1-linkedin-1"
    assert plan["end_date"] == "2030-01-09"
    assert {post["media_type"] for post in plan["posts"] if post["platform"] == "instagram"} <= {
        "carousel",
        "image",
    }

    checked = await tenant.data("quality_check_plan", {"plan": {"posts": plan["posts"]}})
    assert checked["summary"]["total_posts"] == 6
    # Instagram posts have no media yet, so they are flagged before approval.
    flagged = [post for post in checked["posts"] if post["platform"] == "instagram"]
    assert all(not post["quality"]["passed"] for post in flagged)
    updates = [{"post_id": post["id"], "media_url": "https://example.com/slide.png"} for post in flagged]
    updated = await tenant.data("update_content_plan", {"plan_id": plan["plan_id"], "post_updates": updates})
    assert updated["updated_posts"] == 3
    assert updated["status"] == "draft"
    stored = await tenant.data("get_content_plan", {"plan_id": plan["plan_id"]})
    rechecked = await tenant.data("quality_check_plan", {"plan": {"posts": stored["plan"]["posts"]}})
    assert rechecked["summary"]["passed"] >= 5, rechecked

    submitted = await tenant.data("submit_content_plan_for_approval", {"plan_id": plan["plan_id"]})
    assert submitted == {"plan_id": plan["plan_id"], "approvals_created": 6, "status": "in_review"}
    items = (await tenant.data("list_plan_approvals", {"plan_id": plan["plan_id"]}))["items"]
    for number, item in enumerate(items):
        decision = "rejected" if number == 0 else "approved"
        await tenant.data("respond_plan_approval", {"approval_id": item["id"], "decision": decision})
    final = await tenant.data("get_content_plan", {"plan_id": plan["plan_id"]})
    assert final["status"] == "approved"


async def test_an_update_matching_no_post_is_a_validation_error_and_partial_matches_are_listed(
    tenant: Tenant,
) -> None:
    plan = await make_plan(tenant, days=1)
    response = await tenant.call(
        "update_content_plan",
        {"plan_id": plan["plan_id"], "post_updates": [{"post_id": "nope", "caption": "x"}]},
    )
    assert response.json()["error"]["error_type"] == "validation_error"
    data = await tenant.data(
        "update_content_plan",
        {
            "plan_id": plan["plan_id"],
            "post_updates": [
                {"post_id": "day1-linkedin-1", "caption": "New caption"},
                {"post_id": "nope", "caption": "x"},
            ],
        },
    )
    assert data["updated_posts"] == 1
    assert data["unmatched_post_ids"] == ["nope"]


async def test_plans_of_zero_or_501_posts_are_refused(tenant: Tenant) -> None:
    empty = await tenant.call("save_content_plan", {"plan": {"topic": "t", "posts": []}})
    too_many = await tenant.call(
        "quality_check_plan",
        {"plan": {"posts": [{"id": str(n), "caption": "c", "platform": "twitter"} for n in range(501)]}},
    )
    assert empty.status_code == 400
    assert too_many.status_code == 400


async def test_submitting_a_scheduled_plan_is_a_conflict(tenant: Tenant) -> None:
    saved = await tenant.data(
        "save_content_plan", {"plan": {"topic": "t", "posts": [{"caption": "c"}]}, "status": "scheduled"}
    )
    response = await tenant.call("submit_content_plan_for_approval", {"plan_id": saved["plan_id"]})
    body = response.json()
    assert response.status_code == 200
    assert body["error"]["error_type"] == "conflict"
    assert body["error"]["current_status"] == "scheduled"


async def test_delete_needs_confirm_true_and_removes_the_plan_with_its_approvals(tenant: Tenant) -> None:
    plan = await make_plan(tenant, days=1)
    await tenant.data("submit_content_plan_for_approval", {"plan_id": plan["plan_id"]})
    refused = await tenant.call("delete_content_plan", {"plan_id": plan["plan_id"], "confirm": "true"})
    assert refused.status_code == 400
    deleted = await tenant.data("delete_content_plan", {"plan_id": plan["plan_id"], "confirm": True})
    assert deleted["deleted"] is True
    again = await tenant.call("delete_content_plan", {"plan_id": plan["plan_id"], "confirm": True})
    assert again.status_code == 404


async def test_another_tenants_plan_is_not_found(tenant: Tenant, make_tenant: Any) -> None:
    plan = await make_plan(tenant, days=1)
    other = await make_tenant()
    response = await other.call(
        "update_content_plan", {"plan_id": plan["plan_id"], "post_updates": [{"post_id": "day1-linkedin-1"}]}
    )
    assert response.status_code == 404


async def test_brand_voice_takes_the_default_string_limit(tenant: Tenant) -> None:
    voice = "Calm, plain-spoken and practical. " * 30  # ~1,000 characters: over the old 500, within 10,000
    plan = await make_plan(tenant, days=1, brand_voice=voice)
    assert len(plan["posts"]) == 2
    response = await tenant.call(
        "plan_content_week",
        {"topic": "Async updates", "platforms": ["twitter"], "brand_voice": "x" * 10_001},
    )
    assert response.json()["error"]["error_type"] == "validation_error"


async def test_an_impossible_start_date_is_a_validation_error_with_its_field_path(tenant: Tenant) -> None:
    for start_date in ("2026-02-30", "next monday", "2026-03-01T00:00:00"):
        response = await tenant.call(
            "plan_content_week", {"topic": "Async updates", "platforms": ["twitter"], "start_date": start_date}
        )
        assert response.status_code == 400, start_date
        error = response.json()["error"]
        assert error["error_type"] == "validation_error"
        assert error["field_errors"][0]["path"] == "start_date"
