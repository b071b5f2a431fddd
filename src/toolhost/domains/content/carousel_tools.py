"""create_carousel and delete_carousel (CATALOG.md §2)."""

from __future__ import annotations

from toolhost.domains.content import carousels
from toolhost.domains.content.carousel_schemas import (
    BrandApplied,
    CreateCarouselCredits,
    CreateCarouselIn,
    CreateCarouselOut,
    CreateCarouselSlide,
    DeleteCarouselIn,
    DeleteCarouselOut,
    FailedSlide,
)
from toolhost.platform.context import ToolContext
from toolhost.platform.registry import object_lookup, tool

CAROUSEL_LOOKUP = object_lookup("content_id", carousels.project_of_carousel)


def _slides(args: CreateCarouselIn) -> int:
    return carousels.slide_total(args.template_pack_id, args.slide_count)


@tool(
    module="content",
    scope="mcp:write",
    credits=lambda args: carousels.cost(args.template_pack_id, args.slide_count),
    units=_slides,
    assets=_slides,
    project="strict",
    response_format="text",
    category="generation",
)
async def create_carousel(ctx: ToolContext, args: CreateCarouselIn) -> CreateCarouselOut:
    """Writes a carousel's slides (as generate_carousel) and queues one image job per slide to render them.

    The builtin model typesets each slide in the visual-gate layout visual_quality_check predicts for it, in
    the brand's palette and fonts with the logo bottom-right (1080x1080, 1080x1350 or 1080x1920 for 1:1, 4:5,
    9:16); brand_id takes the visuals from another of your projects. template_pack_id picks a built-in pack.
    Costs 5 credits plus 4 per slide; slides that cannot be rendered are listed in failedSlides and refunded.
    Next: poll each job with check_status, then schedule_post with job_ids and media_type CAROUSEL_ALBUM.
    """
    created = await carousels.create(
        session=ctx.session,
        settings=ctx.settings,
        account_id=ctx.principal.account_id,
        project_id=ctx.project_id,
        accessible_project_ids=ctx.accessible_project_ids,
        topic=args.topic,
        template_id=args.template_id,
        slide_count=args.slide_count,
        template_pack_id=args.template_pack_id,
        style=args.style,
        hook=args.hook,
        hook_family=args.hook_family,
        cta_text=args.cta_text,
        cta_url=args.cta_url,
        tone=args.tone,
        constraints=args.constraints,
        platform=args.platform,
        aspect_ratio=args.aspect_ratio,
        image_model=args.image_model,
        image_style_suffix=args.image_style_suffix,
        brand_id=args.brand_id,
    )
    count = len(created.slides)
    refunded = sum(failed["credits_refunded"] for failed in created.failed)
    estimated = created.per_slide * count
    return CreateCarouselOut(
        carouselId=str(created.record.id),
        templateId=created.template_id,
        templatePackId=args.template_pack_id,
        style=created.style,
        slideCount=count,
        slides=[CreateCarouselSlide.model_validate(slide) for slide in created.slides],
        imageModel=created.image_model,
        brandApplied=BrandApplied.model_validate(created.brand) if created.brand else None,
        jobIds=created.job_ids,
        failedSlides=[FailedSlide.model_validate(failed) for failed in created.failed],
        credits=CreateCarouselCredits(
            textGeneration=ctx.credits_debited - estimated,
            imagesEstimated=estimated,
            imagesCharged=estimated - refunded,
            imagesRefunded=refunded,
            billingUnknownSlides=0,
            totalEstimated=ctx.credits_debited,
        ),
    )


@tool(
    module="content",
    scope="mcp:write",
    destructive=True,
    idempotent=True,
    project="object",
    object_id="content_id",
    response_format=None,
    text_shape="summary",
)
async def delete_carousel(ctx: ToolContext, args: DeleteCarouselIn) -> DeleteCarouselOut:
    """Deletes a carousel made by create_carousel or generate_carousel; needs confirm: true.

    Cancels its unfinished slide image jobs and refunds their credits in the same step; images already
    rendered stay in the media store until retention, and published posts are never touched. Repeating
    the call is not_found.
    """
    deletion = await carousels.delete(ctx.session, content_id=args.content_id, project_id=ctx.project_id)
    message = f"Deleted carousel {args.content_id}"
    if deletion.jobs_cancelled:
        message += f"; cancelled {deletion.jobs_cancelled} unfinished slide jobs"
        message += f" and refunded {deletion.refunded_credits} credits."
    else:
        message += "; no slide job was left to cancel."
    return DeleteCarouselOut(
        success=True,
        deleted=True,
        content_id=args.content_id,
        jobs_cancelled=deletion.jobs_cancelled,
        refunded_credits=deletion.refunded_credits,
        message=message,
    )
