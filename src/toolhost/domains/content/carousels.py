"""create_carousel and delete_carousel: slide text, one `image` job per slide, and tearing both down.

The slide text is written as generate_carousel writes it (the same record); each slide then gets an `image`
job holding its own 4-credit reservation, enqueued in the call's transaction. A slide the builtin renderer
cannot typeset within its layout (a caller's verbatim hook too long for the hook layout) fails at once and is
refunded in the same transaction; the call fails only when every slide fails.
"""

from __future__ import annotations

import uuid
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any

from sqlalchemy import select
from sqlalchemy.ext.asyncio import AsyncSession

from toolhost.config import Settings
from toolhost.db.base import utcnow
from toolhost.domains.brand import service as brand_service
from toolhost.domains.content import image_jobs, jobs, layouts, service, slides
from toolhost.domains.content.models import ContentRecord
from toolhost.platform import jobs as platform_jobs
from toolhost.platform.jobs import Job
from toolhost.platform.results import Conflict, NotFound, UpstreamFailed, ValidationFailed
from toolhost.providers.text.base import HookFamily

TEXT_CREDITS = 5
CREDITS_PER_SLIDE = 4
# Built-in packs: (template, slides). Each overrides template_id and slide_count.
TEMPLATE_PACKS: dict[str, tuple[str, int]] = {
    "sn_signal_carousel_v1": ("hormozi-authority", 7),
    "sn_performance_recap_v1": ("data-stats", 5),
    "sn_showcase_ad_v1": ("product-showcase", 6),
}


def slide_total(template_pack_id: str | None, slide_count: int) -> int:
    """How many slides (and image jobs) a call makes."""
    return TEMPLATE_PACKS[template_pack_id][1] if template_pack_id else slide_count


def cost(template_pack_id: str | None, slide_count: int) -> int:
    """create_carousel's cost: the text, plus one image per slide."""
    return TEXT_CREDITS + CREDITS_PER_SLIDE * slide_total(template_pack_id, slide_count)


async def project_of_carousel(
    session: AsyncSession, content_id: str, project_ids: Sequence[uuid.UUID]
) -> uuid.UUID | None:
    """The project of a carousel record among `project_ids` (the object lookup of `content_id`); any other
    kind of record names no carousel."""
    try:
        parsed = uuid.UUID(content_id)
    except ValueError:
        return None
    if not project_ids:
        return None
    return await session.scalar(
        select(ContentRecord.project_id).where(
            ContentRecord.id == parsed, ContentRecord.kind == "carousel", ContentRecord.project_id.in_(project_ids)
        )
    )


def _brand_project(brand_id: str | None, project_id: uuid.UUID, accessible: Sequence[uuid.UUID]) -> uuid.UUID:
    if brand_id is None:
        return project_id
    try:
        parsed = uuid.UUID(brand_id.strip())
    except ValueError as error:
        raise ValidationFailed(
            "brand_id must be a project id", field_errors=[{"path": "brand_id", "message": "not a project id"}]
        ) from error
    if parsed not in accessible:
        raise NotFound(
            f"No project found with ID {brand_id}",
            recover_with="get_brand_profile called without project_id lists your projects",
        )
    return parsed


@dataclass(slots=True)
class CreatedCarousel:
    """What create_carousel reports."""

    record: ContentRecord
    template_id: str
    style: str
    slides: list[dict[str, Any]]
    image_model: str
    brand: dict[str, Any] | None
    job_ids: list[str]
    failed: list[dict[str, Any]] = field(default_factory=list)
    per_slide: int = CREDITS_PER_SLIDE


