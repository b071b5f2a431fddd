"""Media: checked uploads into the store, who may use a key, a post's media and a generation's reference image;
with jobs whose output is a media file.

What a file is lives in `files`, where it is kept and how it is signed in `storage`, the runner of media jobs
in `jobs`; this service re-exports what other domains use of them.
"""

from __future__ import annotations

import asyncio
import uuid
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import PurePosixPath
from typing import TYPE_CHECKING, Any
from urllib.parse import urlsplit

from sqlalchemy import delete, select
from sqlalchemy.ext.asyncio import AsyncSession

from toolhost.db.session import end_unit_of_work
from toolhost.domains.media.files import check_type, decode_file_data, normalize_type, type_from_name
from toolhost.domains.media.jobs import JobOutput as JobOutput
from toolhost.domains.media.jobs import OutputRecorder as OutputRecorder
from toolhost.domains.media.jobs import media_runner as media_runner
from toolhost.domains.media.models import MediaObject
from toolhost.domains.media.storage import describe, record
from toolhost.domains.media.storage import own_media_key as own_media_key
from toolhost.domains.media.storage import signed_url as signed_url
from toolhost.domains.media.storage import store as store
from toolhost.domains.media.storage import strip_scheme as strip_scheme
from toolhost.platform.jobs import Job
from toolhost.platform.results import Conflict, NotFound, ValidationFailed
from toolhost.providers.fetch import Fetcher

if TYPE_CHECKING:
    from toolhost.config import Settings


@dataclass(frozen=True, slots=True)
class Upload:
    """A stored upload and its fresh signed URL."""

    media: MediaObject
    signed_url: str


async def save(
    *,
    session: AsyncSession,
    settings: Settings,
    account_id: uuid.UUID,
    project_id: uuid.UUID | None,
    data: bytes,
    content_type: str,
    file_name: str | None = None,
) -> Upload:
    """Stores an upload: its row commits first, then the file is written, so no file exists that no row names.

    A write that fails deletes the row again; a write whose caller is cancelled (the client went away) still
    finishes, so the committed row keeps its file.
    """
    stored = await describe(
        account_id=account_id,
        project_id=project_id,
        data=data,
        content_type=content_type,
        kind="uploads",
        file_name=file_name,
    )
    media = await record(session=session, stored=stored)
    await end_unit_of_work(session)
    try:
        await asyncio.shield(store(settings).put(stored.key, data))
    except Exception:
        await session.execute(delete(MediaObject).where(MediaObject.id == media.id))
        await end_unit_of_work(session)
        raise
    return Upload(media=media, signed_url=signed_url(settings, stored.key))


async def upload(
    *,
    session: AsyncSession,
    settings: Settings,
    fetcher: Fetcher,
    account_id: uuid.UUID,
    project_id: uuid.UUID | None,
    source: str | None,
    file_data: str | None,
    file_name: str | None,
    content_type: str | None,
) -> Upload:
    """upload_media: base64 or URL in, checked against its declared type, stored under a new key."""
    if (source is None) == (file_data is None):
        raise ValidationFailed(
            "give exactly one of source or file_data",
            field_errors=[{"path": "source", "message": "exactly one of source / file_data"}],
        )
    if file_name is not None and PurePosixPath(file_name.replace("\\", "/")).name != file_name:
        raise ValidationFailed(
            "file_name must be a base name, without directories",
            field_errors=[{"path": "file_name", "message": "base name only"}],
        )
    declared = normalize_type(content_type)
    if file_data is not None:
        data, data_url_type = decode_file_data(file_data, max_bytes=settings.media.max_upload_bytes)
        declared = declared or normalize_type(data_url_type) or type_from_name(file_name)
    else:
        assert source is not None
        if not source.lower().startswith(("http://", "https://")):
            raise ValidationFailed(
                "source must be an http(s) URL; local files can only be uploaded with the CLI",
                field_errors=[{"path": "source", "message": "not an http(s) URL"}],
            )
        await end_unit_of_work(session)
        response = (await fetcher.get(source, max_bytes=settings.media.max_fetch_bytes)).ensure_success()
        data = response.content
        file_name = file_name or PurePosixPath(urlsplit(response.url).path).name or None
        declared = declared or normalize_type(response.content_type) or type_from_name(file_name)
        if declared == "application/octet-stream":
            declared = type_from_name(file_name)
    checked = check_type(data, declared)
    return await save(
        session=session,
        settings=settings,
        account_id=account_id,
        project_id=project_id,
        data=data,
        content_type=checked,
        file_name=file_name,
    )


async def find(
    *,
    session: AsyncSession,
    key: str,
    account_id: uuid.UUID,
    accessible_project_ids: Sequence[uuid.UUID],
) -> MediaObject:
    """The media object of a key the caller may use; anything else (another tenant's key) is not_found."""
    media = await session.scalar(select(MediaObject).where(MediaObject.key == strip_scheme(key)))
    if media is None or media.awaiting_completion or not _accessible(media, account_id, accessible_project_ids):
        raise NotFound("no media with this key in your projects", recover_with="upload it with upload_media")
    return media


