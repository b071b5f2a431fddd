"""Every tool name an answer mentions is a registered tool: agents follow these names, so a wrong one is a dead end.

A representative run is read whole, the text blocks and the structuredContent, every string in it: each tool
called bare (which walks the validation and recovery messages), then a brand, a connected account, a scheduled
post, a plan with a pending approval and measured posts, then every other tool called as an agent would until
it answers successfully. The test fails when a tool's success is never read, save the few that need an outside
service (NEEDS_AN_OUTSIDE_SERVICE), so a new tool joins the walk.
"""

from __future__ import annotations

import re
from collections.abc import Iterator
from datetime import timedelta
from pathlib import Path
from typing import Any

import httpx
import pytest

from tests.conftest import Tenant, settings_for_test
from tests.domains.analytics.conftest import now, open_channel
from tests.providers.text.brands import BRANDS
from toolhost import catalog
from toolhost.config import Settings
from toolhost.platform.runtime import Platform


@pytest.fixture
def settings(database_url: str, tmp_path: Path) -> Settings:
    """Test settings whose fetcher may reach the webhook account's target on 127.0.0.1."""
    return settings_for_test(
        database_url=database_url,
        media={"root": str(tmp_path / "media")},
        fetch={"allow": ["127.0.0.1"], "allow_http": True},
    )


def _strings(value: Any) -> Iterator[str]:
    if isinstance(value, str):
        yield value
    elif isinstance(value, dict):
        for item in value.values():
            yield from _strings(item)
    elif isinstance(value, list):
        for item in value:
            yield from _strings(item)


def _field_names(schema: Any) -> Iterator[str]:
    """Every property name of a JSON Schema: snake_case field names are not tool names."""
    if isinstance(schema, dict):
        for name, value in schema.items():
            if name == "properties" and isinstance(value, dict):
                yield from value
            yield from _field_names(value)
    elif isinstance(schema, list):
        for item in schema:
            yield from _field_names(item)


def _keys(value: Any) -> Iterator[str]:
    """Every key of an answer (a composition's `start_sec` prop is data, not a tool)."""
    if isinstance(value, dict):
        for key, item in value.items():
            yield str(key)
            yield from _keys(item)
    elif isinstance(value, list):
        for item in value:
            yield from _keys(item)


def _unregistered_tool_names(answers: list[tuple[str, Any]]) -> dict[str, set[str]]:
    """{name that looks like a tool (a tool verb + words) but is none: the tools whose answers said it}."""
    specs = catalog.build_registry().all()
    names = {spec.name for spec in specs}
    fields = {name for spec in specs for name in _field_names([spec.input_schema, spec.output_schema])}
    fields |= {key for _, body in answers for key in _keys(body)}
    verbs = sorted({name.split("_")[0] for name in names})
    looks_like_a_tool = re.compile(rf"\b(?:{'|'.join(verbs)})_[a-z0-9]+(?:_[a-z0-9]+)*\b")
    found: dict[str, set[str]] = {}
    for tool_name, body in answers:
        for text in _strings(body):
            for candidate in looks_like_a_tool.findall(text):
                if candidate not in names and candidate not in fields:
                    found.setdefault(candidate, set()).add(tool_name)
    return found


def test_the_scan_catches_a_name_that_is_no_tool() -> None:
    answer = {"recommendedNextAction": "review them with list_plan_approvals and respond_to_approval."}
    assert _unregistered_tool_names([("get_loop_summary", answer)]) == {"respond_to_approval": {"get_loop_summary"}}


