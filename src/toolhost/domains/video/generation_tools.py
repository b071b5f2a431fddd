"""The async video and voice tools: generate_video and generate_voiceover (CATALOG.md §2)."""

from __future__ import annotations

import asyncio
import time
import uuid
from collections.abc import Sequence

from sqlalchemy import select
from sqlalchemy.ext.asyncio import AsyncSession

from toolhost.domains.media import service as media_service
from toolhost.domains.video import generation_jobs, voice
from toolhost.domains.video.schemas import (
    GenerateVideoIn,
    GenerateVideoOut,
    GenerateVoiceoverIn,
    GenerateVoiceoverOut,
)
from toolhost.platform import jobs as platform_jobs
from toolhost.platform.context import ToolContext
from toolhost.platform.jobs import Job
from toolhost.platform.registry import object_lookup, tool
from toolhost.platform.results import Conflict, UpstreamFailed, ValidationFailed

VOICEOVER_CREDITS = 3


async def project_of_voiceover_job(
    session: AsyncSession, job_id: str, project_ids: Sequence[uuid.UUID]
) -> uuid.UUID | None:
    """The project of a voiceover job among `project_ids` (resume_task_id names no other job type)."""
    parsed = platform_jobs.parse_job_id(job_id)
    if parsed is None or not project_ids:
        return None
    return await session.scalar(
        select(Job.project_id).where(Job.id == parsed, Job.job_type == "voiceover", Job.project_id.in_(project_ids))
    )


VOICEOVER_JOB_LOOKUP = object_lookup("resume_task_id", project_of_voiceover_job)


@tool(
    module="content",
    scope="mcp:write",
    credits=lambda args: 10 + 2 * generation_jobs.video_seconds(args.duration),
    units=lambda args: generation_jobs.video_seconds(args.duration),
    assets=lambda _: 1,
    project="strict",
    response_format="text",
    category="generation",
)
async def generate_video(ctx: ToolContext, args: GenerateVideoIn) -> GenerateVideoOut:
    """Queues a short brand video: an MP4 (H.264, 30 fps) of the prompt's key phrases as timed captions.

    The builtin model is the brand-graphic renderer in motion (photographic footage needs a video
    provider): the start frame (image_url, darkened, or a brand gradient) zooms and pans slowly,
    cross-fading to end_frame_url when given; enable_audio narrates the captions (needs espeak-ng).
    Costs 10 + 2 credits per second. Returns a job id at once; poll check_status for `result_url` and
    `r2_key`, then use the key in schedule_post. cancel_async_job stops it and refunds the credits.
    """
    model = generation_jobs.select_model(ctx.settings, args.model, kind="video")
    if args.enable_audio:
        voice.require_voice(ctx.settings, path="enable_audio")
    references: dict[str, dict[str, str] | None] = {"reference": None, "end_reference": None}
    for name, url in (("reference", args.image_url), ("end_reference", args.end_frame_url)):
        if url is not None:
            references[name] = await media_service.resolve_image_reference(
                session=ctx.session,
                settings=ctx.settings,
                account_id=ctx.principal.account_id,
                accessible_project_ids=ctx.accessible_project_ids,
                image_url=url,
            )
    job = await platform_jobs.enqueue(
        session=ctx.session,
        account_id=ctx.principal.account_id,
        project_id=ctx.project_id,
        job_type="video",
        tool_name=ctx.tool_name,
        reserved_credits=ctx.credits_debited,
        job_input={
            "prompt": args.prompt,
            "duration": args.duration,
            "aspect_ratio": args.aspect_ratio,
            "enable_audio": args.enable_audio,
            "model": model,
            **references,
        },
    )
    job_id = str(job.id)
    return GenerateVideoOut(
        jobId=job_id,
        taskId=job_id,
        asyncJobId=job_id,
        model=model,
        estimatedTime=generation_jobs.estimated_video_seconds(args.duration),
        creditsDeducted=ctx.credits_debited,
    )


@tool(
    module="content",
    scope="mcp:write",
    credits=lambda args: 0 if args.resume_task_id else VOICEOVER_CREDITS,
    assets=lambda args: 0 if args.resume_task_id else 1,
    project="object_or_strict",
    object_id="resume_task_id",
    resume_argument="resume_task_id",
    response_format="text",
    category="generation",
)
async def generate_voiceover(ctx: ToolContext, args: GenerateVoiceoverIn) -> GenerateVoiceoverOut:
    """Speaks text as a WAV voiceover and waits up to 45 s for it; a slower job answers pending.

    Voices: rachel, daniel, adam, gigi, charlotte; speed 0.5–2.0 scales 175 words/min. Needs a voice
    model (the builtin one is espeak-ng). When the answer is pending, call again with
    resume_task_id = its taskId: that waits on the same job without a new charge. The finished result
    has `audioUrl` (signed, 1 h) and `r2_key` for schedule_post or a video.
    """
    if args.resume_task_id is not None:
        job = await platform_jobs.get(ctx.session, job_id=args.resume_task_id, project_id=ctx.project_id)
    else:
        if args.text is None:
            raise ValidationFailed(
                "text is required unless resume_task_id is given",
                field_errors=[{"path": "text", "message": "required"}],
            )
        voice.require_voice(ctx.settings, path="voice")
        job = await platform_jobs.enqueue(
            session=ctx.session,
            account_id=ctx.principal.account_id,
            project_id=ctx.project_id,
            job_type="voiceover",
            tool_name=ctx.tool_name,
            reserved_credits=ctx.credits_debited,
            job_input={"text": args.text, "voice": args.voice, "speed": args.speed, "model": voice.BUILTIN},
        )
    job_id, project_id = job.id, job.project_id
    await ctx.commit()
    deadline = time.monotonic() + ctx.settings.voice.wait_seconds
    while True:
        async with ctx.fresh_transaction() as session:
            current = await session.get(Job, job_id)
            assert current is not None
            if current.status in ("completed", "failed", "cancelled"):
                return _finished(ctx, current)
        remaining = deadline - time.monotonic()
        if remaining <= 0:
            return GenerateVoiceoverOut(
                status="pending",
                taskId=str(job_id),
                resumeTaskId=str(job_id),
                projectId=str(project_id),
                message=f"The voiceover {job_id} is still being generated: call generate_voiceover again with "
                f"resume_task_id={job_id} (no new charge), or poll check_status.",
            )
        await asyncio.sleep(min(ctx.settings.voice.poll_seconds, remaining))


def _finished(ctx: ToolContext, job: Job) -> GenerateVoiceoverOut:
    if job.status == "failed":
        raise UpstreamFailed(
            f"the voiceover failed; its {job.credits} credits were refunded",
            recover_with="call generate_voiceover again, or shorten the text",
            provider=voice.BUILTIN,
        )
    if job.status == "cancelled":
        raise Conflict(
            "the voiceover job was cancelled; its credits were refunded",
            current_status="cancelled",
            recover_with="call generate_voiceover again without resume_task_id",
        )
    output = job.output or {}
    key = str(output["primary"])
    return GenerateVoiceoverOut(
        status="completed",
        audioUrl=media_service.signed_url(ctx.settings, key),
        durationSeconds=output.get("duration_seconds"),
        voice=str((job.input or {}).get("voice")),
        projectId=str(job.project_id),
        r2_key=key,
        jobId=str(job.id),
    )
