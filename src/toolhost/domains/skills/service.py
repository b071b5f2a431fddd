"""Skills: the shipped guides (with a section compiled from the project's analytics) and the workflows."""

from __future__ import annotations

import uuid
from dataclasses import dataclass
from functools import cache
from importlib import resources
from typing import Any

from sqlalchemy import func, select
from sqlalchemy.ext.asyncio import AsyncSession

from toolhost.config import Settings
from toolhost.db.base import utcnow
from toolhost.domains.analytics import service as analytics_service
from toolhost.domains.approvals.models import ApprovalItem
from toolhost.domains.recipes import service as recipes_service
from toolhost.platform.registry import Registry
from toolhost.platform.results import NotFound

TIERS = ("trial", "pro", "team", "agency")
GUIDE_SLUGS = ("hook-writing", "carousel-design", "short-video-scripting", "posting-cadence", "comment-replies")
# Which parts of the compiled section each guide shows, most relevant first.
GUIDE_SECTIONS = {
    "hook-writing": ("hooks", "formats"),
    "carousel-design": ("formats", "hooks"),
    "short-video-scripting": ("formats", "hooks"),
    "posting-cadence": ("times", "approvals"),
    "comment-replies": ("hooks", "approvals"),
}
ANALYTICS_DAYS = 90


@dataclass(frozen=True, slots=True)
class Guide:
    """A playbook document: its frontmatter and markdown body."""

    slug: str
    frontmatter: dict[str, Any]
    body: str

    @property
    def version(self) -> int:
        return int(self.frontmatter.get("version", 1))

    @property
    def platform(self) -> str | None:
        return self.frontmatter.get("platform")


WORKFLOWS: tuple[dict[str, Any], ...] = (
    {
        "id": "skill-weekly-content-engine",
        "name": "Weekly content engine",
        "studio": "caption",
        "category": "content_creation",
        "shortDescription": "A week of Instagram captions on one topic, quality-checked and sent for approval.",
        "hookFormula": "Question or number hook on the reader's problem, then one idea per post.",
        "estimatedSeconds": 20,
        "featured": True,
        "recipe_slug": "weekly-instagram-calendar",
    },
    {
        "id": "skill-url-repurpose",
        "name": "Repurpose a URL",
        "studio": "caption",
        "category": "repurposing",
        "shortDescription": "One article, video or product page rewritten for every platform you post on.",
        "hookFormula": "The source's strongest claim, restated as the reader's outcome.",
        "estimatedSeconds": 30,
        "featured": False,
        "recipe_slug": "url-to-social-posts",
    },
    {
        "id": "skill-carousel-from-topic",
        "name": "Carousel from a topic",
        "studio": "carousel",
        "category": "content_creation",
        "shortDescription": "A carousel drafted, checked for overflow and spelling, and rendered in the brand.",
        "hookFormula": "Cover: at most 8 words promising the payoff of the last slide.",
        "estimatedSeconds": 90,
        "featured": True,
        "recipe_slug": "topic-to-carousel",
    },
)
WORKFLOWS_BY_ID = {workflow["id"]: workflow for workflow in WORKFLOWS}


def _parse(slug: str, text: str) -> Guide:
    """Splits `---` frontmatter (`key: value` lines) from the markdown body."""
    frontmatter: dict[str, Any] = {}
    body = text
    if text.startswith("---\n"):
        header, _, body = text[4:].partition("\n---\n")
        for line in header.splitlines():
            key, _, value = line.partition(":")
            if key.strip():
                frontmatter[key.strip()] = value.strip()
    return Guide(slug=slug, frontmatter=frontmatter, body=body.strip())


@cache
def guides() -> dict[str, Guide]:
    """The shipped guides, read once from the package."""
    folder = resources.files("toolhost.domains.skills").joinpath("guides")
    return {slug: _parse(slug, folder.joinpath(f"{slug}.md").read_text(encoding="utf-8")) for slug in GUIDE_SLUGS}


def tier_minimum(settings: Settings, slug: str) -> str:
    """The lowest tier that may read a skill (settings; trial by default)."""
    return settings.skills.tier_minimum.get(slug, "trial")


def is_locked(settings: Settings, slug: str, tier: str) -> bool:
    """The caller's tier is below the skill's minimum."""
    return TIERS.index(tier) < TIERS.index(tier_minimum(settings, slug))


def workflow_entry(registry: Registry, settings: Settings, workflow: dict[str, Any]) -> dict[str, Any]:
    """A workflow's list entry, with the credits and step count of its recipe."""
    recipe = recipes_service.get_recipe(workflow["recipe_slug"])
    return {
        **{key: value for key, value in workflow.items() if key != "recipe_slug"},
        "estimatedCredits": recipes_service.estimated_credits(registry, recipe),
        "stepCount": len(recipe.steps),
        "recipe_slug": workflow["recipe_slug"],
        "tier_minimum": tier_minimum(settings, workflow["id"]),
        "use_with": "run_skill",
    }


