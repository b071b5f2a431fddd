"""The five built-in recipes as data, and the small template language their step arguments use.

Templates in step arguments:
- a string that is exactly `{{path}}` becomes the value at `path` (any JSON type); inside longer text it is
  substituted as text. Paths start at `inputs`, `steps.<step id>` (that step's payload), `item` (the current
  element of a `for_each` step or a `$map`) or `project_id`.
- `{"$map": path, "to": template}`: a list, the template rendered once per element (bound to `item`).
- `{"$first": [template, ...], "max_chars": n}`: the first non-empty value, text cut to n characters.
- `{"$pick": {value: result, ...}, "key": template}`: a lookup table keyed by the rendered key.
A rendered `None` drops its key, so optional inputs the caller left out are simply not passed on.
"""

from __future__ import annotations

import copy
import re
from dataclasses import dataclass, field
from typing import Any

from toolhost.platform.fields import SOCIAL_PLATFORMS

STEP_TYPES = ("generate", "transform", "quality", "analyze", "distribute", "webhook")
CATEGORIES = ("content_creation", "distribution", "repurposing", "analytics", "engagement", "general")
PROJECT = "{{project_id}}"
_WHOLE = re.compile(r"^\{\{\s*([\w.\-]+)\s*\}\}$")
_INLINE = re.compile(r"\{\{\s*([\w.\-]+)\s*\}\}")


@dataclass(frozen=True, slots=True)
class Step:
    """One step: a catalogue tool called with templated arguments (or, for `webhook`, a signed POST)."""

    id: str
    type: str
    name: str
    tool: str | None
    args: dict[str, Any]
    for_each: str | None = None
    # Credits of one call when the tool's cost depends on arguments: (base, per unit, path of the unit count).
    credits_estimate: tuple[int, int, str | None] | None = None


@dataclass(frozen=True, slots=True)
class Recipe:
    """A built-in workflow template."""

    slug: str
    name: str
    description: str
    icon: str
    category: str
    is_featured: bool
    estimated_duration_seconds: int
    inputs_schema: dict[str, Any]
    steps: tuple[Step, ...] = field(default_factory=tuple)


