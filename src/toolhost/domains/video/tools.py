"""The video tools (CATALOG.md §4): built-in compositions rendered to MP4/GIF, and HTML compositions in Chromium."""

from __future__ import annotations

import asyncio
import time

from toolhost.domains.media import service as media_service
from toolhost.domains.video import hyperframes, render, service
from toolhost.domains.video.compositions import COMPOSITIONS, FPS, output_credits, seconds
from toolhost.domains.video.schemas import (
    CompositionInfo,
    HyperframesBlock,
    ListCompositionsIn,
    ListCompositionsOut,
    ListHyperframesBlocksIn,
    ListHyperframesBlocksOut,
    RenderDemoVideoIn,
    RenderDemoVideoOut,
    RenderHyperframesIn,
    RenderHyperframesOut,
    RenderTemplateVideoIn,
    RenderTemplateVideoOut,
)
from toolhost.platform.context import ToolContext
from toolhost.platform.jobs import Job
from toolhost.platform.registry import tool
from toolhost.platform.results import Conflict, UpstreamFailed, ValidationFailed

BASE_CREDITS = 5


def _demo_credits(args: RenderDemoVideoIn) -> int:
    # Bad props still cost the base here; the handler then refuses them and the rollback refunds it.
    try:
        return output_credits(service.demo_plan(args.composition_id, args.output_format, args.props).output_seconds)
    except ValidationFailed:
        return BASE_CREDITS


def _template_credits(args: RenderTemplateVideoIn) -> int:
    try:
        return output_credits(
            service.template_plan(args.composition_id, args.input_props, args.aspect_ratio).output_seconds
        )
    except ValidationFailed:
        return BASE_CREDITS


@tool(
    module="video",
    scope="mcp:read",
    credits=0,
    read_only=True,
    idempotent=True,
    response_format=None,
    text_shape="summary",
)
async def list_compositions(ctx: ToolContext, args: ListCompositionsIn) -> ListCompositionsOut:
    """Lists the 15 built-in video compositions with their size, length and props JSON Schema.

    Use it before render_demo_video (sample props, merged with yours) or render_template_video (your
    props, at 9:16, 1:1 or 16:9). Dynamic compositions take their length from the props.
    """
    items = [
        CompositionInfo(
            id=item.id,
            width=item.width,
            height=item.height,
            fps=FPS,
            durationInFrames=item.duration_in_frames(item.sample),
            durationSeconds=seconds(item.duration_in_frames(item.sample)),
            dynamic=item.dynamic_frames is not None,
            description=item.description,
            props_schema=item.schema,
        )
        for item in COMPOSITIONS.values()
    ]
    return ListCompositionsOut(compositions=items, count=len(items))


@tool(
    module="video",
    scope="mcp:write",
    credits=_demo_credits,
    units=lambda args: _demo_credits(args) - BASE_CREDITS,
    assets=lambda _: 1,
    project="optional",
    response_format=None,
    text_shape="summary",
    category="generation",
)
async def render_demo_video(ctx: ToolContext, args: RenderDemoVideoIn) -> RenderDemoVideoOut:
    """Renders a built-in composition with its sample props (and yours merged over them), waiting up to 60 s.

    output_format mp4 is H.264 at 30 fps in the brand palette and fonts; gif is 540 px wide, 15 fps, the
    first 15 s. Costs 5 + 1 credit per 5 s of output. A longer render answers `pending`: poll
    check_status with its job_id. The result's r2_key can go to schedule_post.
    """
    plan = service.demo_plan(args.composition_id, args.output_format, args.props)
    if ctx.project is None:
        raise ValidationFailed(
            "project_id is required: the render is stored in a project",
            recover_with="pass project_id; get_brand_profile called without one lists your projects",
            field_errors=[{"path": "project_id", "message": "required"}],
        )
    job, _ = await service.enqueue_render(
        session=ctx.session,
        plan=plan,
        job_type="demo_render",
        tool_name=ctx.tool_name,
        account_id=ctx.principal.account_id,
        project_id=ctx.project_id,
        accessible_project_ids=ctx.accessible_project_ids,
        reserved_credits=ctx.credits_debited,
        path="props",
    )
    job_id = job.id
    await ctx.commit()
    deadline = time.monotonic() + ctx.settings.video.wait_seconds
    resolution = f"{plan.size[0]}×{plan.size[1]}"
    while True:
        async with ctx.fresh_transaction() as session:
            current = await session.get(Job, job_id)
            assert current is not None
            status, output = current.status, dict(current.output or {})
        if status == "failed":
            raise UpstreamFailed(
                f"the render failed; its {ctx.credits_debited} credits were refunded",
                recover_with="check the props, or try a shorter composition",
                provider="builtin",
            )
        if status == "cancelled":
            raise Conflict("the render was cancelled; its credits were refunded", current_status="cancelled")
        if status == "completed":
            key = str(output["primary"])
            return RenderDemoVideoOut(
                job_id=str(job_id),
                status="completed",
                composition_id=plan.composition.id,
                output_format=plan.output_format,
                duration_seconds=float(output.get("duration_seconds", plan.output_seconds)),
                resolution=f"{output.get('width')}×{output.get('height')}",
                r2_key=key,
                signed_url=media_service.signed_url(ctx.settings, key),
            )
        remaining = deadline - time.monotonic()
        if remaining <= 0:
            if plan.output_format == "gif":
                resolution = "{}×{}".format(*render.gif_size(plan.size))
            return RenderDemoVideoOut(
                job_id=str(job_id),
                status="pending",
                composition_id=plan.composition.id,
                output_format=plan.output_format,
                duration_seconds=plan.output_seconds,
                resolution=resolution,
            )
        await asyncio.sleep(min(ctx.settings.video.poll_seconds, remaining))


