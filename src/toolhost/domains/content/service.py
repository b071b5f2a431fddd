"""Generation services: choose the model, read the brand, generate without banned terms, store the record."""

from __future__ import annotations

import json
import math
import uuid
from dataclasses import dataclass
from typing import Any

from sqlalchemy import select
from sqlalchemy.ext.asyncio import AsyncSession

from toolhost.config import Settings
from toolhost.db.session import end_unit_of_work
from toolhost.domains.brand import service as brand_service
from toolhost.domains.content import layouts

# The slide layouts, which quality's visual gate predicts slides from.
from toolhost.domains.content.layouts import LAYOUTS as LAYOUTS
from toolhost.domains.content.layouts import layout_for as layout_for
from toolhost.domains.content.layouts import line_count as line_count
from toolhost.domains.content.layouts import slide_fields as slide_fields
from toolhost.domains.content.models import ContentRecord
from toolhost.domains.media import service as media_service
from toolhost.platform.jobs import JobRun
from toolhost.platform.results import ValidationFailed
from toolhost.providers import platforms as social_platforms
from toolhost.providers.text import BUILTIN, provider_for, select_model, without_blocked_terms
from toolhost.providers.text.base import (
    AdaptRequest,
    BrandContext,
    CarouselRequest,
    ContentType,
    HookFamily,
    PostRequest,
    StoryboardRequest,
)
from toolhost.providers.text.brief import unusable

SHORT_FORM = frozenset({"tiktok", "instagram-reels", "youtube-shorts"})
SHOTS = ("CU", "MS", "FS", "WS")
MOVEMENTS = ("static", "zoom-in", "zoom-out", "pan-left", "pan-right", "tracking", "tilt-up", "tilt-down")
NO_TEXT = "No on-screen text."
PROMPT_CONTEXT_CHARS = 2000


async def load_brand(session: AsyncSession, project_id: uuid.UUID, brand_voice: str | None = None) -> BrandContext:
    """The project's brand as the providers see it (empty without a profile), `brand_voice` as its tone."""
    runtime = await brand_service.get_runtime(session=session, project_id=project_id)
    return BrandContext.from_runtime(runtime).with_voice(brand_voice)


# --- prompt context ---------------------------------------------------------------------------------------


def pillar_sentence(brand: BrandContext) -> str:
    """The brand's content pillars as one prompt sentence ("" without pillars): the fallback without history."""
    if not brand.content_pillars:
        return ""
    pillars = ", ".join(
        f"{name} ({round(weight * 100)}%)" if weight else name for name, weight in brand.content_pillars
    )
    return f"No performance history yet; write to the brand's content pillars: {pillars}."


async def prompt_context(*, session: AsyncSession, project_id: uuid.UUID) -> str:
    """The brand's pillars for a generation prompt, up to 2,000 characters.

    What the project's measured posts say (ideation's `ideation_context`) sits above content, so callers
    that have it pass it instead.
    """
    brand = BrandContext.from_runtime(await brand_service.get_runtime(session=session, project_id=project_id))
    return pillar_sentence(brand)[:PROMPT_CONTEXT_CHARS]


LINK_RECOVERY = "call extract_url_content on the link, then pass what it found (or describe the topic) here"


def check_writable(
    text: str, *, model: str, field: str, takes_model: bool = False, link_recovery: str = LINK_RECOVERY
) -> None:
    """Refuses, before anything is spent, a request no writer can work from: only a link, no words, or (for
    the built-in writer, which writes English) another language. Says what to do instead: `takes_model`
    says whether the tool has a `model` argument to name a chat model with."""
    problem = unusable(text, english_only=model == BUILTIN, noun=field)
    if not problem:
        return
    if "link" in problem:
        recover = link_recovery
    elif "English" in problem:
        recover = "write it in English, or " + (
            "pass `model` naming a configured chat model (README: Model-written text)"
            if takes_model
            else "have an operator make a chat model the default (TOOLHOST_PROVIDERS__TEXT_DEFAULT, README: "
            "Model-written text)"
        )
    else:
        recover = "describe in words what it is about"
    raise ValidationFailed(problem, field_errors=[{"path": field, "message": problem}], recover_with=recover)


