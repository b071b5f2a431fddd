"""Recipes (CATALOG.md §15): listing, details, estimates, pre-flight checks, enqueueing runs and reading them."""

from __future__ import annotations

import uuid
from dataclasses import dataclass
from datetime import datetime, timedelta
from typing import Any

from sqlalchemy import func, select
from sqlalchemy.ext.asyncio import AsyncSession

from toolhost.db.base import utcnow
from toolhost.domains.recipes.definitions import BY_SLUG, RECIPES, Recipe, Step, lookup, render, with_defaults
from toolhost.platform import jobs, scopes
from toolhost.platform.context import Principal
from toolhost.platform.jobs import Job
from toolhost.platform.models import Account
from toolhost.platform.registry import Registry
from toolhost.platform.results import BillingFailed, NotFound, PermissionDenied, ValidationFailed

SUCCESS_WINDOW = timedelta(days=30)
RUN_STATUS = {"processing": "running"}


def get_recipe(slug: str) -> Recipe:
    """A built-in recipe by slug, or not_found listing the slugs."""
    recipe = BY_SLUG.get(slug)
    if recipe is None:
        raise NotFound(
            f"No recipe named '{slug}'",
            recover_with="call list_recipes; slugs: " + ", ".join(BY_SLUG),
        )
    return recipe


def step_scope(registry: Registry, step: Step) -> str:
    """The scope a step needs: mcp:distribute for distribute and webhook steps, else its tool's scope."""
    if step.type in ("distribute", "webhook"):
        return "mcp:distribute"
    spec = registry.get(step.tool) if step.tool else None
    return spec.scope if spec is not None else "mcp:write"


def required_scopes(registry: Registry, recipe: Recipe) -> list[str]:
    """Every scope a run of the recipe needs: mcp:write to start it, plus each step's."""
    return sorted({"mcp:write", *(step_scope(registry, step) for step in recipe.steps)})


def step_credits(registry: Registry, step: Step, inputs: dict[str, Any] | None) -> int:
    """Credits one step is expected to debit (per platform for `for_each` steps)."""
    if step.credits_estimate is not None:
        base, per, unit_path = step.credits_estimate
        units = lookup({"inputs": inputs or {}}, unit_path) if unit_path else 0
        one = base + per * (units if isinstance(units, int) else 0)
    else:
        spec = registry.get(step.tool) if step.tool else None
        one = spec.credits if spec is not None and isinstance(spec.credits, int) else 0
    if step.for_each:
        items = lookup({"inputs": inputs or {}}, step.for_each)
        return one * (len(items) if isinstance(items, list) else 1)
    return one


def estimated_credits(registry: Registry, recipe: Recipe, inputs: dict[str, Any] | None = None) -> int:
    """The recipe's expected debit: with the inputs when given, else with the schema's defaults."""
    filled = with_defaults(recipe, inputs or {})
    return sum(step_credits(registry, step, filled) for step in recipe.steps)


async def success_rates(session: AsyncSession, account_id: uuid.UUID) -> dict[str, float]:
    """Completed ÷ finished runs per recipe over the last 30 days, of this account's runs."""
    rows = await session.execute(
        select(Job.input["recipe_slug"].as_string(), Job.status, func.count())
        .where(
            Job.account_id == account_id,
            Job.job_type == "recipe_run",
            Job.status.in_(("completed", "failed", "cancelled")),
            Job.created_at >= utcnow() - SUCCESS_WINDOW,
        )
        .group_by(Job.input["recipe_slug"].as_string(), Job.status)
    )
    finished: dict[str, int] = {}
    completed: dict[str, int] = {}
    for slug, status, count in rows.all():
        finished[slug] = finished.get(slug, 0) + count
        if status == "completed":
            completed[slug] = completed.get(slug, 0) + count
    return {slug: round(completed.get(slug, 0) / total, 3) for slug, total in finished.items() if total}