async def create(
    *,
    session: AsyncSession,
    settings: Settings,
    account_id: uuid.UUID,
    project_id: uuid.UUID,
    accessible_project_ids: Sequence[uuid.UUID],
    topic: str,
    template_id: str,
    slide_count: int,
    template_pack_id: str | None,
    style: str | None,
    hook: str | None,
    hook_family: HookFamily | None,
    cta_text: str | None,
    cta_url: str | None,
    tone: str | None,
    constraints: str | None,
    platform: str | None,
    aspect_ratio: str,
    image_model: str | None,
    image_style_suffix: str | None,
    brand_id: str | None,
) -> CreatedCarousel:
    """Writes the slides and enqueues their image jobs (execute() has debited the call's cost)."""
    model = image_jobs.select_model(settings, image_model)
    brand_project = _brand_project(brand_id, project_id, accessible_project_ids)
    if template_pack_id:
        template_id, slide_count = TEMPLATE_PACKS[template_pack_id]
    text = await service.carousel(
        session=session,
        settings=settings,
        project_id=project_id,
        topic=topic,
        template_id=template_id,
        slide_count=slide_count,
        style=style,
        hook=hook,
        hook_family=hook_family,
        cta_text=cta_text,
        cta_url=cta_url,
        tone=tone,
        constraints=constraints,
        platform=platform,
        aspect_ratio=aspect_ratio,
    )
    record, written, resolved_style = text.record, text.slides, text.style
    runtime = await brand_service.get_runtime(session=session, project_id=brand_project)
    has_logo = bool(((runtime or {}).get("visual") or {}).get("logoUrl"))
    prefix = slides.style_prefix(runtime, has_logo=has_logo)
    brand = None if runtime is None else {"brandName": runtime.get("name"), "hasLogo": has_logo, "stylePrefix": prefix}
    visual_style = layouts.VISUAL_STYLE_OF_CAROUSEL_STYLE[resolved_style]
    # An operator's cost override (base + per slide) sets the reservation each slide's job holds.
    override = settings.credits.costs.get("create_carousel")
    per_slide = override.per if override is not None else CREDITS_PER_SLIDE
    result = CreatedCarousel(
        record=record,
        template_id=template_id,
        style=resolved_style,
        slides=[],
        image_model=model,
        brand=brand,
        job_ids=[],
        per_slide=per_slide,
    )
    for position, slide in enumerate(written):
        _, fields = slides.typeset(slide, position=position, count=len(written), visual_style=visual_style)
        problems = slides.overflow(fields)
        job = await platform_jobs.enqueue(
            session=session,
            account_id=account_id,
            project_id=project_id,
            job_type="image",
            tool_name="create_carousel",
            reserved_credits=per_slide,
            job_input={
                # An image provider's prompt (CATALOG.md §2); the builtin typesetter reads `slide` instead.
                "prompt": " ".join(
                    part for part in (prefix, slide.get("headline"), slide.get("body"), image_style_suffix) if part
                ),
                "aspect_ratio": aspect_ratio,
                "model": model,
                "slide": slide,
                "position": position,
                "count": len(written),
                "visual_style": visual_style,
                "cta_url": cta_url,
                "brand_project_id": str(brand_project),
                "carousel_id": str(record.id),
            },
        )
        entry = {**slide, "imageJobId": str(job.id), "imageError": None, "imageBillingStatus": job.billing_status}
        if problems:
            error = "the slide does not fit its layout: " + "; ".join(problems)
            await _fail_now(session, job, error)
            entry.update(imageError=error, imageBillingStatus=job.billing_status)
            result.failed.append(
                {
                    "slideNumber": slide["slideNumber"],
                    "error": error,
                    "credits_reserved": job.credits,
                    "credits_charged": 0,
                    "credits_refunded": job.credits if job.billing_status == "refunded" else 0,
                    "billing_status": job.billing_status,
                    "failure_reason": "generation_failed",
                }
            )
        result.slides.append(entry)
        result.job_ids.append(str(job.id))
    if written and len(result.failed) == len(written):
        raise UpstreamFailed(
            "no slide could be rendered: " + result.failed[0]["error"],
            provider=model,
            recover_with="shorten the hook (check it with visual_quality_check), then call create_carousel again",
        )
    record.data = {
        **(record.data or {}),
        "slides": result.slides,
        "jobIds": result.job_ids,
        "templatePackId": template_pack_id,
        "imageModel": model,
        "visualStyle": visual_style,
        "brandProjectId": str(brand_project),
        "ctaUrl": cta_url,
    }
    await session.flush()
    return result


async def _fail_now(session: AsyncSession, job: Job, error: str) -> None:
    now = utcnow()
    job.status = "failed"
    job.failure_reason = "generation_failed"
    job.error = error[:1000]
    job.completed_at = now
    job.updated_at = now
    await session.flush()
    await platform_jobs.refund(session, job)
    await session.refresh(job)


@dataclass(frozen=True, slots=True)
class Deletion:
    """What delete_carousel reports."""

    jobs_cancelled: int
    refunded_credits: int


async def delete(session: AsyncSession, *, content_id: str, project_id: uuid.UUID) -> Deletion:
    """Deletes a carousel record and cancels (refunding) its unfinished slide jobs. Rendered images stay in
    the media store until retention; posts are separate rows and are never touched."""
    record = await session.get(ContentRecord, uuid.UUID(content_id))
    if record is None or record.kind != "carousel" or record.project_id != project_id:
        raise NotFound(f"No carousel found with ID {content_id}")
    cancelled = refunded = 0
    for job_id in (record.data or {}).get("jobIds") or []:
        try:
            outcome = await jobs.cancel(session, job_id=str(job_id), project_id=project_id)
        except (Conflict, NotFound):
            continue  # finished (completed or failed) jobs keep their result and billing
        if not outcome.already_cancelled:
            cancelled += 1
            refunded += outcome.refunded_credits
    await session.delete(record)
    await session.flush()
    return Deletion(jobs_cancelled=cancelled, refunded_credits=refunded)