async def _store(session: AsyncSession, **values: Any) -> ContentRecord:
    record = ContentRecord(id=uuid.uuid4(), **values)
    session.add(record)
    await session.flush()
    return record


async def recent_texts(session: AsyncSession, *, project_id: uuid.UUID, limit: int = 30) -> list[str]:
    """The project's most recent generated texts, newest first (novelty compares against them)."""
    rows = await session.scalars(
        select(ContentRecord.text)
        .where(ContentRecord.project_id == project_id, ContentRecord.text.is_not(None))
        .order_by(ContentRecord.created_at.desc())
        .limit(limit)
    )
    return [text for text in rows if text]


async def generate(
    *,
    session: AsyncSession,
    settings: Settings,
    project_id: uuid.UUID,
    prompt: str,
    content_type: ContentType,
    platform: str | None,
    brand_voice: str | None,
    model: str | None,
    ideation_context: str = "",
) -> ContentRecord:
    """generate_content: a caption, hook, script or blog post in the brand's voice, stored as a record."""
    chosen = select_model(settings, model)
    check_writable(prompt, model=chosen, field="prompt", takes_model=True)
    brand = await load_brand(session, project_id, brand_voice)
    provider = provider_for(settings, chosen)
    request = PostRequest(
        prompt=prompt,
        content_type=content_type,
        brand=brand,
        platform=platform,
        ideation_context=ideation_context,
    )
    await end_unit_of_work(session)
    text = await without_blocked_terms(
        lambda: provider.write(request),
        brand.blocked_terms(platform),
        provider=provider.name,
        regenerate=chosen != "builtin",
    )
    return await _store(
        session,
        project_id=project_id,
        kind="text",
        content_type=content_type,
        platform=platform,
        model=chosen,
        prompt=prompt,
        text=text,
    )


async def adapt(
    *,
    session: AsyncSession,
    settings: Settings,
    project_id: uuid.UUID,
    content: str,
    source_platform: str | None,
    target_platform: str,
    brand_voice: str | None,
    model: str | None,
) -> ContentRecord:
    """adapt_content: the text rewritten for the target platform's limit, hashtags and voice."""
    chosen = select_model(settings, model)
    check_writable(content, model=chosen, field="content", takes_model=True)
    brand = await load_brand(session, project_id, brand_voice)
    provider = provider_for(settings, chosen)
    request = AdaptRequest(
        content=content, target_platform=target_platform, brand=brand, source_platform=source_platform
    )
    await end_unit_of_work(session)
    text = await without_blocked_terms(
        lambda: provider.adapt(request),
        brand.blocked_terms(target_platform),
        provider=provider.name,
        regenerate=chosen != "builtin",
    )
    return await _store(
        session,
        project_id=project_id,
        kind="adaptation",
        content_type=None,
        platform=target_platform,
        model=chosen,
        prompt=content,
        text=text,
    )


def _storyboard_brand(brand_context: str | None, brand: BrandContext) -> tuple[BrandContext, str]:
    """The brand a storyboard uses: the JSON keys of `brand_context`, its text verbatim, or the runtime."""
    if not brand_context:
        return brand, ""
    try:
        parsed = json.loads(brand_context)
    except ValueError:
        return brand, brand_context.strip()
    if not isinstance(parsed, dict):
        return brand, brand_context.strip()
    runtime = {
        "name": brand.name,
        "voice": {"tone": parsed.get("voiceTone") or list(brand.tone)},
        "messaging": {"contentPillars": parsed.get("contentPillars") or []},
        "audience": parsed.get("targetAudience") if isinstance(parsed.get("targetAudience"), dict) else {},
    }
    notes = []
    if parsed.get("visualStyle"):
        notes.append(f"visual style {parsed['visualStyle']}")
    if parsed.get("colors"):
        colors = parsed["colors"]
        shown = ", ".join(str(value) for value in colors.values()) if isinstance(colors, dict) else str(colors)
        notes.append(f"colours {shown}")
    if isinstance(parsed.get("targetAudience"), str):
        notes.append(f"for {parsed['targetAudience']}")
    return BrandContext.from_runtime(runtime), "; ".join(notes)


