"""Skills: the shipped guides (with a section compiled from the project's analytics) and the workflows."""

from __future__ import annotations

import dataclasses
import uuid
from dataclasses import dataclass
from datetime import datetime
from functools import cache
from importlib import resources
from typing import Any, Literal

from sqlalchemy import func, select
from sqlalchemy.ext.asyncio import AsyncSession

from toolhost.config import Settings
from toolhost.db.base import utcnow
from toolhost.domains.analytics import service as analytics_service
from toolhost.domains.approvals.models import ApprovalItem
from toolhost.domains.content import service as content_service
from toolhost.domains.recipes import service as recipes_service
from toolhost.platform.registry import Registry
from toolhost.platform.results import NotFound, ValidationFailed
from toolhost.providers.text import select_model
from toolhost.providers.text.brief import URL
from toolhost.providers.text.compose import cut_at_sentence

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
    """A playbook document: its frontmatter (the document's own `key: value` header) and markdown body."""

    slug: str
    frontmatter: dict[str, Any]
    body: str

    @property
    def version(self) -> int:
        return int(self.frontmatter.get("version", 1))

    @property
    def platform(self) -> str | None:
        return self.frontmatter.get("platform")


@dataclass(frozen=True, slots=True)
class Workflow:
    """A workflow skill: a recipe with a name, a studio and a hook formula."""

    id: str
    name: str
    studio: str
    category: str
    short_description: str
    hook_formula: str
    estimated_seconds: int
    featured: bool
    recipe_slug: str


WORKFLOWS: tuple[Workflow, ...] = (
    Workflow(
        id="skill-weekly-content-engine",
        name="Weekly content engine",
        studio="caption",
        category="content_creation",
        short_description="A week of Instagram captions on one topic, quality-checked and sent for approval.",
        hook_formula="Question or number hook on the reader's problem, then one idea per post.",
        estimated_seconds=20,
        featured=True,
        recipe_slug="weekly-instagram-calendar",
    ),
    Workflow(
        id="skill-url-repurpose",
        name="Repurpose a URL",
        studio="caption",
        category="repurposing",
        short_description="One article, video or product page rewritten for every platform you post on.",
        hook_formula="The source's strongest claim, restated as the reader's outcome.",
        estimated_seconds=30,
        featured=False,
        recipe_slug="url-to-social-posts",
    ),
    Workflow(
        id="skill-carousel-from-topic",
        name="Carousel from a topic",
        studio="carousel",
        category="content_creation",
        short_description="A carousel drafted, checked for overflow and spelling, and rendered in the brand.",
        hook_formula="Cover: at most 8 words promising the payoff of the last slide.",
        estimated_seconds=90,
        featured=True,
        recipe_slug="topic-to-carousel",
    ),
)
WORKFLOWS_BY_ID = {workflow.id: workflow for workflow in WORKFLOWS}


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


@dataclass(frozen=True, slots=True)
class WorkflowEntry:
    """A workflow with its recipe's estimate and step count, and the lowest tier that may read it."""

    workflow: Workflow
    estimated_credits: int
    step_count: int
    tier_minimum: str


def workflow_entry(registry: Registry, settings: Settings, workflow: Workflow) -> WorkflowEntry:
    """A workflow's list entry, with the credits and step count of its recipe."""
    recipe = recipes_service.get_recipe(workflow.recipe_slug)
    return WorkflowEntry(
        workflow=workflow,
        estimated_credits=recipes_service.estimated_credits(registry, recipe),
        step_count=len(recipe.steps),
        tier_minimum=tier_minimum(settings, workflow.id),
    )


@dataclass(frozen=True, slots=True)
class GuideEntry:
    """A guide as list_skills shows it: the lowest tier that may read it, and whether the caller may."""

    guide: Guide
    tier_minimum: str
    locked: bool


@dataclass(frozen=True, slots=True)
class SkillListing:
    """Every guide, and the workflows matching the filters."""

    guides: list[GuideEntry]
    workflows: list[WorkflowEntry]