def _accessible(media: MediaObject, account_id: uuid.UUID, accessible_project_ids: Sequence[uuid.UUID]) -> bool:
    if media.project_id is not None:
        return media.project_id in accessible_project_ids
    return media.account_id == account_id


async def job_output(
    *,
    session: AsyncSession,
    job_id: uuid.UUID,
    accessible_project_ids: Sequence[uuid.UUID],
) -> MediaObject:
    """The primary output of a completed job of the caller's projects."""
    job = await session.get(Job, job_id)
    if job is None or job.project_id not in accessible_project_ids:
        raise NotFound("no job with this id in your projects", recover_with="check the id with check_status")
    if job.status != "completed":
        raise Conflict(
            f"the job is {job.status}; its output is not ready",
            current_status=job.status,
            recover_with="poll check_status until the job is completed",
        )
    key = (job.output or {}).get("primary")
    media = await session.scalar(select(MediaObject).where(MediaObject.key == key)) if key else None
    if media is None:
        raise NotFound("this job has no media output")
    return media


async def resolve_image_reference(
    *,
    session: AsyncSession,
    settings: Settings,
    account_id: uuid.UUID,
    accessible_project_ids: Sequence[uuid.UUID],
    image_url: str,
) -> dict[str, str]:
    """Where a generation's reference image comes from, as its job input keeps it: `{key}`, media the caller may
    use, or `{url}`, an external URL that passes §1.14."""
    value = image_url.strip()
    key = None
    if not value.lower().startswith(("http://", "https://")):
        key = strip_scheme(value)
    else:
        key = own_media_key(settings, value)
    if key is not None:
        media = await find(
            session=session, key=key, account_id=account_id, accessible_project_ids=accessible_project_ids
        )
        if not media.content_type.startswith("image/"):
            raise ValidationFailed(
                f"the reference {media.key} is {media.content_type}, not an image",
                field_errors=[{"path": "image_url", "message": "not an image"}],
            )
        return {"key": media.key}
    await Fetcher(settings.fetch).check_url(value)
    return {"url": value}


async def read_reference(settings: Settings, reference: dict[str, str]) -> bytes:
    """The bytes of a reference resolve_image_reference made: from the store, or fetched."""
    if "key" in reference:
        return await store(settings).read(reference["key"])
    response = await Fetcher(settings.fetch).get(reference["url"], max_bytes=settings.media.max_fetch_bytes)
    return response.ensure_success().content


@dataclass
class ResolvedMedia:
    """Media of a post: stored entries ({r2_key, content_type}) or external https URLs ({url}), and what is
    known of each for the platforms' media rules (nothing of a URL toolhost did not fetch)."""

    entries: list[dict[str, Any]] = field(default_factory=list)
    names: list[str] = field(default_factory=list)
    known: list[MediaObject | None] = field(default_factory=list)


async def resolve_references(
    *,
    session: AsyncSession,
    settings: Settings,
    fetcher: Fetcher,
    account_id: uuid.UUID,
    project_id: uuid.UUID,
    accessible_project_ids: Sequence[uuid.UUID],
    urls: Sequence[str],
    keys: Sequence[str],
    job_ids: Sequence[str],
    auto_rehost: bool,
) -> ResolvedMedia:
    """Checks every media reference of a post; URLs are rehosted into the store unless auto_rehost."""
    media = ResolvedMedia()
    for key in keys:
        stored = await find(
            session=session, key=key, account_id=account_id, accessible_project_ids=accessible_project_ids
        )
        media.entries.append({"r2_key": stored.key, "content_type": stored.content_type})
        media.names.append(stored.key)
        media.known.append(stored)
    for job_id in job_ids:
        try:
            parsed = uuid.UUID(job_id)
        except ValueError as error:
            raise NotFound(f"No job found with ID {job_id}") from error
        job = await session.get(Job, parsed)
        if job is None or job.project_id not in accessible_project_ids:
            raise NotFound(f"No job found with ID {job_id}")
        if job.status != "completed":
            raise ValidationFailed(
                f"job {job_id} is {job.status}; poll check_status first",
                recover_with="poll check_status until the job is completed",
                current_status=job.status,
            )
        stored = await job_output(session=session, job_id=parsed, accessible_project_ids=accessible_project_ids)
        media.entries.append({"r2_key": stored.key, "content_type": stored.content_type})
        media.names.append(stored.key)
        media.known.append(stored)
    for index, url in enumerate(urls):
        path = "media_url" if len(urls) == 1 else f"media_urls.{index}"
        if auto_rehost:
            rehosted = await upload(
                session=session,
                settings=settings,
                fetcher=fetcher,
                account_id=account_id,
                project_id=project_id,
                source=url,
                file_data=None,
                file_name=None,
                content_type=None,
            )
            media.entries.append({"r2_key": rehosted.media.key, "content_type": rehosted.media.content_type})
            media.known.append(rehosted.media)
        else:
            if not url.lower().startswith("https://"):
                raise ValidationFailed(
                    "media URLs handed to a platform must be https (or set auto_rehost)",
                    field_errors=[{"path": path, "message": "not https"}],
                )
            await end_unit_of_work(session)
            await fetcher.check_url(url, https_only=True)
            media.entries.append({"url": url})
            media.known.append(None)
        media.names.append(url)
    return media
