"""The skills tools (CATALOG.md §16): list_skills, get_skill, run_skill."""

from __future__ import annotations

from typing import Any

from toolhost.domains.skills import service
from toolhost.domains.skills.schemas import (
    GetSkillIn,
    GetSkillOut,
    ListSkillsIn,
    ListSkillsOut,
    RunSkillIn,
    RunSkillOut,
)
from toolhost.platform.context import ToolContext
from toolhost.platform.registry import tool


def _workflow(entry: service.WorkflowEntry) -> dict[str, Any]:
    """A workflow as list_skills and run_skill show it."""
    workflow = entry.workflow
    return {
        "id": workflow.id,
        "name": workflow.name,
        "studio": workflow.studio,
        "category": workflow.category,
        "shortDescription": workflow.short_description,
        "hookFormula": workflow.hook_formula,
        "estimatedSeconds": workflow.estimated_seconds,
        "featured": workflow.featured,
        "estimatedCredits": entry.estimated_credits,
        "stepCount": entry.step_count,
        "recipe_slug": workflow.recipe_slug,
        "tier_minimum": entry.tier_minimum,
        "use_with": "run_skill",
    }


def _guide(entry: service.GuideEntry) -> dict[str, Any]:
    guide = entry.guide
    return {
        "slug": guide.slug,
        "kind": "guide",
        "platform": guide.platform,
        "model_id": guide.frontmatter.get("model_id"),
        "tier_minimum": entry.tier_minimum,
        "frontmatter": guide.frontmatter,
        "updated_at": guide.frontmatter.get("updated_at"),
        "body_chars": len(guide.body),
        "locked": entry.locked,
        "use_with": "get_skill",
    }


@tool(module="skills", scope="mcp:read", read_only=True, idempotent=True, project="none")
async def list_skills(ctx: ToolContext, args: ListSkillsIn) -> ListSkillsOut:
    """Lists the built-in skills: guides (playbooks for hooks, carousels, short videos, cadence, comment
    replies; read one with get_skill) and workflows (multi-step recipes; preview one with run_skill).

    `studio` and `featured_only` filter the workflows. A `locked` guide needs a higher tier.
    """
    listing = service.list_skills(
        registry=ctx.registry,
        settings=ctx.settings,
        tier=ctx.principal.tier,
        studio=args.studio,
        featured_only=args.featured_only,
    )
    return ListSkillsOut(
        count=len(listing.guides) + len(listing.workflows),
        guides=[_guide(entry) for entry in listing.guides],
        workflows=[_workflow(entry) for entry in listing.workflows],
    )


@tool(module="skills", scope="mcp:read", read_only=True, idempotent=True, project="optional")
async def get_skill(ctx: ToolContext, args: GetSkillIn) -> GetSkillOut:
    """Reads a skill: the guide's playbook plus a section compiled now from the project's own analytics
    (top hooks, best posting times, best formats, pending approvals; it says so when there is no data yet).

    Use it before writing hooks, carousels, scripts or replies, or planning a cadence. For a workflow it
    returns the steps and its `recipe_slug`: preview it with run_skill, run it with execute_recipe.
    """
    skill = await service.get_skill(
        session=ctx.session,
        settings=ctx.settings,
        tier=ctx.principal.tier,
        slug=args.slug,
        project_id=ctx.project.id if ctx.project is not None else None,
    )
    return GetSkillOut(
        slug=skill.slug,
        kind=skill.kind,
        platform=skill.platform,
        tier_minimum=skill.tier_minimum,
        frontmatter=skill.frontmatter,
        body=skill.body,
        compiled_section=skill.compiled_section,
        recipe_slug=skill.recipe_slug,
        version=skill.version,
        updated_at=skill.updated_at,
        locked=skill.locked,
    )


@tool(module="skills", scope="mcp:write", read_only=True, idempotent=True, project="optional")
async def run_skill(ctx: ToolContext, args: RunSkillIn) -> RunSkillOut:
    """Previews a workflow skill for a topic: the recipe's steps with their resolved tool arguments and the
    estimated credits. It executes nothing, debits nothing and creates no job.

    To run it, call execute_recipe with the returned `skill.recipe_slug` and its inputs.
    """
    preview = service.run_preview(
        registry=ctx.registry,
        settings=ctx.settings,
        skill_id=args.skill_id,
        topic=args.topic,
        audience=args.audience,
        hook=args.hook,
        cta=args.cta,
        project_id=ctx.project.id if ctx.project is not None else None,
    )
    recipe_slug = preview.entry.workflow.recipe_slug
    return RunSkillOut(
        status="preview",
        skill=_workflow(preview.entry),
        inputs={"topic": args.topic, "audience": args.audience, "hook": args.hook, "cta": args.cta},
        plan=[
            {"id": step.id, "type": step.type, "name": step.name, "tool": step.tool, "args": step.args}
            for step in preview.plan
        ],
        estimatedCredits=preview.estimated_credits,
        runUrl=preview.run_url,
        previewedAt=preview.previewed_at.isoformat(),
        note="Preview only: nothing ran, nothing was charged and no job was created. To run it, call "
        f"execute_recipe with slug {recipe_slug} and its inputs (get_recipe_details lists them).",
    )
