"""Plans: storage, the plan state machine (the one place plan statuses change), and writing them:
plan_content_week's composer rotation, post updates, deletion."""

from __future__ import annotations

import functools
import uuid
from collections.abc import Awaitable, Callable, Sequence
from dataclasses import dataclass
from datetime import UTC, date, datetime, timedelta
from typing import Any

from sqlalchemy import select
from sqlalchemy.ext.asyncio import AsyncSession

from toolhost.config import Settings
from toolhost.db.session import end_unit_of_work
from toolhost.domains.content import service as content_service
from toolhost.domains.planning.models import ContentPlan
from toolhost.platform.dates import iso
from toolhost.platform.results import Conflict, NotFound, UpstreamFailed, ValidationFailed
from toolhost.providers import platforms as social_platforms
from toolhost.providers.text import provider_for, select_model, without_blocked_terms
from toolhost.providers.text.base import HOOK_FAMILIES, BrandContext, PlanPostRequest
from toolhost.providers.text.compose import clip, sentences

STATUSES = ("draft", "in_review", "approved", "scheduled", "completed")
# CATALOG.md §1.6: every transition but save_content_plan's bookkeeping follows this table.
TRANSITIONS: dict[str, frozenset[str]] = {
    "draft": frozenset({"in_review", "approved"}),
    "in_review": frozenset({"approved", "draft", "in_review"}),
    "approved": frozenset({"scheduled", "approved", "in_review"}),
    "scheduled": frozenset({"completed"}),
    "completed": frozenset(),
}


def transition(plan: ContentPlan, target: str) -> None:
    """Moves a plan along the state machine; an illegal move is `conflict`."""
    if target not in TRANSITIONS[plan.status]:
        raise Conflict(
            f"plan {plan.id} is {plan.status}; it cannot move to {target}",
            current_status=plan.status,
        )
    plan.status = target


def _parse_id(value: str) -> uuid.UUID | None:
    try:
        return uuid.UUID(value)
    except ValueError:
        return None


async def project_of_plan(session: AsyncSession, plan_id: str, project_ids: Sequence[uuid.UUID]) -> uuid.UUID | None:
    """The project of a plan, searched only among `project_ids`."""
    parsed = _parse_id(plan_id)
    if parsed is None or not project_ids:
        return None
    return await session.scalar(
        select(ContentPlan.project_id).where(ContentPlan.id == parsed, ContentPlan.project_id.in_(project_ids))
    )


async def get(session: AsyncSession, *, plan_id: str, project_id: uuid.UUID) -> ContentPlan:
    """A plan of the project, or not_found."""
    parsed = _parse_id(plan_id)
    plan = await session.get(ContentPlan, parsed) if parsed else None
    if plan is None or plan.project_id != project_id:
        raise NotFound(f"No plan found with ID {plan_id}")
    return plan


# A plan is a JSON document (the catalogue's plan shape, plus whatever fields a caller's posts carry); its posts
# stay dicts so save_content_plan keeps every field it was given.
def _normalized_posts(posts: list[dict[str, Any]]) -> list[dict[str, Any]]:
    normalized = []
    for index, post in enumerate(posts, start=1):
        post = dict(post)
        if not post.get("id"):
            post["id"] = f"post-{index}"
        post["id"] = str(post["id"])
        normalized.append(post)
    return normalized


async def save(session: AsyncSession, *, project_id: uuid.UUID, document: dict[str, Any], status: str) -> ContentPlan:
    """Stores a plan: replaces the project's plan named by `plan_id` (approvals kept), else creates one."""
    given_project = document.get("project_id")
    if given_project is not None and _parse_id(given_project) != project_id:
        raise ValidationFailed(
            "plan.project_id and project_id disagree",
            field_errors=[{"path": "plan.project_id", "message": "differs from the resolved project_id"}],
        )
    existing: ContentPlan | None = None
    given_plan = _parse_id(document["plan_id"]) if document.get("plan_id") else None
    if given_plan is not None:
        existing = await session.get(ContentPlan, given_plan)
        if existing is not None and existing.project_id != project_id:
            existing = None
    topic = (document.get("topic") or "").strip() or "Untitled Plan"
    plan = existing or ContentPlan(id=uuid.uuid4(), project_id=project_id)
    payload = {**document, "topic": topic, "posts": _normalized_posts(document["posts"])}
    payload["plan_id"] = str(plan.id)
    payload["project_id"] = str(project_id)
    payload.setdefault("generated_at", iso(datetime.now(UTC)))
    plan.topic = topic
    plan.status = status
    plan.payload = payload
    if existing is None:
        session.add(plan)
    await session.flush()
    return plan