async def test_no_answer_of_a_representative_run_names_a_tool_that_does_not_exist(
    tenant: Tenant, client: httpx.AsyncClient, platform: Platform
) -> None:
    answers: list[tuple[str, Any]] = []

    async def call(tool_name: str, arguments: dict[str, Any]) -> dict[str, Any]:
        response = await tenant.call(tool_name, arguments)
        body: dict[str, Any] = response.json()
        answers.append((tool_name, body))
        return body

    for spec in sorted(platform.registry.all(), key=lambda spec: spec.name):
        if spec.category != "generation" or spec.name in ("generate_content", "plan_content_week"):
            await call(spec.name, {})
    await call("get_loop_summary", {})
    palette = {"primary": "#1f4e79", "secondary": "#0b1f33", "accent": "#f2a900"}
    await call("save_brand_profile", {"brand_context": {**BRANDS["relay"], "colorPalette": palette}})
    await call("get_loop_summary", {})
    channel = await open_channel(platform, client, tenant.project_id, tenant.account_id)
    await call("get_loop_summary", {})
    posts = [
        await channel.published(at=now() - timedelta(days=day), caption=caption)
        for day, caption in ((2, "Why async standups? Read on."), (3, "5 lessons from remote work"), (4, "Hello."))
    ]
    for number, post in enumerate(posts):
        await channel.push(post, views=100 * (number + 1), likes=10 - number, comments=1, shares=0)
    await call(
        "schedule_post",
        {
            "platforms": ["twitter"],
            "caption": "Async updates save our team an hour a day.",
            "schedule_at": (now() + timedelta(days=1)).isoformat(),
        },
    )
    plan = await call("plan_content_week", {"topic": "Async standups", "platforms": ["twitter"], "days": 1})
    plan_id = plan["structuredContent"]["plan_id"]
    await call("submit_content_plan_for_approval", {"plan_id": plan_id})
    await call("list_plan_approvals", {"plan_id": plan_id})
    summary = await call("get_loop_summary", {})
    assert "approval" in summary["structuredContent"]["recommendedNextAction"]
    for tool_name, arguments in (
        ("get_ideation_context", {}),
        ("suggest_next_content", {"count": 5}),
        ("fetch_trends", {"source": "internal"}),
        ("generate_performance_digest", {}),
        ("detect_anomalies", {}),
        ("get_performance_insights", {}),
        ("quality_check_plan", {"plan": {"posts": plan["structuredContent"]["posts"]}}),
        ("get_content_plan", {"plan_id": plan_id}),
        ("check_pipeline_readiness", {"platforms": ["twitter"]}),
        ("find_next_slots", {"platforms": ["twitter"]}),
    ):
        await call(tool_name, arguments)
    await _walk_the_other_tools(call, plan_id, str(tenant.project_id))

    # Every tool's answer was read at least once on its way to success, save those that need an outside service
    # (covered by their own domain's tests against stand-ins).
    succeeded = {tool_name for tool_name, body in answers if not body.get("isError")}
    never = {spec.name for spec in platform.registry.all()} - succeeded - NEEDS_AN_OUTSIDE_SERVICE
    assert never == set(), {name: body["error"]["message"] for name, body in answers if name in never}
    assert _unregistered_tool_names(answers) == {}


PNG = "iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAIAAACQd1PeAAAADElEQVR4nGP4z8AAAAMBAQDJ/pLvAAAAAElFTkSuQmCC"
# A YouTube channel (its analytics and comments), a site to read, Chromium, espeak-ng, a person completing a
# connection, or a worker (render_demo_video waits a minute for its render before it answers).
NEEDS_AN_OUTSIDE_SERVICE = frozenset(
    {
        "fetch_youtube_analytics",
        "list_comments",
        "post_comment",
        "reply_to_comment",
        "moderate_comment",
        "delete_comment",
        "extract_brand",
        "extract_url_content",
        "render_hyperframes",
        "generate_voiceover",
        "render_demo_video",
        "wait_for_connection",
    }
)


def data(body: dict[str, Any]) -> Any:
    """The structuredContent of an answer that must be a success."""
    assert not body.get("isError"), body
    return body["structuredContent"]


