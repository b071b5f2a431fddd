"""The recipes tools (CATALOG.md §15): list_recipes, get_recipe_details, execute_recipe, get_recipe_run_status."""

from __future__ import annotations

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


@tool(module="recipes", scope="mcp:read", read_only=True, idempotent=True, project="none")
async def list_recipes(ctx: ToolContext, args: ListRecipesIn) -> ListRecipesOut:
    """Lists the built-in recipes (multi-step workflows): inputs schema, steps, estimated credits, success rate.

    Read one with get_recipe_details, then run it with execute_recipe.
    """
    return ListRecipesOut(
        recipes=await service.list_recipes(
            registry=ctx.registry,
            session=ctx.session,
            account_id=ctx.principal.account_id,
            category=args.category,
            featured_only=args.featured_only,
        )
    )


@tool(module="recipes", scope="mcp:read", read_only=True, idempotent=True, project="none")
async def get_recipe_details(ctx: ToolContext, args: GetRecipeDetailsIn) -> GetRecipeDetailsOut:
    """Reads a recipe: its inputs_schema, every step with the tool it calls, and the scopes a run needs."""
    recipe = service.get_recipe(args.slug)
    rates = await service.success_rates(ctx.session, ctx.principal.account_id)
    return GetRecipeDetailsOut(**service.details(ctx.registry, recipe, rates))


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
    return GetRecipeRunStatusOut(
        **await service.run_status(session=ctx.session, run_id=args.run_id, project_id=ctx.project_id)
    )