RECIPES: tuple[Recipe, ...] = (
    Recipe(
        slug="weekly-instagram-calendar",
        name="Weekly Instagram calendar",
        description="Plans a week of Instagram posts on a topic, scores every caption with the quality gate, "
        "and submits the plan for approval so a person reviews it before anything is scheduled.",
        icon="calendar",
        category="content_creation",
        is_featured=True,
        estimated_duration_seconds=20,
        inputs_schema={
            "type": "object",
            "properties": {
                "topic": {"type": "string", "minLength": 1, "maxLength": 500},
                "days": {"type": "integer", "minimum": 1, "maximum": 7, "default": 7},
                "posts_per_day": {"type": "integer", "minimum": 1, "maximum": 5, "default": 1},
            },
            "required": ["topic"],
            "additionalProperties": False,
        },
        steps=(
            Step(
                id="plan",
                type="generate",
                name="Plan the week",
                tool="plan_content_week",
                args={
                    "topic": "{{inputs.topic}}",
                    "platforms": ["instagram"],
                    "days": "{{inputs.days}}",
                    "posts_per_day": "{{inputs.posts_per_day}}",
                    "project_id": PROJECT,
                },
                credits_estimate=(10, 0, None),
            ),
            Step(
                id="quality",
                type="quality",
                name="Score every caption",
                tool="quality_check_plan",
                args={"plan": {"posts": "{{steps.plan.posts}}"}, "project_id": PROJECT},
            ),
            Step(
                id="submit",
                type="transform",
                name="Submit for approval",
                tool="submit_content_plan_for_approval",
                args={"plan_id": "{{steps.plan.plan_id}}"},
            ),
        ),
    ),
    Recipe(
        slug="url-to-social-posts",
        name="URL to social posts",
        description="Reads an article, product page or YouTube video, rewrites it for each platform you name, "
        "and saves the posts as a draft content plan.",
        icon="link",
        category="repurposing",
        is_featured=True,
        estimated_duration_seconds=30,
        inputs_schema={
            "type": "object",
            "properties": {
                "url": {"type": "string", "format": "uri", "pattern": "^https?://", "maxLength": 2048},
                "platforms": {
                    "type": "array",
                    "items": {"type": "string", "enum": list(SOCIAL_PLATFORMS)},
                    "minItems": 1,
                    "maxItems": 9,
                    "uniqueItems": True,
                },
            },
            "required": ["url", "platforms"],
            "additionalProperties": False,
        },
        steps=(
            Step(
                id="extract",
                type="analyze",
                name="Extract the page",
                tool="extract_url_content",
                args={"url": "{{inputs.url}}"},
            ),
            Step(
                id="adapt",
                type="transform",
                name="Adapt for each platform",
                tool="adapt_content",
                for_each="inputs.platforms",
                args={
                    "content": {
                        "$first": [
                            "{{steps.extract.transcript}}",
                            "{{steps.extract.description}}",
                            "{{steps.extract.title}}",
                        ],
                        "max_chars": 5000,
                    },
                    "target_platform": "{{item}}",
                    "project_id": PROJECT,
                },
            ),
            Step(
                id="save",
                type="transform",
                name="Save as a draft plan",
                tool="save_content_plan",
                args={
                    "plan": {
                        "topic": {"$first": ["{{steps.extract.title}}", "{{inputs.url}}"], "max_chars": 200},
                        "source_url": "{{inputs.url}}",
                        "posts": {
                            "$map": "steps.adapt",
                            "to": {
                                "platform": "{{item.target_platform}}",
                                "caption": "{{item.text}}",
                                "content_id": "{{item.content_id}}",
                            },
                        },
                    },
                    "project_id": PROJECT,
                },
            ),
        ),
    ),
    Recipe(
        slug="topic-to-carousel",
        name="Topic to carousel",
        description="Drafts a carousel on a topic, checks every slide against the visual gate (overflow and "
        "spelling), then renders the slides as branded images.",
        icon="layers",
        category="content_creation",
        is_featured=True,
        estimated_duration_seconds=90,
        inputs_schema={
            "type": "object",
            "properties": {
                "topic": {"type": "string", "minLength": 1, "maxLength": 200},
                "platform": {
                    "type": "string",
                    "enum": ["linkedin", "instagram", "tiktok", "x"],
                    "default": "instagram",
                },
                "slide_count": {"type": "integer", "minimum": 3, "maximum": 10, "default": 7},
            },
            "required": ["topic"],
            "additionalProperties": False,
        },
        steps=(
            Step(
                id="draft",
                type="generate",
                name="Draft the slides",
                tool="generate_carousel",
                args={
                    "topic": "{{inputs.topic}}",
                    "platform": "{{inputs.platform}}",
                    "slide_count": "{{inputs.slide_count}}",
                    "project_id": PROJECT,
                },
            ),
            Step(
                id="check",
                type="quality",
                name="Check the slides fit",
                tool="visual_quality_check",
                args={"slides": "{{steps.draft.slides}}", "project_id": PROJECT},
            ),
            Step(
                id="render",
                type="generate",
                name="Render the carousel",
                tool="create_carousel",
                args={
                    "topic": "{{inputs.topic}}",
                    "platform": "{{inputs.platform}}",
                    "slide_count": "{{inputs.slide_count}}",
                    "hook": {"$first": ["{{steps.draft.slides.0.headline}}"], "max_chars": 300},
                    "project_id": PROJECT,
                },
                credits_estimate=(5, 4, "inputs.slide_count"),
            ),
        ),
    ),
    Recipe(
        slug="publish-approved-plan",
        name="Publish an approved plan",
        description="Schedules the approved posts of a content plan on the connected accounts, in the best "
        "free slots; unapproved posts and posts below the quality threshold are skipped.",
        icon="send",
        category="distribution",
        is_featured=False,
        estimated_duration_seconds=15,
        inputs_schema={
            "type": "object",
            "properties": {
                "plan_id": {
                    "type": "string",
                    "pattern": "^[0-9a-fA-F]{8}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{12}$",
                },
            },
            "required": ["plan_id"],
            "additionalProperties": False,
        },
        steps=(
            Step(
                id="schedule",
                type="distribute",
                name="Schedule the approved posts",
                tool="schedule_content_plan",
                args={"plan_id": "{{inputs.plan_id}}"},
            ),
        ),
    ),
    Recipe(
        slug="weekly-digest-webhook",
        name="Weekly digest to a webhook",
        description="Builds the performance digest and the anomaly report of the project and POSTs both, "
        "signed, to your https endpoint (X-Toolhost-Signature, as the webhook connector signs).",
        icon="activity",
        category="analytics",
        is_featured=False,
        estimated_duration_seconds=10,
        inputs_schema={
            "type": "object",
            "properties": {
                "webhook_url": {"type": "string", "format": "uri", "pattern": "^https://", "maxLength": 2048},
                "period": {"type": "string", "enum": ["7d", "14d", "30d"], "default": "7d"},
                "signing_secret": {
                    "type": "string",
                    "minLength": 16,
                    "maxLength": 200,
                    "description": "Secret the receiver verifies X-Toolhost-Signature with (ext).",
                },
            },
            "required": ["webhook_url"],
            "additionalProperties": False,
        },
        steps=(
            Step(
                id="digest",
                type="analyze",
                name="Build the digest",
                tool="generate_performance_digest",
                args={"period": "{{inputs.period}}", "project_id": PROJECT},
            ),
            Step(
                id="anomalies",
                type="analyze",
                name="Detect anomalies",
                tool="detect_anomalies",
                args={
                    "days": {"$pick": {"7d": 7, "14d": 14, "30d": 30}, "key": "{{inputs.period}}"},
                    "project_id": PROJECT,
                },
            ),
            Step(
                id="deliver",
                type="webhook",
                name="POST to the webhook",
                tool=None,
                args={
                    "url": "{{inputs.webhook_url}}",
                    "body": {
                        "recipe": "weekly-digest-webhook",
                        "period": "{{inputs.period}}",
                        "digest": "{{steps.digest}}",
                        "anomalies": "{{steps.anomalies}}",
                    },
                },
            ),
        ),
    ),
)

