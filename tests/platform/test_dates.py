"""Dates and times in tool arguments are real values, checked by the input models with their field paths."""

from __future__ import annotations

import re
import uuid
from typing import Any

import pytest

from tests.conftest import Tenant
from toolhost.catalog import build_registry

SOME_ID = str(uuid.uuid4())
# Argument names that hold a date or a time wherever they appear in an input model.
DATE_OR_TIME_NAME = re.compile(r"(_at|_date|^start_after)$")

INVALID_DATES = [
    pytest.param(
        "schedule_post",
        {"caption": "x", "platforms": ["twitter"], "schedule_at": "2026-02-30T10:00:00Z"},
        "schedule_at",
        id="schedule_post-impossible-day",
    ),
    pytest.param(
        "schedule_post",
        {"caption": "x", "platforms": ["twitter"], "schedule_at": 1767225600},
        "schedule_at",
        id="schedule_post-unix-timestamp",
    ),
    pytest.param(
        "reschedule_post",
        {"post_id": SOME_ID, "scheduled_at": "next tuesday"},
        "scheduled_at",
        id="reschedule_post-words",
    ),
    pytest.param(
        "reschedule_post",
        {"post_id": SOME_ID, "scheduled_at": "2026-05-01T10:00:00Z", "expected_scheduled_at": "2026-05-01T10:00:00"},
        "expected_scheduled_at",
        id="reschedule_post-no-offset",
    ),
    pytest.param(
        "find_next_slots",
        {"platforms": ["twitter"], "start_after": "2026-13-01T00:00:00Z"},
        "start_after",
        id="find_next_slots-month-13",
    ),
    pytest.param(
        "schedule_content_plan",
        {"plan": {"posts": [{"id": "p1", "platform": "twitter", "caption": "x", "schedule_at": "2026-04-31T09:00Z"}]}},
        "plan.posts[0].schedule_at",
        id="schedule_content_plan-inline-post",
    ),
    pytest.param(
        "save_content_plan",
        {"plan": {"topic": "launch", "posts": [{"id": "p1", "schedule_at": "soon"}]}},
        "plan.posts[0].schedule_at",
        id="save_content_plan-post",
    ),
    pytest.param(
        "update_content_plan",
        {"plan_id": SOME_ID, "post_updates": [{"post_id": "p1", "schedule_at": "2026-02-29T10:00:00Z"}]},
        "post_updates[0].schedule_at",
        id="update_content_plan-no-leap-day",
    ),
    pytest.param(
        "create_plan_approvals",
        {"plan_id": SOME_ID, "posts": [{"id": "p1", "schedule_at": "Monday 9am"}]},
        "posts[0].schedule_at",
        id="create_plan_approvals-post",
    ),
    pytest.param(
        "respond_plan_approval",
        {"approval_id": SOME_ID, "decision": "edited", "edited_post": {"schedule_at": "2026-06-31T10:00:00Z"}},
        "edited_post.schedule_at",
        id="respond_plan_approval-edited-post",
    ),
    pytest.param(
        "plan_content_week",
        {"topic": "launch", "platforms": ["twitter"], "start_date": "2026-02-30"},
        "start_date",
        id="plan_content_week-impossible-day",
    ),
    pytest.param("open_content_calendar", {"start_date": "2026-13-01"}, "start_date", id="open_content_calendar"),
    pytest.param(
        "fetch_youtube_analytics",
        {"action": "channel", "start_date": "2026-01-01", "end_date": "2026-01-32"},
        "end_date",
        id="fetch_youtube_analytics-day-32",
    ),
]


@pytest.mark.parametrize(("tool_name", "arguments", "path"), INVALID_DATES)
async def test_an_invalid_date_or_time_is_a_validation_error_naming_its_field(
    tenant: Tenant, tool_name: str, arguments: dict[str, Any], path: str
) -> None:
    response = await tenant.call(tool_name, arguments)
    body = response.json()
    assert response.status_code == 400, body
    error = body["structuredContent"]["error"]
    assert error["error_type"] == "validation_error"
    assert [item["path"] for item in error["field_errors"]] == [path]
    assert path in error["message"]


async def test_a_time_with_an_offset_is_kept_as_the_same_instant_in_utc(tenant: Tenant) -> None:
    saved = await tenant.data(
        "save_content_plan",
        {
            "plan": {
                "topic": "launch",
                "posts": [{"id": "p1", "caption": "x", "schedule_at": "2026-05-01T12:00:00+02:00"}],
            }
        },
    )
    plan = await tenant.data("get_content_plan", {"plan_id": saved["plan_id"]})
    assert plan["plan"]["posts"] == [{"id": "p1", "caption": "x", "schedule_at": "2026-05-01T10:00:00Z"}]


def date_or_time_properties(schema: dict[str, Any], definitions: dict[str, Any], path: str) -> list[tuple[str, Any]]:
    """(path, schema) of every property named like a date or a time, nested models and arrays included."""
    found: list[tuple[str, Any]] = []
    if "$ref" in schema:
        return date_or_time_properties(definitions[schema["$ref"].rsplit("/", 1)[-1]], definitions, path)
    for variant in schema.get("anyOf", []) + schema.get("allOf", []):
        found += date_or_time_properties(variant, definitions, path)
    if isinstance(schema.get("items"), dict):
        found += date_or_time_properties(schema["items"], definitions, f"{path}[]")
    for name, property_schema in schema.get("properties", {}).items():
        property_path = f"{path}.{name}" if path else name
        if DATE_OR_TIME_NAME.search(name):
            found.append((property_path, property_schema))
        found += date_or_time_properties(property_schema, definitions, property_path)
    return found


def formats(schema: dict[str, Any]) -> set[str]:
    own = {schema["format"]} if "format" in schema else set()
    return own.union(*(formats(variant) for variant in schema.get("anyOf", [])))


def test_every_date_or_time_argument_of_every_tool_is_typed_as_one() -> None:
    untyped = [
        f"{spec.name}: {path}"
        for spec in build_registry().all()
        for path, schema in date_or_time_properties(spec.input_schema, spec.input_schema.get("$defs", {}), "")
        if not formats(schema) & {"date", "date-time"}
    ]
    assert untyped == []
