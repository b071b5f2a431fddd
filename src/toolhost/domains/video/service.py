"""The video module's logic: props parsing and validation, media-key checks, and enqueueing the render jobs."""

from __future__ import annotations

import json
import uuid
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

from sqlalchemy.ext.asyncio import AsyncSession

from toolhost.domains.content.models import ContentRecord
from toolhost.domains.media import service as media_service
from toolhost.domains.video.compositions import COMPOSITIONS, SIZE_OF_ASPECT, Composition, field_errors, seconds
from toolhost.platform import jobs as platform_jobs
from toolhost.platform.jobs import Job
from toolhost.platform.results import ValidationFailed

# Props keys naming media, and what each must hold.
IMAGE_OR_VIDEO = ("image/", "video/")
MEDIA_PROPS: dict[str, tuple[str, ...]] = {
    "background_media_key": IMAGE_OR_VIDEO,
    "audio_media_key": ("audio/",),
    "voiceover_media_key": ("audio/",),
    "logo_media_key": ("image/",),
}


def composition(composition_id: str) -> Composition:
    """A composition by id, or validation_error listing the 15."""
    found = COMPOSITIONS.get(composition_id)
    if found is None:
        raise ValidationFailed(
            f"unknown composition {composition_id!r}; use one of: {', '.join(COMPOSITIONS)}",
            recover_with="call list_compositions",
            field_errors=[{"path": "composition_id", "message": "not a composition id"}],
        )
    return found


def parse_props(text: str | None, *, path: str) -> dict[str, Any]:
    """A props argument (a JSON object string) as a dict; bad JSON or a non-object is validation_error.

    Props are free-form JSON that each composition's props_schema checks (`check_props`)."""
    if text is None or not text.strip():
        return {}
    try:
        value = json.loads(text)
    except json.JSONDecodeError as error:
        raise ValidationFailed(
            f"{path} is not valid JSON: {error.msg} at line {error.lineno} column {error.colno}",
            field_errors=[{"path": path, "message": "invalid JSON"}],
        ) from error
    if not isinstance(value, dict):
        raise ValidationFailed(
            f"{path} must be a JSON object", field_errors=[{"path": path, "message": "not an object"}]
        )
    return value


def check_props(chosen: Composition, props: dict[str, Any], *, path: str) -> dict[str, Any]:
    """The props, or validation_error with every schema violation's path."""
    errors = field_errors(chosen.schema, props, prefix=path)
    if errors:
        raise ValidationFailed(
            f"{path} do not match {chosen.id}'s props_schema: {errors[0]['path']}: {errors[0]['message']}",
            recover_with="see props_schema in list_compositions",
            field_errors=errors,
        )
    return props


def media_references(props: dict[str, Any], *, path: str) -> list[tuple[str, str, tuple[str, ...]]]:
    """(argument path, key, accepted type prefixes) of every media key the props name."""
    found = []
    for name, accepted in MEDIA_PROPS.items():
        if isinstance(props.get(name), str):
            found.append((f"{path}.{name}", props[name], accepted))
    for index, key in enumerate(props.get("image_media_keys") or []):
        found.append((f"{path}.image_media_keys[{index}]", key, ("image/",)))
    for number, key in (props.get("frame_media") or {}).items():
        found.append((f"{path}.frame_media.{number}", key, IMAGE_OR_VIDEO))
    return found


async def check_media(
    *,
    session: AsyncSession,
    props: dict[str, Any],
    path: str,
    account_id: uuid.UUID,
    accessible_project_ids: Sequence[uuid.UUID],
) -> dict[str, str]:
    """Key → content type of the props' media; another tenant's key is not_found, a wrong type validation_error."""
    types: dict[str, str] = {}
    for argument, key, accepted in media_references(props, path=path):
        media = await media_service.find(
            session=session, key=key, account_id=account_id, accessible_project_ids=accessible_project_ids
        )
        if not media.content_type.startswith(accepted):
            raise ValidationFailed(
                f"{argument} is {media.content_type}; it must be "
                + " or ".join(prefix.rstrip("/") for prefix in accepted),
                field_errors=[{"path": argument, "message": f"wrong media type {media.content_type}"}],
            )
        types[key] = media.content_type
    return types


@dataclass(frozen=True, slots=True)
class RenderPlan:
    """A checked render request: what to draw, how long, at which size, and what it costs."""

    composition: Composition
    props: dict[str, Any]
    size: tuple[int, int]
    output_format: str
    output_seconds: float

    @property
    def video_seconds(self) -> float:
        """The composition's own length with these props."""
        return seconds(self.composition.duration_in_frames(self.props))


def demo_plan(composition_id: str, output_format: str, props_text: str | None) -> RenderPlan:
    """render_demo_video's request: props merged over the sample props, at the composition's own size."""
    chosen = composition(composition_id)
    props = check_props(chosen, {**chosen.sample, **parse_props(props_text, path="props")}, path="props")
    length = seconds(chosen.duration_in_frames(props))
    return RenderPlan(
        chosen,
        props,
        (chosen.width, chosen.height),
        output_format,
        min(length, 15.0) if output_format == "gif" else length,
    )


def template_plan(composition_id: str, input_props: str, aspect_ratio: str) -> RenderPlan:
    """render_template_video's request: the caller's props at the requested aspect."""
    chosen = composition(composition_id)
    props = check_props(chosen, parse_props(input_props, path="input_props"), path="input_props")
    return RenderPlan(chosen, props, SIZE_OF_ASPECT[aspect_ratio], "mp4", seconds(chosen.duration_in_frames(props)))


async def enqueue_render(
    *,
    session: AsyncSession,
    plan: RenderPlan,
    job_type: str,
    tool_name: str,
    account_id: uuid.UUID,
    project_id: uuid.UUID,
    accessible_project_ids: Sequence[uuid.UUID],
    reserved_credits: int,
    path: str,
) -> tuple[Job, ContentRecord | None]:
    """A demo_render or template_render job (with its reservation), after checking the props' media keys."""
    media_types = await check_media(
        session=session,
        props=plan.props,
        path=path,
        account_id=account_id,
        accessible_project_ids=accessible_project_ids,
    )
    record = None
    if job_type == "template_render":
        record = ContentRecord(
            project_id=project_id,
            kind="render",
            model="builtin",
            prompt=plan.composition.id,
            data={"composition_id": plan.composition.id, "props": plan.props, "size": list(plan.size)},
        )
        session.add(record)
        await session.flush()
    job = await platform_jobs.enqueue(
        session=session,
        account_id=account_id,
        project_id=project_id,
        job_type=job_type,
        tool_name=tool_name,
        reserved_credits=reserved_credits,
        job_input={
            "model": "builtin",
            "composition_id": plan.composition.id,
            "props": plan.props,
            "width": plan.size[0],
            "height": plan.size[1],
            "output_format": plan.output_format,
            "media_types": media_types,
            "content_id": str(record.id) if record is not None else None,
        },
    )
    if record is not None:
        record.data = {**(record.data or {}), "job_id": str(job.id)}
    return job, record