def list_skills(
    *, registry: Registry, settings: Settings, tier: str, studio: str | None, featured_only: bool
) -> dict[str, Any]:
    """Every guide, and the workflows matching the filters."""
    guide_entries = [
        {
            "slug": guide.slug,
            "kind": "guide",
            "platform": guide.platform,
            "model_id": guide.frontmatter.get("model_id"),
            "tier_minimum": tier_minimum(settings, guide.slug),
            "frontmatter": guide.frontmatter,
            "updated_at": guide.frontmatter.get("updated_at"),
            "body_chars": len(guide.body),
            "locked": is_locked(settings, guide.slug, tier),
            "use_with": "get_skill",
        }
        for guide in guides().values()
    ]
    workflows = [
        workflow_entry(registry, settings, workflow)
        for workflow in WORKFLOWS
        if (studio is None or workflow["studio"] == studio) and (not featured_only or workflow["featured"])
    ]
    return {"count": len(guide_entries) + len(workflows), "guides": guide_entries, "workflows": workflows}


async def get_skill(
    *,
    registry: Registry,
    session: AsyncSession,
    settings: Settings,
    tier: str,
    slug: str,
    project_id: uuid.UUID | None,
) -> dict[str, Any]:
    """A guide with its compiled section, or a workflow's entry; a locked skill has no body."""
    guide = guides().get(slug)
    workflow = WORKFLOWS_BY_ID.get(slug)
    if guide is None and workflow is None:
        raise NotFound(
            f"No skill named '{slug}'",
            recover_with="call list_skills; skills: " + ", ".join([*GUIDE_SLUGS, *WORKFLOWS_BY_ID]),
        )
    locked = is_locked(settings, slug, tier)
    if guide is not None:
        compiled = None if locked else await compiled_section(session=session, slug=slug, project_id=project_id)
        return {
            "slug": slug,
            "kind": "guide",
            "platform": guide.platform,
            "tier_minimum": tier_minimum(settings, slug),
            "frontmatter": guide.frontmatter,
            "body": None if locked else guide.body,
            "compiled_section": compiled,
            "recipe_slug": None,
            "version": guide.version,
            "updated_at": str(guide.frontmatter.get("updated_at", "")),
            "locked": locked,
        }
    assert workflow is not None
    entry = workflow_entry(registry, settings, workflow)
    recipe = recipes_service.get_recipe(workflow["recipe_slug"])
    steps = "\n".join(f"{index}. {step.name} ({step.tool or step.type})" for index, step in enumerate(recipe.steps, 1))
    return {
        "slug": slug,
        "kind": "workflow",
        "platform": None,
        "tier_minimum": entry["tier_minimum"],
        "frontmatter": {key: entry[key] for key in ("name", "studio", "category", "hookFormula")},
        "body": None if locked else f"# {workflow['name']}\n\n{workflow['shortDescription']}\n\n{steps}",
        "compiled_section": None,
        "recipe_slug": workflow["recipe_slug"],
        "version": 1,
        "updated_at": "2026-11-21",
        "locked": locked,
    }


async def compiled_section(*, session: AsyncSession, slug: str, project_id: uuid.UUID | None) -> str:
    """Markdown compiled now from the project's own analytics; says so plainly where there is no data."""
    if project_id is None:
        return (
            "## From your analytics\n\nNo project selected, so nothing was compiled: pass project_id "
            "(or use a key bound to one project) to see your top hooks, best times and formats here."
        )
    parts = ["## From your analytics (last 90 days)"]
    for section in GUIDE_SECTIONS[slug]:
        parts.append(await _SECTIONS[section](session, project_id))
    return "\n\n".join(parts)


async def _hooks(session: AsyncSession, project_id: uuid.UUID) -> str:
    result = await analytics_service.performance_insights(
        session=session, project_id=project_id, insight_type="top_hooks", days=ANALYTICS_DAYS, limit=1
    )
    rows = result["insights"]
    hooks = (rows[0]["insight_data"] or {}).get("hooks", []) if rows else []
    if not hooks:
        return "**Top hooks:** no data yet (at least 3 published posts with metrics are needed)."
    lines = [
        f'- "{hook["hook"]}" ({hook["hook_type"]}, {hook["platform"]}): {hook["engagement"]} engagements, '
        f"{hook['views']} views"
        for hook in hooks[:5]
    ]
    return "**Top hooks:**\n" + "\n".join(lines)


