"""generate_image: the model chosen at enqueue, and the `image` job runner of the builtin model."""

from __future__ import annotations

import asyncio
import io
import logging
import uuid
from typing import TYPE_CHECKING, Any

from PIL import Image

from toolhost.domains.brand import service as brand_service
from toolhost.domains.content import images, service, slides
from toolhost.domains.media import service as media_service
from toolhost.platform.jobs import JobRun, JobType
from toolhost.platform.results import ToolError, ValidationFailed
from toolhost.providers import graphics
from toolhost.providers.fetch import Fetcher

if TYPE_CHECKING:
    from toolhost.config import Settings

logger = logging.getLogger(__name__)

BUILTIN = "builtin"
ESTIMATED_SECONDS = 5
LOGO_BYTES = 5 * 1024 * 1024


def select_model(settings: Settings, requested: str | None) -> str:
    """The image model to use: the builtin renderer, directly or through an operator's alias."""
    if requested is None:
        return BUILTIN
    resolved = settings.providers.model_aliases.get(requested, requested)
    if resolved != BUILTIN:
        raise ValidationFailed(
            f"image model {requested!r} is not configured",
            recover_with="omit model to use builtin, or ask the operator to configure an image provider",
            available_models=[BUILTIN],
            field_errors=[{"path": "model", "message": "not a configured image model"}],
        )
    return BUILTIN


async def _logo(run: JobRun, logo_url: Any, project_id: uuid.UUID | None = None) -> Image.Image | None:
    """The profile's logo as pixels, best effort: an unreadable or vector logo falls back to the wordmark.

    project_id is the project whose brand it is (a carousel may take its visuals from another project)."""
    if not isinstance(logo_url, str) or not logo_url.strip():
        return None
    try:
        if (
            logo_url.lower().startswith(("http://", "https://"))
            and media_service.own_media_key(run.settings, logo_url) is None
        ):
            response = await Fetcher(run.settings.fetch).get(logo_url, max_bytes=LOGO_BYTES, timeout=10)
            data = response.ensure_success().content
        else:
            key = media_service.own_media_key(run.settings, logo_url) or media_service.strip_scheme(logo_url)
            async with run.session_factory() as session:
                media = await media_service.find(
                    session=session,
                    key=key,
                    account_id=run.account_id,
                    accessible_project_ids=[project_id or run.project_id],
                )
            data = await media_service.store(run.settings).read(media.key)
        return await asyncio.to_thread(graphics.open_reference, data)
    except (ToolError, ValueError, OSError) as error:
        logger.info("logo of project %s not used: %s", run.project_id, getattr(error, "message", error))
        return None


async def run(job: JobRun) -> media_service.JobOutput:
    """Renders an `image` job with the builtin model: brand look, reference image, PNG at the catalogue size."""
    if job.job_input.get("slide") is not None:
        return await run_slide(job)
    prompt = str(job.job_input["prompt"])
    aspect_ratio = str(job.job_input.get("aspect_ratio") or "1:1")
    async with job.session_factory() as session:
        runtime = await brand_service.get_runtime(session=session, project_id=job.project_id)
    await job.report(10)
    reference = None
    if job.job_input.get("reference"):
        data = await media_service.read_reference(job.settings, job.job_input["reference"])
        reference = await asyncio.to_thread(graphics.open_reference, data)
    logo = await _logo(job, ((runtime or {}).get("visual") or {}).get("logoUrl"))
    await job.report(30)
    look = graphics.brand_look(runtime, logo)
    png = await asyncio.to_thread(
        images.render, prompt, aspect_ratio=aspect_ratio, look=look, reference=reference, checkpoint=job.checkpoint
    )
    await job.report(90)
    width, height = Image.open(io.BytesIO(png)).size
    return media_service.JobOutput(
        data=png,
        content_type="image/png",
        model=BUILTIN,
        details={"width": width, "height": height, "aspect_ratio": aspect_ratio},
        also_record=service.generated_content("image"),
    )


async def run_slide(job: JobRun) -> media_service.JobOutput:
    """Renders one create_carousel slide: typeset in its visual-gate layout, in the brand of `brand_project_id`."""
    spec = job.job_input
    brand_project = uuid.UUID(str(spec.get("brand_project_id") or job.project_id))
    async with job.session_factory() as session:
        runtime = await brand_service.get_runtime(session=session, project_id=brand_project)
    await job.report(10)
    logo = await _logo(job, ((runtime or {}).get("visual") or {}).get("logoUrl"), brand_project)
    await job.report(30)
    slide = dict(spec["slide"])
    layout, fields = slides.typeset(
        slide,
        position=int(spec["position"]),
        count=int(spec["count"]),
        visual_style=str(spec["visual_style"]),
        cta_url=spec.get("cta_url"),
    )
    emphasis = frozenset(str(word).lower() for word in slide.get("emphasisWords") or [] if isinstance(word, str))
    png = await asyncio.to_thread(
        slides.render,
        fields,
        aspect_ratio=str(spec["aspect_ratio"]),
        look=graphics.brand_look(runtime, logo),
        visual_style=str(spec["visual_style"]),
        emphasis=emphasis,
        checkpoint=job.checkpoint,
    )
    await job.report(90)
    width, height = Image.open(io.BytesIO(png)).size
    return media_service.JobOutput(
        data=png,
        content_type="image/png",
        model=BUILTIN,
        details={
            "width": width,
            "height": height,
            "aspect_ratio": spec["aspect_ratio"],
            "carousel_id": spec.get("carousel_id"),
            "slide_number": slide.get("slideNumber"),
            "layout": layout,
            # What was drawn, line by line (the gate's prediction for the slide text, plus the CTA button).
            "fields": [{"field": field.name, "lines": field.lines} for field in fields],
        },
    )


# Carousel slides are image jobs too: `run` hands a job with a slide to run_slide.
JOB_TYPES = (JobType(name="image", run=media_service.media_runner(run)),)
