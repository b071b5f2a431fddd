"""Inputs and outputs of the skills tools (CATALOG.md §16)."""

from __future__ import annotations

from typing import Annotated, Any, Literal

from pydantic import Field, StringConstraints

from toolhost.platform.fields import NotBlank, TextFormat, UUIDStr
from toolhost.platform.registry import ToolInput, ToolOutput

Studio = Literal["video", "avatar", "carousel", "voice", "caption", "edit"]
Slug = Annotated[str, StringConstraints(min_length=1, max_length=100)]
Short = Annotated[str, StringConstraints(max_length=500)]


class ListSkillsIn(ToolInput):
    """Filters over the workflows (guides are always listed)."""

    studio: Studio | None = Field(default=None, description="Only workflows of this studio.")
    featured_only: bool = Field(default=False, description="Only featured workflows.")
    response_format: TextFormat = "text"


class ListSkillsOut(ToolOutput):
    """Guides (read with get_skill) and workflows (previewed with run_skill)."""

    count: int
    guides: list[dict[str, Any]]
    workflows: list[dict[str, Any]]

    def summary(self) -> str:
        lines = [f"{self.count} skill(s)."]
        lines += [f"guide {item['slug']}{' (locked)' if item['locked'] else ''}: get_skill" for item in self.guides]
        lines += [f"workflow {item['id']} ({item['studio']}): run_skill" for item in self.workflows]
        return "\n".join(lines)


class GetSkillIn(ToolInput):
    """A guide or workflow by slug."""

    slug: Slug = Field(description="A guide slug (e.g. hook-writing) or a workflow id.")
    project_id: UUIDStr | None = Field(default=None, description="The project whose analytics compile the guide.")
    response_format: TextFormat = "text"


class GetSkillOut(ToolOutput):
    """The playbook, and what the project's own analytics add to it."""

    slug: str
    kind: str
    platform: str | None
    tier_minimum: str
    frontmatter: dict[str, Any]
    body: str | None
    compiled_section: str | None
    recipe_slug: str | None
    version: int
    updated_at: str
    locked: bool

    def summary(self) -> str:
        if self.locked:
            return f"{self.slug} is locked: it needs the {self.tier_minimum} tier."
        parts = [self.body or ""]
        if self.compiled_section:
            parts.append(self.compiled_section)
        return "\n\n".join(part for part in parts if part)


class RunSkillIn(ToolInput):
    """A workflow and the brief to preview it with."""

    skill_id: Slug = Field(description="A workflow id from list_skills, e.g. skill-weekly-content-engine.")
    topic: Annotated[str, StringConstraints(min_length=1, max_length=500), NotBlank] = Field(
        description="What to make, in words; for skill-url-repurpose, the page's link."
    )
    audience: Short | None = None
    hook: Short | None = None
    cta: Short | None = None
    project_id: UUIDStr | None = None
    response_format: TextFormat = "text"


class RunSkillOut(ToolOutput):
    """A preview: what would run, with which arguments, for how many credits. Nothing ran."""

    status: Literal["preview"]
    skill: dict[str, Any]
    inputs: dict[str, Any]
    plan: list[dict[str, Any]]
    estimatedCredits: int
    runUrl: str
    previewedAt: str
    note: str

    def summary(self) -> str:
        steps = "\n".join(
            f"{index}. {step['name']} ({step['tool'] or step['type']})" for index, step in enumerate(self.plan, 1)
        )
        return f"Preview of {self.skill['id']} (~{self.estimatedCredits} credits):\n{steps}\n{self.note}"
