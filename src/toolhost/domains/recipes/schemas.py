"""Inputs and outputs of the recipes tools (CATALOG.md §15)."""

from __future__ import annotations

from typing import Annotated, Any, Literal

from pydantic import StringConstraints

from toolhost.platform.fields import Record, TextFormat, UUIDStr
from toolhost.platform.registry import ToolInput, ToolOutput

Slug = Annotated[str, StringConstraints(min_length=1, max_length=100)]


class ListRecipesIn(ToolInput):
    """Filters over the built-in recipes."""

    category: (
        Literal["content_creation", "distribution", "repurposing", "analytics", "engagement", "general"] | None
    ) = None
    featured_only: bool = False
    response_format: TextFormat = "text"


class ListRecipesOut(ToolOutput):
    """The recipes (the JSON envelope's data is the array itself)."""

    recipes: list[dict[str, Any]]

    def envelope_data(self, payload: dict[str, Any]) -> Any:
        return payload["recipes"]

    def summary(self) -> str:
        if not self.recipes:
            return "No recipes match."
        return "\n".join(
            f"{item['slug']} ({item['category']}, ~{item['estimated_credits']} cr): {item['name']}"
            for item in self.recipes
        )


class GetRecipeDetailsIn(ToolInput):
    """A recipe by slug."""

    slug: Slug
    response_format: TextFormat = "text"


class GetRecipeDetailsOut(ToolOutput):
    """The recipe with its full steps and the scopes a run needs."""

    id: str
    slug: str
    name: str
    description: str
    icon: str
    category: str
    estimated_credits: int
    estimated_duration_seconds: int
    is_featured: bool
    inputs_schema: dict[str, Any]
    steps: list[dict[str, Any]]
    success_rate: float | None
    success_rate_window: str
    required_scopes: list[str]


class ExecuteRecipeIn(ToolInput):
    """A recipe and its inputs."""

    slug: Slug
    inputs: Record
    project_id: UUIDStr | None = None
    response_format: TextFormat = "text"


class ExecuteRecipeOut(ToolOutput):
    """The queued run."""

    run_id: str
    status: Literal["pending"]
    message: str
    estimated_credits: int


class GetRecipeRunStatusIn(ToolInput):
    """A recipe run by id."""

    run_id: Annotated[str, StringConstraints(min_length=1, max_length=100)]
    response_format: TextFormat = "text"


class GetRecipeRunStatusOut(ToolOutput):
    """A run's state, outputs per step, and its error."""

    id: str
    recipe_id: str | None
    status: str
    progress: int
    current_step: str | None
    credits_used: int
    created_at: str
    completed_at: str | None
    outputs: dict[str, Any]
    error: dict[str, Any] | None

    def summary(self) -> str:
        line = f"Run {self.id} ({self.recipe_id}): {self.status}, {self.progress}%, {self.credits_used} credits used."
        if self.error:
            line += f"\nFailed at step {self.error.get('step')}: {self.error.get('error_type')}"
        return line