def list_skills(
    *, registry: Registry, settings: Settings, tier: str, studio: str | None, featured_only: bool
) -> SkillListing:
    """Every guide, and the workflows matching the filters."""
    return SkillListing(
        guides=[
            GuideEntry(
                guide=guide,
                tier_minimum=tier_minimum(settings, guide.slug),
                locked=is_locked(settings, guide.slug, tier),
            )
            for guide in guides().values()
        ],
        workflows=[
            workflow_entry(registry, settings, workflow)
            for workflow in WORKFLOWS
            if (studio is None or workflow.studio == studio) and (not featured_only or workflow.featured)
        ],
    )


@dataclass(frozen=True, slots=True)
class Skill:
    """A guide or a workflow as get_skill reads it; a locked one has no body.

    `frontmatter` is a guide's own header (a workflow shows its name, studio, category and hook formula there).
    """

    slug: str
    kind: Literal["guide", "workflow"]
    platform: str | None
    tier_minimum: str
    frontmatter: dict[str, Any]
    body: str | None
    compiled_section: str | None
    recipe_slug: str | None
    version: int
    updated_at: str
    locked: bool


async def get_skill(
    *, session: AsyncSession, settings: Settings, tier: str, slug: str, project_id: uuid.UUID | None
) -> Skill:
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
        return Skill(
            slug=slug,
            kind="guide",
            platform=guide.platform,
            tier_minimum=tier_minimum(settings, slug),
            frontmatter=guide.frontmatter,
            body=None if locked else guide.body,
            compiled_section=compiled,
            recipe_slug=None,
            version=guide.version,
            updated_at=str(guide.frontmatter.get("updated_at", "")),
            locked=locked,
        )
    assert workflow is not None
    recipe = recipes_service.get_recipe(workflow.recipe_slug)
    steps = "\n".join(f"{index}. {step.name} ({step.tool or step.type})" for index, step in enumerate(recipe.steps, 1))
    return Skill(
        slug=slug,
        kind="workflow",
        platform=None,
        tier_minimum=tier_minimum(settings, workflow.id),
        frontmatter={
            "name": workflow.name,
            "studio": workflow.studio,
            "category": workflow.category,
            "hookFormula": workflow.hook_formula,
        },
        body=None if locked else f"# {workflow.name}\n\n{workflow.short_description}\n\n{steps}",
        compiled_section=None,
        recipe_slug=workflow.recipe_slug,
        version=1,
        updated_at="2026-11-21",
        locked=locked,
    )


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
    rows = await analytics_service.performance_insights(
        session=session, project_id=project_id, insight_type="top_hooks", days=ANALYTICS_DAYS, limit=1
    )
    hooks = (rows[0].insight_data or {}).get("hooks", []) if rows else []
    if not hooks:
        return "**Top hooks:** no data yet (at least 3 published posts with metrics are needed)."
    lines = [
        f'- "{hook["hook"]}" ({hook["hook_type"]}, {hook["platform"]}): {hook["engagement"]} engagements, '
        f"{hook['views']} views"
        for hook in hooks[:5]
    ]
    return "**Top hooks:**\n" + "\n".join(lines)


async def _times(session: AsyncSession, project_id: uuid.UUID) -> str:
    times = await analytics_service.best_posting_times(
        session=session, project_id=project_id, platform=None, days=ANALYTICS_DAYS
    )
    if not times.slots:
        return "**Best posting times:** no data yet (no published posts with metrics)."
    lines = [
        f"- {slot.platform} {slot.day_of_week} {slot.hour:02d}:00 UTC: "
        f"{slot.avg_engagement} avg engagement over {slot.sample_size} post(s)"
        for slot in times.slots
    ]
    return "**Best posting times:**\n" + "\n".join(lines)


async def _formats(session: AsyncSession, project_id: uuid.UUID) -> str:
    analytics = await analytics_service.fetch_analytics(
        session=session, project_id=project_id, platform=None, days=ANALYTICS_DAYS, content_id=None, limit=100
    )
    groups: dict[str, list[int]] = {}
    for item in analytics.top_posts:
        if item.latest:
            groups.setdefault(analytics_service.content_format(item.post), []).append(item.engagement)
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