def post_ids(plan: ContentPlan) -> list[str]:
    """The ids of the plan's posts, in order."""
    return [str(post.get("id")) for post in plan.payload.get("posts", [])]


def mirror_post_status(plan: ContentPlan, *, post_id: str, status: str) -> None:
    """Copies an approval decision onto the plan post's `status` (approval items stay the source of truth)."""
    posts = [
        dict(post, status=status) if str(post.get("id")) == post_id else post for post in plan.payload.get("posts", [])
    ]
    plan.payload = {**plan.payload, "posts": posts}


# Reads a source URL as extract_url_content's `auto` does (ideation's url_content.extract, through the caller's
# connected YouTube channel when it has one): the callers sit above planning and pass it in.
PageReader = Callable[[str], Awaitable[dict[str, Any]]]

BASE_CREDITS = 10
SOURCE_URL_CREDITS = 3
SOURCE_CHARS = 2000
SOURCE_ANGLES = 6
SOURCE_ANGLE_CHARS = 120


def plan_credits(source_url: str | None) -> int:
    """10 credits, 13 with a source URL to read."""
    return BASE_CREDITS + (SOURCE_URL_CREDITS if source_url else 0)


def _angles(brand: BrandContext) -> list[str]:
    """Content pillars by weight (a heavier pillar recurs more), then value propositions and proof points."""
    angles: list[str] = []
    for name, weight in brand.content_pillars:
        angles += [name] * max(1, round(weight * 4))
    angles += list(brand.value_propositions) + [point.claim for point in brand.proof_points]
    return angles


async def _read_source(read_page: PageReader, url: str) -> tuple[str, list[str], dict[str, Any]]:
    """The source page read as extract_url_content `auto` reads it: the first 2,000 characters of its
    text, angles from its USP, benefits and features, and what context_used records about it.

    A URL the fetcher refuses (§1.14) is the caller's validation_error; a site that fails or times out
    is only noted, and the plan is written without it.
    """
    try:
        page = await read_page(url)
    except (UpstreamFailed, NotFound) as error:
        return "", [], {"url": url, "read": False, "error": error.message}
    text = " ".join(str(page.get("transcript") or page.get("description") or "").split())[:SOURCE_CHARS]
    angles: list[str] = []
    for candidate in [page.get("usp"), *(page.get("benefits") or []), *(page.get("features") or [])]:
        angle = clip(str(candidate or "").strip().rstrip("."), SOURCE_ANGLE_CHARS)
        if angle and angle not in angles:
            angles.append(angle)
    note = {
        "url": page["url"],
        "read": True,
        "source_type": page["source_type"],
        "title": page.get("title") or "",
        "characters_used": len(text),
        "angles": angles[:SOURCE_ANGLES],
    }
    return text, angles[:SOURCE_ANGLES], note


@dataclass(frozen=True, slots=True)
class PlanInsights:
    """What the project's measured posts say, as a plan applies and records it: ideation's context (ideation sits
    above planning, so its callers build this from it). Its top hooks lead the posts; it is stored in the plan
    as `context_used.ideation_context` and `insights_applied`."""

    prompt_injection: str
    top_hooks: list[str]
    # the catalogue's recommendedPostingTime object, stored as it is in the plan's JSON
    optimal_timing: dict[str, Any] | None
    recommended_model: str | None
    winning_patterns: dict[str, list[str]]
    insights_count: int
    has_historical_data: bool