async def _walk_the_other_tools(call: Any, plan_id: str, project_id: str) -> None:
    """The tools the run above did not take to a successful answer, each called as an agent would."""
    await call("generate_content", {"prompt": "Announce our async standup guide", "content_type": "caption"})
    await call(
        "adapt_content", {"content": "Async standups save an hour a day. Try one.", "target_platform": "twitter"}
    )
    await call("create_storyboard", {"concept": "How to run an async standup in 3 steps", "platform": "tiktok"})
    carousel = data(await call("generate_carousel", {"topic": "How to run an async standup in 3 steps"}))
    await call("visual_quality_check", {"slides": carousel["slides"]})
    rendered = data(await call("create_carousel", {"topic": "Async standups", "slide_count": 3}))
    await call("delete_carousel", {"content_id": rendered["carouselId"], "confirm": True})
    image = data(await call("generate_image", {"prompt": "Async standups: one update, no meeting"}))
    await call("check_status", {"job_id": image["jobId"]})
    await call("cancel_async_job", {"job_id": image["jobId"], "confirm": True})
    await call("generate_video", {"prompt": "Async standups in five seconds"})
    await call(
        "render_template_video", {"composition_id": "TwitterAd", "input_props": '{"headline": "Async standups"}'}
    )
    uploaded = data(await call("upload_media", {"file_data": PNG, "file_name": "dot.png", "content_type": "image/png"}))
    await call("get_media_url", {"r2_key": uploaded["r2_key"]})
    await call("check_brand_consistency", {"content": "Async updates replace daily status meetings."})
    await call("audit_brand_colors", {"content_colors": ["#ff0000"]})
    await call("export_design_tokens", {"format": "css"})
    await call("update_platform_voice", {"platform": "linkedin", "tone": ["direct"]})
    await call(
        "quality_check", {"caption": "Async updates save an hour a day. Try one this week.", "platforms": ["twitter"]}
    )
    posts = data(await call("get_content_plan", {"plan_id": plan_id}))["plan"]["posts"]
    await call("update_content_plan", {"plan_id": plan_id, "post_updates": [{"post_id": posts[0]["id"]}]})
    approvals = data(await call("list_plan_approvals", {"plan_id": plan_id}))
    await call("respond_plan_approval", {"approval_id": approvals["items"][0]["id"], "decision": "approved"})
    await call("schedule_content_plan", {"plan_id": plan_id, "dry_run": True})
    await call("create_plan_approvals", {"plan_id": plan_id, "posts": [{"id": posts[0]["id"]}]})
    await call("auto_approve_plan", {"plan_id": plan_id})
    saved = data(await call("save_content_plan", {"plan": {"topic": "Spare", "posts": [{"caption": "A post."}]}}))
    await call("delete_content_plan", {"plan_id": saved["plan_id"], "confirm": True})
    scheduled = data(await call("list_recent_posts", {}))
    [post_id] = [post["id"] for post in scheduled["posts"] if post["status"] == "scheduled"]
    later = (now() + timedelta(days=2)).isoformat()
    await call("reschedule_post", {"post_id": post_id, "scheduled_at": later})
    await call("cancel_scheduled_post", {"post_id": post_id, "confirm": True})
    pipeline = {"topic": "Async standups", "platforms": ["twitter"], "days": 1, "dry_run": True}
    await call("run_content_pipeline", pipeline)
    recipe = data(await call("execute_recipe", {"slug": "topic-to-carousel", "inputs": {"topic": "Async standups"}}))
    await call("get_recipe_run_status", {"run_id": recipe["run_id"]})
    await call("get_recipe_details", {"slug": "topic-to-carousel"})
    await call("get_skill", {"slug": "hook-writing"})
    await call("run_skill", {"skill_id": "skill-carousel-from-topic", "topic": "Async standups"})
    found = data(await call("search", {"query": "schedule a post"}))
    await call("fetch", {"id": found["results"][0]["id"]})
    config = data(
        await call(
            "create_autopilot_config",
            {"name": "Weekly", "project_id": project_id, "schedule_days": ["mon"], "schedule_time": "09:00"},
        )
    )
    await call("update_autopilot_config", {"config_id": config["id"], "enabled": False})
    await call("delete_autopilot_config", {"config_id": config["id"], "confirm": True})
    await call("start_platform_connection", {"platform": "mastodon"})
