"""The skills tools (CATALOG.md §16): list_skills, get_skill, run_skill."""

from __future__ import annotations

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


@tool(module="skills", scope="mcp:read", read_only=True, idempotent=True, project="none")
async def list_skills(ctx: ToolContext, args: ListSkillsIn) -> ListSkillsOut:
    """Lists the built-in skills: guides (playbooks for hooks, carousels, short videos, cadence, comment
    replies; read one with get_skill) and workflows (multi-step recipes; preview one with run_skill).

    `studio` and `featured_only` filter the workflows. A `locked` guide needs a higher tier.
    """
    return ListSkillsOut(
        **service.list_skills(
            registry=ctx.registry,
            settings=ctx.settings,
            tier=ctx.principal.tier,
            studio=args.studio,
            featured_only=args.featured_only,
        )
    )


@tool(module="skills", scope="mcp:read", read_only=True, idempotent=True, project="optional")
async def get_skill(ctx: ToolContext, args: GetSkillIn) -> GetSkillOut:
    """Reads a skill: the guide's playbook plus a section compiled now from the project's own analytics
    (top hooks, best posting times, best formats, pending approvals; it says so when there is no data yet).

    Use it before writing hooks, carousels, scripts or replies, or planning a cadence. For a workflow it
    returns the steps and its `recipe_slug`: preview it with run_skill, run it with execute_recipe.
    """
    return GetSkillOut(
        **await service.get_skill(
            registry=ctx.registry,
            session=ctx.session,
            settings=ctx.settings,
            tier=ctx.principal.tier,
            slug=args.slug,
            project_id=ctx.project.id if ctx.project is not None else None,
        )
    )


@tool(module="skills", scope="mcp:write", read_only=True, idempotent=True, project="optional")
async def run_skill(ctx: ToolContext, args: RunSkillIn) -> RunSkillOut:
    """Previews a workflow skill for a topic: the recipe's steps with their resolved tool arguments and the
    estimated credits. It executes nothing, debits nothing and creates no job.

    To run it, call execute_recipe with the returned `skill.recipe_slug` and its inputs.
    """
    inputs = {"topic": args.topic, "audience": args.audience, "hook": args.hook, "cta": args.cta}
    return RunSkillOut(
        **service.run_preview(
            registry=ctx.registry,
            settings=ctx.settings,
            skill_id=args.skill_id,
            inputs=inputs,
            project_id=ctx.project.id if ctx.project is not None else None,
        )
    )
