"""Every tool name an answer mentions is a registered tool: agents follow these names, so a wrong one is a dead end.

A representative run (each tool called bare, which walks the validation and recovery messages, then a brand, a
connected account, a scheduled post, a plan with a pending approval and measured posts) is read whole: the text
blocks and the structuredContent, every string in it.
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
    await call("save_brand_profile", {"brand_context": BRANDS["relay"]})
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
        ("quality_check_plan", {"plan_id": plan_id}),
        ("generate_content", {"prompt": "Announce our async standup guide", "platform": "linkedin"}),
        ("check_pipeline_readiness", {}),
    ):
        await call(tool_name, arguments)

    assert len(answers) > len(platform.registry.all())
    assert _unregistered_tool_names(answers) == {}