@tool(
    module="video",
    scope="mcp:write",
    credits=_template_credits,
    units=lambda args: _template_credits(args) - BASE_CREDITS,
    assets=lambda _: 1,
    project="strict",
    response_format="text",
    category="generation",
)
async def render_template_video(ctx: ToolContext, args: RenderTemplateVideoIn) -> RenderTemplateVideoOut:
    """Queues a built-in composition rendered with your props as an H.264 MP4 at 9:16, 1:1 or 16:9.

    Props follow the composition's props_schema (list_compositions); media keys must be your own.
    The cost (5 + 1 credit per 5 s) comes from the length the props give. Poll check_status with the
    job_id for result_url and r2_key; cancel_async_job stops it and refunds the credits.
    """
    plan = service.template_plan(args.composition_id, args.input_props, args.aspect_ratio)
    job, record = await service.enqueue_render(
        session=ctx.session,
        plan=plan,
        job_type="template_render",
        tool_name=ctx.tool_name,
        account_id=ctx.principal.account_id,
        project_id=ctx.project_id,
        accessible_project_ids=ctx.accessible_project_ids,
        reserved_credits=ctx.credits_debited,
        path="input_props",
    )
    assert record is not None
    return RenderTemplateVideoOut(
        job_id=str(job.id),
        jobId=str(job.id),
        composition_id=plan.composition.id,
        content_history_id=str(record.id),
        credits_charged=ctx.credits_debited,
        estimated_duration_seconds=plan.output_seconds,
        project_id=str(ctx.project_id),
    )


@tool(
    module="video",
    scope="mcp:read",
    credits=0,
    read_only=True,
    idempotent=True,
    response_format=None,
    text_shape="bare",
)
async def list_hyperframes_blocks(ctx: ToolContext, args: ListHyperframesBlocksIn) -> ListHyperframesBlocksOut:
    """Lists the built-in HTML blocks (transitions, overlays, charts, branding) for render_hyperframes pages.

    Each block's snippet defines window.hfBlocks[id] = (element, params) => ({seek(t)}); paste it in
    your page, mount it on an element and call its seek from window.__hf.seek. Blocks use no network.
    """
    chosen = [block for block in hyperframes.BLOCKS if args.category is None or block.category == args.category]
    return ListHyperframesBlocksOut(
        blocks=[
            HyperframesBlock(
                id=block.id,
                category=block.category,
                description=block.description,
                params=block.params,
                snippet=block.snippet,
            )
            for block in chosen
        ],
        total=len(chosen),
        categories=list(hyperframes.CATEGORIES),
    )


def _hyperframes_credits(args: RenderHyperframesIn) -> int:
    return hyperframes.credits(args.duration_sec, args.fps)


@tool(
    module="video",
    scope="mcp:write",
    credits=_hyperframes_credits,
    units=lambda args: _hyperframes_credits(args) - BASE_CREDITS,
    assets=lambda _: 1,
    project="strict",
    response_format="text",
    category="generation",
)
async def render_hyperframes(ctx: ToolContext, args: RenderHyperframesIn) -> RenderHyperframesOut:
    """Queues an HTML composition rendered frame by frame in headless Chromium to an H.264 MP4.

    The page (composition_html, or composition_url: a media key, signed URL or https URL) must expose
    window.__hf = {duration, seek(t)}; input_props become window.__hf.props. Blocks from
    list_hyperframes_blocks help. Costs 5 + 1 credit per 5 s × fps/30. Poll check_status with job_id.
    """
    source = await hyperframes.check_request(
        session=ctx.session,
        settings=ctx.settings,
        account_id=ctx.principal.account_id,
        accessible_project_ids=ctx.accessible_project_ids,
        composition_html=args.composition_html,
        composition_url=args.composition_url,
    )
    props = service.parse_props(args.input_props, path="input_props")
    job = await hyperframes.enqueue(
        session=ctx.session,
        tool_name=ctx.tool_name,
        account_id=ctx.principal.account_id,
        project_id=ctx.project_id,
        reserved_credits=ctx.credits_debited,
        source=source,
        props=props,
        aspect_ratio=args.aspect_ratio,
        duration_sec=args.duration_sec,
        fps=args.fps,
        quality=args.quality,
    )
    return RenderHyperframesOut(
        job_id=str(job.id),
        jobId=str(job.id),
        status="pending",
        credits_cost=ctx.credits_debited,
        credits=ctx.credits_debited,
        duration_sec=args.duration_sec,
        fps=args.fps,
        aspect_ratio=args.aspect_ratio,
        quality=args.quality,
        project_id=str(ctx.project_id),
    )