@dataclass(frozen=True, slots=True)
class RatedRecipe:
    """A recipe with its expected debit (default inputs) and its success rate over the last 30 days."""

    recipe: Recipe
    estimated_credits: int
    success_rate: float | None


async def list_recipes(
    *, registry: Registry, session: AsyncSession, account_id: uuid.UUID, category: str | None, featured_only: bool
) -> list[RatedRecipe]:
    """The recipes, filtered by category and featured flag."""
    rates = await success_rates(session, account_id)
    return [
        RatedRecipe(
            recipe=recipe, estimated_credits=estimated_credits(registry, recipe), success_rate=rates.get(recipe.slug)
        )
        for recipe in RECIPES
        if (category is None or recipe.category == category) and (not featured_only or recipe.is_featured)
    ]


async def get_rated_recipe(
    *, registry: Registry, session: AsyncSession, account_id: uuid.UUID, slug: str
) -> RatedRecipe:
    """A recipe by slug (not_found listing the slugs) with its estimate and this account's success rate."""
    recipe = get_recipe(slug)
    rates = await success_rates(session, account_id)
    return RatedRecipe(
        recipe=recipe, estimated_credits=estimated_credits(registry, recipe), success_rate=rates.get(recipe.slug)
    )


def validate_inputs(recipe: Recipe, inputs: dict[str, Any]) -> dict[str, Any]:
    """The inputs checked against the recipe's schema (every error with its path), defaults filled in.

    Inputs stay JSON: their shape is the recipe's inputs_schema, data, not a type of this module.
    """
    import jsonschema  # imported on first use: with attrs, referencing and rpds it holds ~3 MB

    validator = jsonschema.Draft202012Validator(
        recipe.inputs_schema, format_checker=jsonschema.Draft202012Validator.FORMAT_CHECKER
    )
    errors = sorted(validator.iter_errors(inputs), key=lambda error: list(error.absolute_path))
    if errors:
        field_errors = [
            {
                "path": "inputs"
                + "".join(f"[{part}]" if isinstance(part, int) else f".{part}" for part in error.absolute_path),
                "message": error.message[:300],
            }
            for error in errors[:20]
        ]
        raise ValidationFailed(
            "the inputs do not match the recipe's inputs_schema: "
            f"{field_errors[0]['path']}: {field_errors[0]['message']}",
            recover_with=f"call get_recipe_details with slug {recipe.slug} for its inputs_schema",
            field_errors=field_errors,
        )
    return with_defaults(recipe, inputs)


@dataclass(frozen=True, slots=True)
class PlannedStep:
    """A step with its arguments resolved (a list of them for a `for_each` step); arguments are the tool's JSON."""

    id: str
    type: str
    name: str
    tool: str | None
    args: Any


def preview_plan(recipe: Recipe, inputs: dict[str, Any], project_id: uuid.UUID | None) -> list[PlannedStep]:
    """The steps with their arguments resolved from the inputs (references to earlier steps kept as written)."""
    scope = {"inputs": inputs, "project_id": str(project_id) if project_id else None, "steps": {}}
    plan = []
    for step in recipe.steps:
        items = lookup(scope, step.for_each) if step.for_each else None
        if isinstance(items, list):
            args: Any = [render(step.args, {**scope, "item": item}, preview=True) for item in items]
        else:
            args = render(step.args, scope, preview=True)
        plan.append(PlannedStep(id=step.id, type=step.type, name=step.name, tool=step.tool, args=args))
    return plan


def check_scopes(registry: Registry, recipe: Recipe, principal: Principal) -> None:
    """Pre-flight: every step's scope must be held, else permission_denied naming the first step that lacks it."""
    for step in recipe.steps:
        needed = step_scope(registry, step)
        if not scopes.satisfies(principal.scopes, needed):
            raise PermissionDenied(
                f"step '{step.id}' ({step.type}{', ' + step.tool if step.tool else ''}) needs scope {needed}",
                recover_with="use a key that holds " + needed,
                required_scope=needed,
                available_scopes=scopes.display(principal.scopes),
                step=step.id,
            )