BY_SLUG = {recipe.slug: recipe for recipe in RECIPES}


def with_defaults(recipe: Recipe, inputs: dict[str, Any]) -> dict[str, Any]:
    """The inputs with the schema's defaults filled in for the names the caller left out (inputs are the
    recipe's JSON: their shape is its inputs_schema)."""
    filled = dict(inputs)
    for name, schema in recipe.inputs_schema.get("properties", {}).items():
        if name not in filled and "default" in schema:
            filled[name] = copy.deepcopy(schema["default"])
    return filled


def lookup(scope: dict[str, Any], path: str) -> Any:
    """The value at a dotted path (list elements by index); None when any part is missing."""
    value: Any = scope
    for part in path.split("."):
        if isinstance(value, dict):
            value = value.get(part)
        elif isinstance(value, list) and part.isdigit() and int(part) < len(value):
            value = value[int(part)]
        else:
            return None
    return value


def render(template: Any, scope: dict[str, Any], *, preview: bool = False) -> Any:
    """A template rendered against `scope` ({inputs, steps, project_id, item?}); see the module docstring.

    `preview` keeps references to earlier steps' outputs as written (nothing has run yet).
    """
    if isinstance(template, str):
        whole = _WHOLE.match(template)
        if whole:
            if preview and whole.group(1).startswith("steps."):
                return template
            return copy.deepcopy(lookup(scope, whole.group(1)))

        def substitute(match: re.Match[str]) -> str:
            if preview and match.group(1).startswith("steps."):
                return match.group(0)
            return _as_text(lookup(scope, match.group(1)))

        return _INLINE.sub(substitute, template)
    if isinstance(template, list):
        return [render(item, scope, preview=preview) for item in template]
    if not isinstance(template, dict):
        return template
    if "$map" in template:
        items = lookup(scope, template["$map"])
        if preview and template["$map"].startswith("steps."):
            return template
        return [render(template["to"], {**scope, "item": item}) for item in items or []]
    if "$first" in template:
        for option in template["$first"]:
            value = render(option, scope, preview=preview)
            if value not in (None, "", [], {}):
                limit = template.get("max_chars")
                return value[:limit] if isinstance(value, str) and limit else value
        return None
    if "$pick" in template:
        return template["$pick"].get(render(template["key"], scope, preview=preview))
    rendered = {key: render(value, scope, preview=preview) for key, value in template.items()}
    return {key: value for key, value in rendered.items() if value is not None}


def _as_text(value: Any) -> str:
    return "" if value is None else str(value)
