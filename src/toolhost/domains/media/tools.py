"""The media tools: upload_media and get_media_url (CATALOG.md §3)."""

from __future__ import annotations

import uuid

from toolhost.domains.media import service
from toolhost.domains.media.schemas import GetMediaUrlIn, GetMediaUrlOut, UploadMediaIn, UploadMediaOut
from toolhost.platform import scopes
from toolhost.platform.context import ToolContext
from toolhost.platform.registry import UUID_PATTERN, tool
from toolhost.platform.results import ValidationFailed
from toolhost.providers.fetch import Fetcher


@tool(module="media", scope=scopes.WRITE, credits=0, project="optional", text_shape="bare", category="upload")
async def upload_media(ctx: ToolContext, args: UploadMediaIn) -> UploadMediaOut:
    """Stores an image, video, audio or HTML file in toolhost's media store and returns its r2_key.

    Give exactly one of file_data (base64, at most 10 MB decoded) or source (an http(s) URL, fetched safely).
    The declared type (content_type, the data: prefix or file_name's extension) must match the bytes. Pass the
    r2_key to schedule_post; get_media_url signs a fresh URL later.
    """
    upload = await service.upload(
        session=ctx.session,
        settings=ctx.settings,
        fetcher=Fetcher(ctx.settings.fetch),
        account_id=ctx.principal.account_id,
        project_id=ctx.project.id if ctx.project else None,
        source=args.source,
        file_data=args.file_data,
        file_name=args.file_name,
        content_type=args.content_type,
    )
    return UploadMediaOut(
        r2_key=upload.media.key,
        signed_url=upload.signed_url,
        size=upload.media.size,
        content_type=upload.media.content_type,
        expires_in=ctx.settings.media.url_ttl_seconds,
    )


@tool(
    module="media",
    scope=scopes.READ,
    credits=0,
    read_only=True,
    idempotent=True,
    project="optional",
    text_shape="bare",
    polling=True,
)
async def get_media_url(ctx: ToolContext, args: GetMediaUrlIn) -> GetMediaUrlOut:
    """Signs a fresh, expiring URL for a stored media key (or a completed job's main output).

    Use it when an earlier signed URL expired. A bare UUID as r2_key is taken as a job id; a job that is not
    completed answers conflict with its current status (poll check_status).
    """
    if (args.r2_key is None) == (args.job_id is None):
        raise ValidationFailed(
            "give exactly one of r2_key or job_id",
            field_errors=[{"path": "r2_key", "message": "exactly one of r2_key / job_id"}],
        )
    job_id = args.job_id or (args.r2_key if args.r2_key and UUID_PATTERN.match(args.r2_key) else None)
    if job_id is not None:
        media = await service.job_output(
            session=ctx.session, job_id=uuid.UUID(job_id), accessible_project_ids=ctx.accessible_project_ids
        )
    else:
        assert args.r2_key is not None
        media = await service.find(
            session=ctx.session,
            key=args.r2_key,
            account_id=ctx.principal.account_id,
            accessible_project_ids=ctx.accessible_project_ids,
        )
    return GetMediaUrlOut(
        signed_url=service.signed_url(ctx.settings, media.key),
        r2_key=media.key,
        job_id=job_id,
        expires_in=ctx.settings.media.url_ttl_seconds,
    )