def _with_inputs(
    registry: Registry, tool_name: str | None, args: Any, *, audience: str | None, hook: str | None, cta: str | None
) -> Any:
    """A step's resolved arguments with the caller's audience, hook and call to action applied.

    The hook and CTA fill the tool's own arguments (they win over what the recipe drew from an earlier step);
    the audience, which no step's tool takes, narrows a step's topic ("<topic> for <audience>").
    """
    if isinstance(args, list):
        return [_with_inputs(registry, tool_name, item, audience=audience, hook=hook, cta=cta) for item in args]
    spec = registry.get(tool_name) if tool_name else None
    if spec is None or not isinstance(args, dict):
        return args
    fields = spec.input_model.model_fields
    applied = dict(args)
    for argument, value in (("hook", hook), ("cta_text", cta)):
        if value and argument in fields:
            applied[argument] = value
    topic = applied.get("topic")
    if audience and isinstance(topic, str) and audience.lower() not in topic.lower():
        limit = int(spec.input_schema.get("properties", {}).get("topic", {}).get("maxLength", 200))
        applied["topic"] = cut_at_sentence(f"{topic} for {audience}", limit)
    return applied


def _recipe_inputs(slug: str, settings: Settings, topic: str) -> dict[str, Any]:
    """The recipe's inputs from run_skill's topic: the topic itself (refused, as its writing step would refuse
    it, when it is only a link or in a language the writer cannot write), or for a recipe that reads a page,
    the link the topic holds (its other inputs, such as the platforms, are the caller's to give execute_recipe)."""
    recipe = recipes_service.get_recipe(slug)
    properties = recipe.inputs_schema["properties"]
    if "url" in properties:
        link = URL.search(topic)
        if link is None:
            message = f"the topic holds no link, and {slug} reads a page"
            raise ValidationFailed(
                message,
                field_errors=[{"path": "topic", "message": message}],
                recover_with="pass the page's link (https://...) as topic",
            )
        return {"url": link.group(0)}
    if "topic" not in properties:
        return {}
    content_service.check_writable(
        topic,
        model=select_model(settings, None),
        field="topic",
        link_recovery="preview skill-url-repurpose with the link, or describe the topic in words",
    )
    limit = int(properties["topic"].get("maxLength", 200))
    return recipes_service.validate_inputs(recipe, {"topic": cut_at_sentence(topic.strip(), limit)})


@dataclass(frozen=True, slots=True)
class Preview:
    """run_skill's preview: the workflow, its recipe's steps with resolved arguments, and the estimate."""

    entry: WorkflowEntry
    plan: list[recipes_service.PlannedStep]
    estimated_credits: int
    run_url: str
    previewed_at: datetime


def run_preview(
    *,
    registry: Registry,
    settings: Settings,
    skill_id: str,
    topic: str,
    audience: str | None,
    hook: str | None,
    cta: str | None,
    project_id: uuid.UUID | None,
) -> Preview:
    """The workflow's recipe with its arguments resolved for the topic; nothing runs."""
    workflow = WORKFLOWS_BY_ID.get(skill_id)
    if workflow is None:
        raise NotFound(
            f"No workflow named '{skill_id}'",
            recover_with="call list_skills; workflow ids: " + ", ".join(WORKFLOWS_BY_ID),
            ids=list(WORKFLOWS_BY_ID),
        )
    recipe = recipes_service.get_recipe(workflow.recipe_slug)
    recipe_inputs = _recipe_inputs(recipe.slug, settings, topic)
    plan = [
        dataclasses.replace(
            step, args=_with_inputs(registry, step.tool, step.args, audience=audience, hook=hook, cta=cta)
        )
        for step in recipes_service.preview_plan(recipe, recipe_inputs, project_id)
    ]
    return Preview(
        entry=workflow_entry(registry, settings, workflow),
        plan=plan,
        estimated_credits=recipes_service.estimated_credits(registry, recipe, recipe_inputs),
        run_url=f"{settings.api_root}/app/skills/{skill_id}",
        previewed_at=utcnow(),
    )