def normalize_storyboard(board: dict[str, Any], *, duration: float, scenes: int) -> dict[str, Any]:
    """Enforces the storyboard rules whatever the provider wrote: frame count, exact durations, shot variety,
    the character description repeated word for word in each image prompt, and no on-screen text.

    A storyboard is the provider's JSON document (the record stores it, the tool returns it); fields this does
    not know pass through."""
    frames = list(board.get("frames") or [])[:scenes]
    while len(frames) < scenes:
        frames.append({"caption": "", "voiceover": "", "imagePrompt": "", "videoPrompt": "", "notes": ""})
    character = str(board.get("characterDescription") or "The same presenter throughout.").strip()
    weights = [max(float(frame.get("duration") or 0), 0.1) for frame in frames]
    tenths = round(duration * 10)
    parts = [round(weight * 10) for weight in weights]
    if sum(parts) != tenths or min(parts) < 1:
        parts = [max(1, math.floor(tenths * weight / sum(weights))) for weight in weights]
        parts[parts.index(max(parts))] += tenths - sum(parts)
    previous = None
    for index, frame in enumerate(frames):
        shot = frame.get("shotType") if frame.get("shotType") in SHOTS else SHOTS[index % len(SHOTS)]
        if shot == previous:
            shot = next(option for option in SHOTS if option != previous)
        previous = shot
        prompt = str(frame.get("imagePrompt") or frame.get("caption") or "").strip()
        if character not in prompt:
            prompt = f"{character} {prompt}".strip()
        if NO_TEXT.lower() not in prompt.lower():
            prompt = f"{prompt} {NO_TEXT}"
        frame.update(
            id=f"frame-{index + 1}",
            frameNumber=index + 1,
            shotType=shot,
            cameraMovement=frame.get("cameraMovement") if frame.get("cameraMovement") in MOVEMENTS else "static",
            duration=parts[index] / 10,
            imagePrompt=prompt,
            videoPrompt=str(frame.get("videoPrompt") or frame.get("caption") or ""),
            caption=str(frame.get("caption") or ""),
            voiceover=str(frame.get("voiceover") or frame.get("caption") or ""),
            notes=str(frame.get("notes") or ""),
        )
    return {**board, "frames": frames, "characterDescription": character, "totalDuration": duration}


@dataclass(frozen=True, slots=True)
class Storyboard:
    """create_storyboard's result: the stored record and the board it stores.

    The frames stay the provider's JSON objects, normalised (fields the rules do not know pass through, and the
    record stores them as they are)."""

    record: ContentRecord
    title: str
    total_duration: float
    aspect_ratio: str
    character_description: str
    frames: list[dict[str, Any]]


async def storyboard(
    *,
    session: AsyncSession,
    settings: Settings,
    project_id: uuid.UUID,
    concept: str,
    brand_context: str | None,
    platform: str,
    target_duration: float | None,
    num_scenes: float | None,
    style: str | None,
) -> Storyboard:
    """create_storyboard: timed frames, hook first and CTA last, stored as a record."""
    check_writable(concept, model=select_model(settings, None), field="concept")
    short_form = platform in SHORT_FORM
    duration = float(target_duration if target_duration is not None else (30 if short_form else 60))
    scenes = int(round(num_scenes)) if num_scenes is not None else (7 if short_form else 10)
    chosen = select_model(settings, None)
    runtime_brand = await load_brand(session, project_id)
    brand, notes = _storyboard_brand(brand_context, runtime_brand)
    provider = provider_for(settings, chosen)
    request = StoryboardRequest(
        concept=concept,
        platform=platform,
        duration=duration,
        scenes=scenes,
        brand=brand,
        style=style or "",
        brand_notes=notes,
        short_form=short_form,
    )
    await end_unit_of_work(session)
    board = await without_blocked_terms(
        lambda: provider.storyboard(request),
        runtime_brand.blocked_terms(),
        provider=provider.name,
        regenerate=chosen != "builtin",
    )
    board = normalize_storyboard(board, duration=duration, scenes=scenes)
    record = await _store(
        session,
        project_id=project_id,
        kind="storyboard",
        content_type=None,
        platform=platform,
        model=chosen,
        prompt=concept,
        text=None,
        data=board,
    )
    return Storyboard(
        record=record,
        title=board["title"],
        total_duration=board["totalDuration"],
        aspect_ratio=board["aspectRatio"],
        character_description=board["characterDescription"],
        frames=board["frames"],
    )


