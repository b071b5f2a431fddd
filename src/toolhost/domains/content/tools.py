"""The text generation tools: posts, adaptations, storyboards and carousel text."""

from __future__ import annotations

from toolhost.domains.content import service
from toolhost.domains.content.schemas import (
    AdaptContentIn,
    AdaptContentOut,
    CarouselCredits,
    CarouselSlide,
    CreateStoryboardIn,
    CreateStoryboardOut,
    GenerateCarouselIn,
    GenerateCarouselOut,
    GenerateContentIn,
    GenerateContentOut,
    StoryboardFrame,
)
from toolhost.platform.context import ToolContext
from toolhost.platform.registry import tool

CAROUSEL_CREDITS = 5


@tool(
    module="content",
    scope="mcp:write",
    credits=2,
    project="strict",
    response_format=None,
    text_shape="summary",
    category="generation",
)
async def generate_content(ctx: ToolContext, args: GenerateContentIn) -> GenerateContentOut:
    """Writes a caption, hook, script or blog post from a prompt, in the project's brand voice.

    Uses the brand runtime (pillars, value propositions, proof points, vocabulary) and the platform's rules;
    figures come only from the prompt or the brand's proof points, and banned terms never appear. The text
    block is the text alone. Next: quality_check it, adapt_content it for other platforms, or plan it.
    """
    context = await service.prompt_context(session=ctx.session, project_id=ctx.project_id)
    record = await service.generate(
        session=ctx.session,
        settings=ctx.settings,
        project_id=ctx.project_id,
        prompt=args.prompt,
        content_type=args.content_type,
        platform=args.platform,
        brand_voice=args.brand_voice,
        model=args.model,
        ideation_context=context,
    )
    return GenerateContentOut(
        text=record.text or "",
        content_type=args.content_type,
        platform=args.platform,
        model=record.model,
        content_id=str(record.id),
    )


@tool(
    module="content",
    scope="mcp:write",
    credits=1,
    project="strict",
    response_format=None,
    text_shape="summary",
    category="generation",
)
async def adapt_content(ctx: ToolContext, args: AdaptContentIn) -> AdaptContentOut:
    """Rewrites existing text for another platform: its length limit, hashtag guidance and voice override.

    Cuts at sentence boundaries, keeping the opening and the call to action, and drops the brand's avoid
    patterns. Next: quality_check the result for the target platform.
    """
    record = await service.adapt(
        session=ctx.session,
        settings=ctx.settings,
        project_id=ctx.project_id,
        content=args.content,
        source_platform=args.source_platform,
        target_platform=args.target_platform,
        brand_voice=args.brand_voice,
        model=args.model,
    )
    return AdaptContentOut(
        text=record.text or "",
        source_platform=args.source_platform,
        target_platform=args.target_platform,
        model=record.model,
        content_id=str(record.id),
    )


@tool(module="content", scope="mcp:write", credits=5, project="strict", response_format="json", category="generation")
async def create_storyboard(ctx: ToolContext, args: CreateStoryboardIn) -> CreateStoryboardOut:
    """Turns a video concept into a storyboard: timed frames with shot, camera move, image and video prompts.

    Frame 1 is the hook and the last frame the call to action; durations sum exactly to the target and the
    same character description runs through every image prompt. The result is valid props for the
    StoryboardVideo compositions (render_template_video).
    """
    board = await service.storyboard(
        session=ctx.session,
        settings=ctx.settings,
        project_id=ctx.project_id,
        concept=args.concept,
        brand_context=args.brand_context,
        platform=args.platform,
        target_duration=args.target_duration,
        num_scenes=args.num_scenes,
        style=args.style,
    )
    return CreateStoryboardOut(
        title=board.title,
        totalDuration=board.total_duration,
        aspectRatio=board.aspect_ratio,
        characterDescription=board.character_description,
        frames=[StoryboardFrame.model_validate(frame) for frame in board.frames],
        content_id=str(board.record.id),
    )


@tool(
    module="content",
    scope="mcp:write",
    credits=CAROUSEL_CREDITS,
    project="strict",
    response_format="json",
    category="generation",
)
async def generate_carousel(ctx: ToolContext, args: GenerateCarouselIn) -> GenerateCarouselOut:
    """Writes the slide text of a carousel for a template (text only; create_carousel renders images).

    Slide 1 is the hook (yours verbatim, or built from hook_family), the last slide the CTA; figures come only
    from the topic, the constraints or the brand's proof points. Each field is short enough for its slide
    layout, so visual_quality_check passes. Next: visual_quality_check, then create_carousel.
    """
    written = await service.carousel(
        session=ctx.session,
        settings=ctx.settings,
        project_id=ctx.project_id,
        topic=args.topic,
        template_id=args.template_id,
        slide_count=args.slide_count,
        style=args.style,
        hook=args.hook,
        hook_family=args.hook_family,
        cta_text=args.cta_text,
        cta_url=args.cta_url,
        tone=args.tone,
        constraints=args.constraints,
        platform=args.platform,
        aspect_ratio=args.aspect_ratio,
    )
    return GenerateCarouselOut(
        carouselId=str(written.record.id),
        templateId=args.template_id,
        style=written.style,
        slideCount=len(written.slides),
        slides=[CarouselSlide.model_validate(slide) for slide in written.slides],
        credits=CarouselCredits(estimated=CAROUSEL_CREDITS, used=CAROUSEL_CREDITS),
    )