async def check_balance(session: AsyncSession, account_id: uuid.UUID, required: int) -> None:
    """Pre-flight: the balance must cover the estimate at the start (each step still debits on its own)."""
    if required <= 0:
        return
    account = await session.get(Account, account_id)
    balance = account.credit_balance if account is not None else 0
    if balance < required:
        raise BillingFailed(
            f"the balance ({balance}) does not cover this recipe's estimated {required} credits",
            recover_with="ask an operator to grant credits, or pick a smaller recipe",
            balance=balance,
            required_credits=required,
        )


async def start_run(
    *,
    registry: Registry,
    session: AsyncSession,
    principal: Principal,
    project_id: uuid.UUID,
    slug: str,
    inputs: dict[str, Any],
) -> tuple[Job, int]:
    """Validates, runs the pre-flight checks and enqueues the `recipe_run` job (nothing is reserved:
    each step debits when it runs, through execute())."""
    recipe = get_recipe(slug)
    filled = validate_inputs(recipe, inputs)
    check_scopes(registry, recipe, principal)
    estimate = estimated_credits(registry, recipe, filled)
    await check_balance(session, principal.account_id, estimate)
    job = await jobs.enqueue(
        session=session,
        account_id=principal.account_id,
        project_id=project_id,
        job_type="recipe_run",
        tool_name="execute_recipe",
        reserved_credits=0,
        job_input={
            "recipe_slug": recipe.slug,
            "inputs": filled,
            "estimated_credits": estimate,
            # What the worker needs to rebuild the caller's principal, so every step runs as the caller.
            "principal": {
                "account_id": str(principal.account_id),
                "credential_id": str(principal.credential_id) if principal.credential_id else None,
                "credential_name": principal.credential_name,
                "scopes": sorted(principal.scopes),
                "project_id": str(principal.project_id) if principal.project_id else None,
                "run_id": principal.run_id,
            },
        },
    )
    return job, estimate


async def project_of_run(session: AsyncSession, run_id: str, project_ids: Any) -> uuid.UUID | None:
    """The project of a recipe run among `project_ids` (the object lookup of `run_id`)."""
    parsed = jobs.parse_job_id(run_id)
    if parsed is None or not project_ids:
        return None
    return await session.scalar(
        select(Job.project_id).where(Job.id == parsed, Job.job_type == "recipe_run", Job.project_id.in_(project_ids))
    )


@dataclass(frozen=True, slots=True)
class RunStatus:
    """A recipe run: its job's state, progress by steps, and what its steps stored.

    `outputs` (each finished step's payload) and `error` are the run's stored JSON, as the runner wrote them.
    """

    id: uuid.UUID
    recipe_slug: str | None
    status: str
    progress: int
    current_step: str | None
    credits_used: int
    created_at: datetime
    completed_at: datetime | None
    outputs: dict[str, Any]
    error: dict[str, Any] | None


async def run_status(*, session: AsyncSession, run_id: str, project_id: uuid.UUID) -> RunStatus:
    """A recipe run of the project by id, or not_found."""
    job = await jobs.get(session, job_id=run_id, project_id=project_id)
    if job.job_type != "recipe_run":
        raise NotFound(f"No recipe run found with ID {run_id}")
    output = job.output or {}
    recipe = BY_SLUG.get(str(job.input.get("recipe_slug")))
    total = len(recipe.steps) if recipe else 1
    done = len(output.get("outputs") or {})
    return RunStatus(
        id=job.id,
        recipe_slug=job.input.get("recipe_slug"),
        status=RUN_STATUS.get(job.status, job.status),
        progress=100 if job.status == "completed" else round(done * 100 / total),
        current_step=output.get("current_step"),
        credits_used=int(output.get("credits_used") or 0),
        created_at=job.created_at,
        completed_at=job.completed_at,
        outputs=output.get("outputs") or {},
        error=output.get("error")
        or ({"step": None, "error_type": job.failure_reason, "message": job.error} if job.status == "failed" else None),
    )