@dataclass(frozen=True, slots=True)
class WrittenCarousel:
    """generate_carousel's result: the stored record, its slides and the style they were written in.

    A slide stays the JSON object the provider wrote (headline, body, bullets, ctaText, ...), fitted to its
    layout and numbered, as the record stores it."""

    record: ContentRecord
    slides: list[dict[str, Any]]
    style: str


async def carousel(
    *,
    session: AsyncSession,
    settings: Settings,
    project_id: uuid.UUID,
    topic: str,
    template_id: str,
    slide_count: int,
    style: str | None,
    hook: str | None,
    hook_family: HookFamily | None,
    cta_text: str | None,
    cta_url: str | None,
    tone: str | None,
    constraints: str | None,
    platform: str | None,
    aspect_ratio: str,
) -> WrittenCarousel:
    """generate_carousel: slide text for the template, stored."""
    resolved_style = style or ("hormozi" if template_id == "hormozi-authority" else "professional")
    rules_platform = social_platforms.canonical_name(platform) if platform else platform
    chosen = select_model(settings, None)
    check_writable(topic, model=chosen, field="topic")
    brand = await load_brand(session, project_id, tone)
    provider = provider_for(settings, chosen)
    request = CarouselRequest(
        topic=topic,
        template_id=template_id,
        slide_count=slide_count,
        brand=brand,
        style=resolved_style,
        hook=hook,
        hook_family=hook_family,
        cta_text=cta_text,
        cta_url=cta_url,
        tone=tone or "",
        constraints=constraints or "",
        platform=rules_platform,
    )
    await end_unit_of_work(session)
    slides = await without_blocked_terms(
        lambda: provider.carousel(request),
        brand.blocked_terms(rules_platform),
        provider=provider.name,
        regenerate=chosen != "builtin",
    )
    slides = slides[:slide_count]
    # Every slide's text fits the visual-gate layout it renders in (CATALOG.md §2); a given hook stays verbatim.
    visual_style = layouts.VISUAL_STYLE_OF_CAROUSEL_STYLE[resolved_style]
    layouts.fit_slides(slides, visual_style=visual_style, keep_first_headline=bool(hook))
    for number, slide in enumerate(slides, start=1):
        slide["slideNumber"] = number
    if slides and cta_text:
        slides[-1]["ctaText"] = cta_text
    record = await _store(
        session,
        project_id=project_id,
        kind="carousel",
        content_type=None,
        platform=platform,
        model=chosen,
        prompt=topic,
        text=None,
        data={
            "templateId": template_id,
            "style": resolved_style,
            "aspectRatio": aspect_ratio,
            "slides": slides,
        },
    )
    return WrittenCarousel(record=record, slides=slides, style=resolved_style)


def generated_content(kind: str) -> media_service.OutputRecorder:
    """What a generation job keeps beside its file: a content record of `kind` with its prompt, job and key."""

    def record(session: AsyncSession, job: JobRun, output: media_service.JobOutput, key: str) -> None:
        session.add(
            ContentRecord(
                project_id=job.project_id,
                kind=kind,
                model=output.model,
                prompt=str(job.job_input.get("prompt") or ""),
                data={"job_id": str(job.job_id), "r2_key": key, **output.details},
            )
        )

    return record
