"""Skills (CATALOG.md §16) over HTTP: guides with a compiled section, workflows previewed, tiers, bad input."""

from __future__ import annotations

from datetime import timedelta
from urllib.parse import urlsplit

import httpx
from sqlalchemy import func, select

from tests.conftest import Tenant, TenantFactory
from tests.domains.analytics.conftest import now, open_channel
from toolhost.platform.jobs import Job
from toolhost.platform.models import Account
from toolhost.platform.runtime import Platform

GUIDES = ["hook-writing", "carousel-design", "short-video-scripting", "posting-cadence", "comment-replies"]


async def test_list_skills_names_every_guide_and_workflow_with_its_recipe(tenant: Tenant) -> None:
    data = await tenant.data("list_skills", {})
    assert [guide["slug"] for guide in data["guides"]] == GUIDES
    assert all(guide["body_chars"] > 1000 and not guide["locked"] for guide in data["guides"])
    assert {item["id"]: item["recipe_slug"] for item in data["workflows"]} == {
        "skill-weekly-content-engine": "weekly-instagram-calendar",
        "skill-url-repurpose": "url-to-social-posts",
        "skill-carousel-from-topic": "topic-to-carousel",
    }
    assert data["count"] == 8
    carousel = await tenant.data("list_skills", {"studio": "carousel"})
    assert [item["id"] for item in carousel["workflows"]] == ["skill-carousel-from-topic"]
    assert carousel["workflows"][0]["stepCount"] == 3
    assert len(carousel["guides"]) == 5


async def test_get_skill_without_analytics_says_there_is_no_data_yet(tenant: Tenant) -> None:
    data = await tenant.data("get_skill", {"slug": "posting-cadence"})
    assert data["body"].startswith("# Posting cadence")
    assert "no data yet" in data["compiled_section"]
    assert "Pending approvals:** none" in data["compiled_section"]
    assert data["locked"] is False and data["version"] == 1


async def test_get_skill_compiles_top_hooks_and_formats_from_the_projects_posts(
    tenant: Tenant, client: httpx.AsyncClient, platform: Platform
) -> None:
    channel = await open_channel(platform, client, tenant.project_id, tenant.account_id)
    posts = [
        await channel.published(at=now() - timedelta(days=day), caption=caption, media_type=media)
        for day, caption, media in (
            (1, "Why now? Read on", "CAROUSEL_ALBUM"),
            (2, "5 tips for reach", None),
            (3, "Plain.", None),
        )
    ]
    for post, likes in zip(posts, (40, 20, 1), strict=True):
        await channel.push(post, views=100, likes=likes, comments=0, shares=0)
    data = await tenant.data("get_skill", {"slug": "hook-writing", "project_id": str(tenant.project_id)})
    section = data["compiled_section"]
    assert '"Why now?" (question, twitter): 40 engagements' in section
    assert section.index("carousel_album: 40.0") < section.index("text: 10.5")
    times = await tenant.data("get_skill", {"slug": "posting-cadence"})
    assert "twitter" in times["compiled_section"] and "UTC" in times["compiled_section"]


async def test_a_guide_above_the_callers_tier_is_locked_and_has_no_body(
    make_tenant: TenantFactory, settings: object
) -> None:
    settings.skills.tier_minimum["comment-replies"] = "team"  # type: ignore[attr-defined]
    trial = await make_tenant(tier="trial", scopes=["mcp:read"])
    data = await trial.data("get_skill", {"slug": "comment-replies"})
    assert data["locked"] is True and data["body"] is None and data["compiled_section"] is None
    listed = await trial.data("list_skills", {})
    assert {guide["slug"]: guide["locked"] for guide in listed["guides"]}["comment-replies"] is True
    agency = await make_tenant(tier="agency")
    assert (await agency.data("get_skill", {"slug": "comment-replies"}))["body"]


async def _balance_and_jobs(platform: Platform, tenant: Tenant) -> tuple[int, int]:
    async with platform.session_factory() as session:
        account = await session.get(Account, tenant.account_id)
        assert account is not None
        jobs = await session.scalar(select(func.count()).where(Job.account_id == tenant.account_id))
        return account.credit_balance, int(jobs or 0)


async def test_run_skill_previews_the_recipe_and_runs_nothing(tenant: Tenant, platform: Platform) -> None:
    before = await _balance_and_jobs(platform, tenant)
    data = await tenant.data(
        "run_skill", {"skill_id": "skill-weekly-content-engine", "topic": "Meal prep", "audience": "busy parents"}
    )
    assert data["status"] == "preview"
    assert [step["tool"] for step in data["plan"]] == [
        "plan_content_week",
        "quality_check_plan",
        "submit_content_plan_for_approval",
    ]
    assert data["plan"][0]["args"]["topic"] == "Meal prep for busy parents"
    assert data["plan"][0]["args"]["platforms"] == ["instagram"]
    assert data["plan"][2]["args"]["plan_id"] == "{{steps.plan.plan_id}}"
    assert data["estimatedCredits"] == 10
    assert data["runUrl"].endswith("/app/skills/skill-weekly-content-engine")
    assert "execute_recipe" in data["note"] and data["inputs"]["audience"] == "busy parents"
    assert await _balance_and_jobs(platform, tenant) == before == (before[0], 0)


async def test_run_skill_puts_the_hook_and_cta_where_the_tools_take_them_and_its_run_url_is_a_page(
    tenant: Tenant, client: httpx.AsyncClient
) -> None:
    data = await tenant.data(
        "run_skill",
        {
            "skill_id": "skill-carousel-from-topic",
            "topic": "Pricing a croissant",
            "audience": "new bakery owners",
            "hook": "Your croissant is underpriced",
            "cta": "Save this for your next price review",
        },
    )
    draft, check, render = data["plan"]
    assert draft["args"]["topic"] == render["args"]["topic"] == "Pricing a croissant for new bakery owners"
    assert draft["args"]["hook"] == render["args"]["hook"] == "Your croissant is underpriced"
    assert draft["args"]["cta_text"] == render["args"]["cta_text"] == "Save this for your next price review"
    assert "hook" not in check["args"]

    page = await client.get(urlsplit(data["runUrl"]).path)
    assert page.status_code == 200
    assert "Carousel" in page.text and "execute_recipe" in page.text and "topic-to-carousel" in page.text
    missing = await client.get("/app/skills/skill-nope")
    assert missing.status_code == 404
    assert "skill-carousel-from-topic" in missing.text


async def test_skills_refuse_unknown_ids_and_bad_arguments(tenant: Tenant) -> None:
    unknown = await tenant.call("get_skill", {"slug": "no-such-skill"})
    assert unknown.json()["error"]["error_type"] == "not_found"
    missing = await tenant.call("run_skill", {"skill_id": "skill-nope", "topic": "x"})
    body = missing.json()["error"]
    assert body["error_type"] == "not_found" and "skill-url-repurpose" in body["recover_with"]
    too_long = await tenant.call("run_skill", {"skill_id": "skill-url-repurpose", "topic": "x" * 501})
    assert too_long.status_code == 400
    assert too_long.json()["error"]["field_errors"][0]["path"] == "topic"
    studio = await tenant.call("list_skills", {"studio": "podcast"})
    assert studio.status_code == 400


async def test_another_tenants_project_is_not_found_for_get_skill(tenant: Tenant, make_tenant: TenantFactory) -> None:
    other = await make_tenant()
    response = await tenant.call("get_skill", {"slug": "hook-writing", "project_id": str(other.project_id)})
    assert response.status_code == 404
    assert response.json()["error"]["error_type"] == "not_found"
