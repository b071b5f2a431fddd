"""The async generation tools: generate_image, and check_status / cancel_async_job over every job type."""

from __future__ import annotations

from toolhost.domains.content import image_jobs, jobs
from toolhost.domains.content.job_schemas import (
    CancelAsyncJobIn,
    CancelAsyncJobOut,
    CheckStatusIn,
    CheckStatusOut,
    GenerateImageIn,
    GenerateImageOut,
)
from toolhost.domains.media import service as media_service
from toolhost.platform import jobs as platform_jobs
from toolhost.platform.context import ToolContext
from toolhost.platform.registry import object_lookup, tool

JOB_LOOKUP = object_lookup("job_id", platform_jobs.project_of_job)


@tool(
    module="content",
    scope="mcp:write",
    credits=4,
    project="strict",
    response_format="text",
    assets=lambda _: 1,
    category="generation",
)
async def generate_image(ctx: ToolContext, args: GenerateImageIn) -> GenerateImageOut:
    """Queues a brand graphic: a PNG typeset from the prompt in the brand's palette, fonts and logo.

    The builtin model is a typographic renderer (photographic output needs an image provider): it picks a
    layout from the prompt (quote, statistic, list, announcement, headline) and sets its key phrase, with
    emphasis words in the accent colour, over the reference image (image_url, darkened) or a brand gradient.
    Returns a job id at once; poll check_status for `result_url` and `r2_key`, then use the key in
    schedule_post. cancel_async_job stops it and refunds the credits.
    """
    model = image_jobs.select_model(ctx.settings, args.model)
    reference = None
    if args.image_url is not None:
        reference = await media_service.resolve_image_reference(
            session=ctx.session,
            settings=ctx.settings,
            account_id=ctx.principal.account_id,
            accessible_project_ids=ctx.accessible_project_ids,
            image_url=args.image_url,
        )
    job = await platform_jobs.enqueue(
        session=ctx.session,
        account_id=ctx.principal.account_id,
        project_id=ctx.project_id,
        job_type="image",
        tool_name=ctx.tool_name,
        reserved_credits=ctx.credits_debited,
        job_input={
            "prompt": args.prompt,
            "aspect_ratio": args.aspect_ratio,
            "model": model,
            "reference": reference,
        },
    )
    job_id = str(job.id)
    return GenerateImageOut(
        jobId=job_id,
        taskId=job_id,
        asyncJobId=job_id,
        model=model,
        projectId=str(ctx.project_id),
        estimatedTime=image_jobs.ESTIMATED_SECONDS,
        creditsDeducted=ctx.credits_debited,
    )


@tool(
    module="content",
    scope="mcp:read",
    read_only=True,
    idempotent=True,
    project="object",
    object_id="job_id",
    response_format="text",
    polling=True,
)
async def check_status(ctx: ToolContext, args: CheckStatusIn) -> CheckStatusOut:
    """Reads an async job of any type: status, progress, fresh signed URLs of its outputs, and its billing.

    Poll it after generate_image, generate_video, generate_voiceover, create_carousel or a render until
    status is completed (use `result_url` or `r2_key`), failed or cancelled (credits refunded). Polling is
    cheap: it counts 0.2 towards the hourly limit.
    """
    job = await platform_jobs.get(ctx.session, job_id=args.job_id, project_id=ctx.project_id)
    view = jobs.status(ctx.settings, job)
    job_id = str(job.id)
    model = view.model_delivered or view.model_requested
    created_at = job.created_at.isoformat()
    completed_at = job.completed_at.isoformat() if job.completed_at else None
    return CheckStatusOut(
        job_id=job_id,
        job_type=job.job_type,
        model=model,
        status=job.status,
        progress=view.progress,
        result_url=view.result_url,
        r2_key=view.primary_key,
        all_urls=view.urls,
        r2_keys=view.keys,
        error=view.error,
        credits_cost=job.credits,
        credits_reserved=view.credits_reserved,
        credits_charged=view.credits_charged,
        credits_refunded=view.credits_refunded,
        billing_status=job.billing_status,
        failure_reason=job.failure_reason,
        created_at=created_at,
        completed_at=completed_at,
        model_requested=view.model_requested,
        model_delivered=view.model_delivered,
        fallback_reason=view.fallback_reason,
        id=job_id,
        jobId=job_id,
        jobType=job.job_type,
        resultUrl=view.result_url,
        credits=job.credits,
        error_message=view.error,
        createdAt=created_at,
        completedAt=completed_at,
        modelRequested=view.model_requested,
        modelDelivered=view.model_delivered,
        fallbackReason=view.fallback_reason,
    )


@tool(
    module="content",
    scope="mcp:write",
    destructive=True,
    idempotent=True,
    project="object",
    object_id="job_id",
    response_format=None,
    text_shape="summary",
)
async def cancel_async_job(ctx: ToolContext, args: CancelAsyncJobIn) -> CancelAsyncJobOut:
    """Cancels a pending or processing async job and refunds its credits at once; needs confirm: true.

    A processing job stops at its worker's next checkpoint and its partial output is discarded. Completed
    or failed jobs cannot be cancelled (conflict); publish jobs are cancelled with cancel_scheduled_post.
    Repeating the call reports already_cancelled and refunds nothing more.
    """
    result = await jobs.cancel(ctx.session, job_id=args.job_id, project_id=ctx.project_id)
    charged = result.job.billing_status == "refunded"
    message = (
        f"Job {args.job_id} was already cancelled."
        if result.already_cancelled
        else f"Cancelled job {args.job_id}"
        + (f"; refunded {result.refunded_credits} credits." if result.refunded_credits else "; nothing was charged.")
    )
    return CancelAsyncJobOut(
        success=True,
        cancelled=True,
        job_id=args.job_id,
        status="cancelled",
        refunded_credits=result.refunded_credits,
        refund_status="refunded" if charged else "not_charged",
        message=message,
        already_cancelled=True if result.already_cancelled else None,
    )