async def plan_week(
    *,
    session: AsyncSession,
    settings: Settings,
    project_id: uuid.UUID,
    insights: PlanInsights,
    topic: str,
    source_url: str | None,
    platforms: list[str],
    posts_per_day: int,
    days: int,
    start_date: date | None,
    brand_voice: str | None,
    read_page: PageReader,
) -> ContentPlan:
    """plan_content_week: days × platforms × posts_per_day posts, rotated, stored as draft.

    `insights` is what the project's measured posts say (ideation's context, loaded by the caller because
    ideation sits above planning); its top hooks lead the posts and it is stored as `insights_applied`.
    """
    start = start_date or (datetime.now(UTC) + timedelta(days=1)).date()
    model = select_model(settings, None)
    content_service.check_writable(
        topic,
        model=model,
        field="topic",
        link_recovery="pass the link as source_url (the plan reads the page) and name the topic in words",
    )
    provider = provider_for(settings, model)
    # With brand_voice the profile is not loaded (CATALOG.md §7): the voice stands alone.
    brand = (
        BrandContext().with_voice(brand_voice) if brand_voice else await content_service.load_brand(session, project_id)
    )
    await end_unit_of_work(session)
    notes, source_note = "", None
    source_angles: list[str] = []
    if source_url:
        notes, source_angles, source_note = await _read_source(read_page, source_url)
    source_summary = " ".join(sentences(notes)[:3])
    # the source's own selling points lead; the brand's pillars and propositions follow
    angles = source_angles + _angles(brand) or [""]
    top_hooks = list(insights.top_hooks)
    posts: list[dict[str, Any]] = []
    counter = 0
    for day in range(1, days + 1):
        post_date = start + timedelta(days=day - 1)
        for platform in platforms:
            for index in range(1, posts_per_day + 1):
                media_options = social_platforms.RULES[platform].plan_media_types
                media_type = media_options[(day + index) % len(media_options)]
                family = HOOK_FAMILIES[counter % len(HOOK_FAMILIES)]
                request = PlanPostRequest(
                    topic=topic,
                    platform=platform,
                    brand=brand,
                    hook_family=family,
                    angle=angles[counter % len(angles)],
                    media_type=media_type,
                    day=day,
                    index=index,
                    top_hook=top_hooks[counter] if counter < len(top_hooks) else None,
                    source_notes=source_summary,
                )
                draft = await without_blocked_terms(
                    functools.partial(provider.plan_post, request),
                    brand.blocked_terms(platform),
                    provider=provider.name,
                    regenerate=model != "builtin",
                )
                post: dict[str, Any] = {
                    "id": f"day{day}-{platform}-{index}",
                    "day": day,
                    "date": post_date.isoformat(),
                    "platform": platform,
                    "content_type": "script" if social_platforms.RULES[platform].video_first else "caption",
                    "caption": draft.caption,
                    "hashtags": draft.hashtags,
                    "hook": draft.hook,
                    "angle": draft.angle,
                    "visual_direction": draft.visual_direction,
                    "media_type": media_type,
                }
                if draft.title:
                    post["title"] = draft.title
                posts.append(post)
                counter += 1
    document: dict[str, Any] = {
        "topic": topic,
        "start_date": start.isoformat(),
        "end_date": (start + timedelta(days=days - 1)).isoformat(),
        "platforms": platforms,
        "estimated_credits": plan_credits(source_url),
        "posts": posts,
        "context_used": {
            "ideation_context": insights.prompt_injection,
            "loop_summary": None,
            "project_id": str(project_id),
        },
        "insights_applied": {
            "top_hooks": top_hooks[:3],
            "optimal_timing": insights.optimal_timing,
            "recommended_model": insights.recommended_model,
            "winning_patterns": insights.winning_patterns,
            "insights_count": insights.insights_count,
            "has_historical_data": insights.has_historical_data,
        },
        "model": model,
    }
    if source_url:
        document["source_url"] = source_url
        document["context_used"]["source"] = source_note
    if brand.name:
        document["brand_name"] = brand.name
    return await save(session, project_id=project_id, document=document, status="draft")


UPDATABLE = (
    "caption",
    "title",
    "hashtags",
    "hook",
    "angle",
    "visual_direction",
    "media_url",
    "schedule_at",
    "platform",
    "status",
)


def update_posts(plan: ContentPlan, updates: list[dict[str, Any]]) -> tuple[int, list[str]]:
    """Applies the given fields to the posts they name; returns (updated, unmatched ids)."""
    by_id = {str(post.get("id")): dict(post) for post in plan.payload.get("posts", [])}
    unmatched = [str(update["post_id"]) for update in updates if str(update["post_id"]) not in by_id]
    if len(unmatched) == len(updates):
        raise ValidationFailed(
            "no post_id matches a post of this plan",
            field_errors=[{"path": "post_updates", "message": "no post_id matches a post of the plan"}],
            recover_with="get_content_plan lists the plan's post ids",
        )
    touched: set[str] = set()
    for update in updates:
        post_id = str(update["post_id"])
        if post_id in by_id:
            by_id[post_id].update({key: update[key] for key in UPDATABLE if key in update})
            touched.add(post_id)
    plan.payload = {
        **plan.payload,
        "posts": [by_id[str(post.get("id"))] for post in plan.payload.get("posts", [])],
    }
    return len(touched), unmatched


async def delete_plan(session: AsyncSession, *, plan: ContentPlan) -> None:
    """Deletes the plan; its approval items go with it (their plan_id cascades), scheduled posts stay scheduled."""
    await session.delete(plan)
    await session.flush()