async def _times(session: AsyncSession, project_id: uuid.UUID) -> str:
    result = await analytics_service.best_posting_times(
        session=session, project_id=project_id, platform=None, days=ANALYTICS_DAYS
    )
    if not result["slots"]:
        return "**Best posting times:** no data yet (no published posts with metrics)."
    lines = [
        f"- {slot['platform']} {slot['day_of_week']} {slot['hour']:02d}:00 UTC: "
        f"{slot['avg_engagement']} avg engagement over {slot['sample_size']} post(s)"
        for slot in result["slots"]
    ]
    return "**Best posting times:**\n" + "\n".join(lines)


async def _formats(session: AsyncSession, project_id: uuid.UUID) -> str:
    result = await analytics_service.fetch_analytics(
        session=session, project_id=project_id, platform=None, days=ANALYTICS_DAYS, content_id=None, limit=100
    )
    groups: dict[str, list[int]] = {}
    for post in result["posts"]:
        if post.get("captured_at"):
            groups.setdefault(post["content_type"], []).append(post["engagement"])
    if not groups:
        return "**Best formats:** no data yet (no published posts with metrics)."
    ranked = sorted(groups.items(), key=lambda entry: -sum(entry[1]) / len(entry[1]))
    lines = [
        f"- {name}: {round(sum(values) / len(values), 1)} avg engagement over {len(values)} post(s)"
        for name, values in ranked
    ]
    return "**Best formats:**\n" + "\n".join(lines)


async def _approvals(session: AsyncSession, project_id: uuid.UUID) -> str:
    pending = await session.scalar(
        select(func.count()).where(ApprovalItem.project_id == project_id, ApprovalItem.status == "pending")
    )
    if not pending:
        return "**Pending approvals:** none waiting."
    return f"**Pending approvals:** {pending} post(s) wait for review (list_plan_approvals, or the approvals page)."


_SECTIONS = {"hooks": _hooks, "times": _times, "formats": _formats, "approvals": _approvals}


# Where run_skill's optional inputs go in a step's arguments, when the step's tool takes that argument.
INPUT_ARGUMENTS = {"hook": "hook", "cta": "cta_text"}


def _with_inputs(registry: Registry, tool_name: str | None, args: Any, inputs: dict[str, Any]) -> Any:
    """A step's resolved arguments with the caller's audience, hook and call to action applied.

    The hook and CTA fill the tool's own arguments (they win over what the recipe drew from an earlier step);
    the audience, which no step's tool takes, narrows a step's topic ("<topic> for <audience>").
    """
    if isinstance(args, list):
        return [_with_inputs(registry, tool_name, item, inputs) for item in args]
    spec = registry.get(tool_name) if tool_name else None
    if spec is None or not isinstance(args, dict):
        return args
    fields = spec.input_model.model_fields
    applied = dict(args)
    for name, argument in INPUT_ARGUMENTS.items():
        if inputs.get(name) and argument in fields:
            applied[argument] = inputs[name]
    audience = inputs.get("audience")
    topic = applied.get("topic")
    if audience and isinstance(topic, str) and audience.lower() not in topic.lower():
        limit = int(spec.input_schema.get("properties", {}).get("topic", {}).get("maxLength", 200))
        applied["topic"] = f"{topic} for {audience}"[:limit]
    return applied


def run_preview(
    *, registry: Registry, settings: Settings, skill_id: str, inputs: dict[str, Any], project_id: uuid.UUID | None
) -> dict[str, Any]:
    """run_skill's payload: the workflow's recipe with its arguments resolved; nothing runs."""
    workflow = WORKFLOWS_BY_ID.get(skill_id)
    if workflow is None:
        raise NotFound(
            f"No workflow named '{skill_id}'",
            recover_with="call list_skills; workflow ids: " + ", ".join(WORKFLOWS_BY_ID),
            ids=list(WORKFLOWS_BY_ID),
        )
    recipe = recipes_service.get_recipe(workflow["recipe_slug"])
    recipe_inputs = (
        recipes_service.validate_inputs(recipe, {"topic": inputs["topic"][:200]})
        if "topic" in (recipe.inputs_schema["properties"])
        else {}
    )
    plan = recipes_service.preview_plan(recipe, recipe_inputs, project_id)
    return {
        "status": "preview",
        "skill": workflow_entry(registry, settings, workflow),
        "inputs": inputs,
        "plan": [{**step, "args": _with_inputs(registry, step["tool"], step["args"], inputs)} for step in plan],
        "estimatedCredits": recipes_service.estimated_credits(registry, recipe, recipe_inputs),
        "runUrl": f"{settings.api_root}/app/skills/{skill_id}",
        "previewedAt": utcnow().isoformat(),
        "note": "Preview only: nothing ran, nothing was charged and no job was created. To run it, call "
        f"execute_recipe with slug {recipe.slug} and its inputs (get_recipe_details lists them).",
    }
