"""The recipes tools (CATALOG.md §15): list_recipes, get_recipe_details, execute_recipe, get_recipe_run_status."""

from __future__ import annotations

from typing import Any

from toolhost.domains.recipes import service
from toolhost.domains.recipes.schemas import (
    ExecuteRecipeIn,
    ExecuteRecipeOut,
    GetRecipeDetailsIn,
    GetRecipeDetailsOut,
    GetRecipeRunStatusIn,
    GetRecipeRunStatusOut,
    ListRecipesIn,
    ListRecipesOut,
)
from toolhost.platform.context import ToolContext
from toolhost.platform.registry import object_lookup, tool

RUN_LOOKUP = object_lookup("run_id", service.project_of_run)


def _summary(rated: service.RatedRecipe) -> dict[str, Any]:
    """A recipe's list entry."""
    recipe = rated.recipe
    return {
        "id": recipe.slug,
        "slug": recipe.slug,
        "name": recipe.name,
        "description": recipe.description,
        "icon": recipe.icon,
        "category": recipe.category,
        "estimated_credits": rated.estimated_credits,
        "estimated_duration_seconds": recipe.estimated_duration_seconds,
        "is_featured": recipe.is_featured,
        "inputs_schema": recipe.inputs_schema,
        "steps": [{"id": step.id, "type": step.type, "name": step.name} for step in recipe.steps],
        "success_rate": rated.success_rate,
        "success_rate_window": "30d",
    }


@tool(module="recipes", scope="mcp:read", read_only=True, idempotent=True, project="none")
async def list_recipes(ctx: ToolContext, args: ListRecipesIn) -> ListRecipesOut:
    """Lists the built-in recipes (multi-step workflows): inputs schema, steps, estimated credits, success rate.

    Read one with get_recipe_details, then run it with execute_recipe.
    """
    recipes = await service.list_recipes(
        registry=ctx.registry,
        session=ctx.session,
        account_id=ctx.principal.account_id,
        category=args.category,
        featured_only=args.featured_only,
    )
    return ListRecipesOut(recipes=[_summary(rated) for rated in recipes])


@tool(module="recipes", scope="mcp:read", read_only=True, idempotent=True, project="none")
async def get_recipe_details(ctx: ToolContext, args: GetRecipeDetailsIn) -> GetRecipeDetailsOut:
    """Reads a recipe: its inputs_schema, every step with the tool it calls, and the scopes a run needs."""
    rated = await service.get_rated_recipe(
        registry=ctx.registry, session=ctx.session, account_id=ctx.principal.account_id, slug=args.slug
    )
    steps = [
        {
            "id": step.id,
            "type": step.type,
            "name": step.name,
            "tool": step.tool,
            "args": step.args,
            "for_each": step.for_each,
        }
        for step in rated.recipe.steps
    ]
    return GetRecipeDetailsOut.model_validate(
        {**_summary(rated), "steps": steps, "required_scopes": service.required_scopes(ctx.registry, rated.recipe)}
    )


@tool(module="recipes", scope="mcp:write", destructive=True, open_world=True, project="strict", category="generation")
async def execute_recipe(ctx: ToolContext, args: ExecuteRecipeIn) -> ExecuteRecipeOut:
    """Starts a recipe run: inputs are checked against its inputs_schema, the key must hold every step's scope
    (mcp:distribute for distribute and webhook steps) and the balance must cover the estimate.

    Each step runs through the normal tool path as you, debiting its own credits. Returns a run_id at once:
    poll get_recipe_run_status (or check_status); cancel_async_job stops it between steps.
    """
    job, estimate = await service.start_run(
        registry=ctx.registry,
        session=ctx.session,
        principal=ctx.principal,
        project_id=ctx.project_id,
        slug=args.slug,
        inputs=args.inputs,
    )
    return ExecuteRecipeOut(
        run_id=str(job.id),
        status="pending",
        message=f"Recipe {args.slug} queued; poll get_recipe_run_status with run_id {job.id}.",
        estimated_credits=estimate,
    )


@tool(
    module="recipes",
    scope="mcp:read",
    read_only=True,
    idempotent=True,
    project="object",
    object_id="run_id",
    polling=True,
)
async def get_recipe_run_status(ctx: ToolContext, args: GetRecipeRunStatusIn) -> GetRecipeRunStatusOut:
    """Reads a recipe run: status, progress by steps, each finished step's payload, credits used, and the
    failed step with its error_type."""
    run = await service.run_status(session=ctx.session, run_id=args.run_id, project_id=ctx.project_id)
    return GetRecipeRunStatusOut(
        id=str(run.id),
        recipe_id=run.recipe_slug,
        status=run.status,
        progress=run.progress,
        current_step=run.current_step,
        credits_used=run.credits_used,
        created_at=run.created_at.isoformat(),
        completed_at=run.completed_at.isoformat() if run.completed_at else None,
        outputs=run.outputs,
        error=run.error,
    )
