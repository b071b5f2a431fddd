"""Media logic: checked uploads into the store, signed expiring URLs, who may use a key, and a post's media."""

from __future__ import annotations

import asyncio
import base64
import binascii
import hashlib
import hmac
import re
import time
import uuid
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import PurePosixPath
from typing import TYPE_CHECKING, Any
from urllib.parse import quote, unquote, urlsplit

from sqlalchemy import delete, select, update
from sqlalchemy.ext.asyncio import AsyncSession, async_sessionmaker

from toolhost.db.base import utcnow
from toolhost.db.session import end_unit_of_work
from toolhost.domains.media.models import MediaObject
from toolhost.platform.jobs import Job
from toolhost.platform.results import Conflict, NotFound, ValidationFailed
from toolhost.providers.fetch import Fetcher
from toolhost.providers.media_facts import MediaFacts, measure
from toolhost.providers.media_store import LocalMediaStore, S3MediaStore

if TYPE_CHECKING:
    from toolhost.config import Settings
    from toolhost.keyring import KeyGeneration

EXTENSIONS = {
    "image/jpeg": "jpg",
    "image/png": "png",
    "image/gif": "gif",
    "image/webp": "webp",
    "video/mp4": "mp4",
    "video/webm": "webm",
    "video/quicktime": "mov",
    "audio/mpeg": "mp3",
    "audio/wav": "wav",
    "text/html": "html",
}
TYPES_BY_EXTENSION = {
    "png": "image/png",
    "jpg": "image/jpeg",
    "jpeg": "image/jpeg",
    "gif": "image/gif",
    "webp": "image/webp",
    "mp4": "video/mp4",
    "mov": "video/quicktime",
    "webm": "video/webm",
    "mp3": "audio/mpeg",
    "wav": "audio/wav",
    "html": "text/html",
    "htm": "text/html",
}
TYPE_ALIASES = {
    "image/jpg": "image/jpeg",
    "audio/x-wav": "audio/wav",
    "audio/wave": "audio/wav",
    "audio/mp3": "audio/mpeg",
}
BASE64_ALPHABET = re.compile(r"^[A-Za-z0-9+/]*={0,2}$")
DATA_URL_PREFIX = re.compile(r"^data:([\w.+-]+/[\w.+-]+)?(;[\w-]+=[\w-]+)*;base64,", re.IGNORECASE)
SCHEME_PREFIX = re.compile(r"^[a-zA-Z][a-zA-Z0-9+.-]*://")


def sniff(data: bytes) -> str | None:
    """The media type the bytes' signature shows (only the allowed types), or None."""
    head = data[:64]
    if head.startswith(b"\x89PNG\r\n\x1a\n"):
        return "image/png"
    if head.startswith(b"\xff\xd8\xff"):
        return "image/jpeg"
    if head[:6] in (b"GIF87a", b"GIF89a"):
        return "image/gif"
    if head[:4] == b"RIFF" and head[8:12] == b"WEBP":
        return "image/webp"
    if head[:4] == b"RIFF" and head[8:12] == b"WAVE":
        return "audio/wav"
    if head[4:8] == b"ftyp":
        return "video/quicktime" if head[8:12] == b"qt  " else "video/mp4"
    if head[:4] == b"\x1a\x45\xdf\xa3":
        return "video/webm"
    if head[:3] == b"ID3" or (len(head) > 1 and head[0] == 0xFF and head[1] & 0xE0 == 0xE0):
        return "audio/mpeg"
    text = data[:1024].lstrip(b"\xef\xbb\xbf \t\r\n").lower()
    if text.startswith((b"<!doctype html", b"<html", b"<!--", b"<head", b"<body")) or b"<html" in text:
        return "text/html"
    return None


def normalize_type(content_type: str | None) -> str | None:
    """A declared type lower-cased, without parameters, with common aliases mapped."""
    if not content_type:
        return None
    value = content_type.split(";", 1)[0].strip().lower()
    return TYPE_ALIASES.get(value, value)


def type_from_name(name: str | None) -> str | None:
    """The type a file name's extension means."""
    if not name or "." not in name:
        return None
    return TYPES_BY_EXTENSION.get(name.rsplit(".", 1)[1].lower())


def strip_scheme(key: str) -> str:
    """A key without a leading `<scheme>://` other than http(s) (r2://, s3://)."""
    match = SCHEME_PREFIX.match(key)
    if match and not key.lower().startswith(("http://", "https://")):
        return key[match.end() :]
    return key


def signature(generation: KeyGeneration, key: str, expires: int) -> str:
    """The `sig` of a media URL: HMAC-SHA256 over the key and its expiry, with a generation's media key."""
    return hmac.new(generation.media, f"{key}\n{expires}".encode(), hashlib.sha256).hexdigest()


def signed_url(settings: Settings, key: str, *, ttl: int | None = None) -> str:
    """A fresh URL of toolhost's media route for the key, valid `ttl` seconds, naming the key id that signed it."""
    expires = int(time.time()) + (ttl if ttl is not None else settings.media.url_ttl_seconds)
    generation = settings.keyring.current()
    sig = signature(generation, key, expires)
    return f"{settings.api_root}/media/{quote(key)}?exp={expires}&kid={generation.kid}&sig={sig}"


def own_media_key(settings: Settings, url: str) -> str | None:
    """The media key of one of toolhost's own media URLs (what signed_url makes), or None for any other URL."""
    parts, own = urlsplit(url), urlsplit(settings.api_root)
    if (parts.scheme, parts.netloc) != (own.scheme, own.netloc):
        return None
    prefix = f"{own.path.rstrip('/')}/media/"
    return unquote(parts.path[len(prefix) :]) if parts.path.startswith(prefix) else None


def signature_valid(settings: Settings, key: str, expires: str, kid: str, given: str) -> bool:
    """Whether a media URL's signature is genuine (by a key generation still held) and not expired."""
    if not expires.isdigit() or int(expires) < time.time():
        return False
    generation = settings.keyring.find(kid)
    return generation is not None and hmac.compare_digest(signature(generation, key, int(expires)), given)


_S3_STORES: dict[tuple[str | None, ...], S3MediaStore] = {}


def store(settings: Settings) -> LocalMediaStore | S3MediaStore:
    """The configured media store (an S3 client is built once per configuration: building one is slow)."""
    media = settings.media
    if media.store == "local":
        return LocalMediaStore(media.root)
    secret = media.s3_secret_access_key.get_secret_value() if media.s3_secret_access_key else None
    identity = (
        media.s3_bucket,
        media.s3_endpoint_url,
        media.s3_region,
        media.s3_access_key_id,
        secret,
        media.s3_addressing_style,
    )
    if identity not in _S3_STORES:
        _S3_STORES[identity] = S3MediaStore(
            bucket=str(media.s3_bucket),
            endpoint_url=media.s3_endpoint_url,
            region=media.s3_region,
            access_key_id=media.s3_access_key_id,
            secret_access_key=secret,
            addressing_style=media.s3_addressing_style,
        )
    return _S3_STORES[identity]


@dataclass(frozen=True, slots=True)
class Upload:
    """A stored upload and its fresh signed URL."""

    media: MediaObject
    signed_url: str


def decode_file_data(file_data: str, *, max_bytes: int) -> tuple[bytes, str | None]:
    """Decodes strict base64 (optionally a data: URL); returns the bytes and the data URL's type."""
    declared = None
    match = DATA_URL_PREFIX.match(file_data)
    if match:
        declared = match.group(1)
        file_data = file_data[match.end() :]
    compact = "".join(file_data.split())
    if not compact or not BASE64_ALPHABET.match(compact) or len(compact) % 4:
        raise ValidationFailed(
            "file_data is not base64 (alphabet A-Z a-z 0-9 + / =)",
            field_errors=[{"path": "file_data", "message": "not standard base64"}],
        )
    if len(compact) // 4 * 3 - compact.count("=") > max_bytes:
        raise ValidationFailed(
            f"file_data is larger than {max_bytes // (1024 * 1024)} MB decoded",
            field_errors=[{"path": "file_data", "message": "too large"}],
        )
    try:
        return base64.b64decode(compact, validate=True), declared
    except binascii.Error as error:
        raise ValidationFailed(
            "file_data is not valid base64", field_errors=[{"path": "file_data", "message": "not base64"}]
        ) from error


def check_type(data: bytes, declared: str | None) -> str:
    """The declared type when allowed and matched by the bytes; otherwise validation_error."""
    actual = sniff(data)
    if declared is None:
        raise ValidationFailed(
            "the media type is unknown: give content_type or a file_name with a known extension",
            field_errors=[{"path": "content_type", "message": "required"}],
        )
    if declared not in EXTENSIONS:
        raise ValidationFailed(
            f"media type {declared} is not allowed",
            allowed=sorted(EXTENSIONS),
            field_errors=[{"path": "content_type", "message": "type not allowed"}],
        )
    if actual != declared:
        raise ValidationFailed(
            f"the bytes are {actual or 'not a recognised media type'}, not the declared {declared}",
            field_errors=[{"path": "content_type", "message": "does not match the file's signature"}],
        )
    return declared


def new_key(*, project_id: uuid.UUID | None, account_id: uuid.UUID, kind: str, content_type: str) -> str:
    """A fresh key `projects/<id>/<kind>/<yyyy>/<mm>/<uuid>.<ext>` (or `accounts/<id>/…`)."""
    now = utcnow()
    owner = f"projects/{project_id}" if project_id else f"accounts/{account_id}"
    return f"{owner}/{kind}/{now:%Y}/{now:%m}/{uuid.uuid4()}.{EXTENSIONS[content_type]}"


@dataclass(frozen=True, slots=True)
class StoredBytes:
    """Bytes to keep under a new key, and what their row records (a key without a row is unusable)."""

    key: str
    account_id: uuid.UUID
    project_id: uuid.UUID | None
    kind: str
    content_type: str
    size: int
    sha256: str
    file_name: str | None = None
    facts: MediaFacts = field(default_factory=MediaFacts)


async def describe(
    *,
    account_id: uuid.UUID,
    project_id: uuid.UUID | None,
    data: bytes,
    content_type: str,
    kind: str,
    file_name: str | None = None,
) -> StoredBytes:
    """A fresh key for checked bytes, with the facts their row records (measured off the event loop)."""
    facts = await asyncio.to_thread(measure, data, content_type)
    return StoredBytes(
        key=new_key(project_id=project_id, account_id=account_id, kind=kind, content_type=content_type),
        account_id=account_id,
        project_id=project_id,
        kind=kind,
        content_type=content_type,
        size=len(data),
        sha256=hashlib.sha256(data).hexdigest(),
        file_name=file_name,
        facts=facts,
    )


async def put_job_output(
    *,
    session_factory: async_sessionmaker[AsyncSession],
    settings: Settings,
    job_id: uuid.UUID,
    account_id: uuid.UUID,
    project_id: uuid.UUID | None,
    data: bytes,
    content_type: str,
    kind: str,
) -> StoredBytes:
    """Stores a job's output: its row commits first (awaiting the job's completion), then the file is written.

    `complete_job_output` makes the key usable with the job's completion; `discard_job_output` takes row and file
    back when the completion does not happen. A process that dies in between leaves a row awaiting a completion
    that never comes, which the retention sweep removes with its file.
    """
    stored = await describe(
        account_id=account_id, project_id=project_id, data=data, content_type=content_type, kind=kind
    )
    async with session_factory() as session, session.begin():
        (await record(session=session, stored=stored, job_id=job_id)).awaiting_completion = True
    try:
        await asyncio.shield(store(settings).put(stored.key, data))
    except Exception:
        async with session_factory() as session, session.begin():
            await session.execute(delete(MediaObject).where(MediaObject.key == stored.key))
        raise
    return stored


async def complete_job_output(*, session: AsyncSession, key: str) -> None:
    """Makes a job's output usable, in the transaction of the job's completion."""
    await session.execute(update(MediaObject).where(MediaObject.key == key).values(awaiting_completion=False))


async def discard_job_output(
    *, session_factory: async_sessionmaker[AsyncSession], settings: Settings, key: str
) -> None:
    """Deletes a job output whose completion did not happen: the row first, so the key is never usable without its
    file; a file whose deletion fails afterwards is an orphan the retention sweep removes."""
    async with session_factory() as session, session.begin():
        await session.execute(delete(MediaObject).where(MediaObject.key == key))
    await store(settings).delete(key)


async def record(*, session: AsyncSession, stored: StoredBytes, job_id: uuid.UUID | None = None) -> MediaObject:
    """The row of stored bytes, in the caller's transaction."""
    media = MediaObject(
        key=stored.key,
        account_id=stored.account_id,
        project_id=stored.project_id,
        kind=stored.kind,
        content_type=stored.content_type,
        size=stored.size,
        sha256=stored.sha256,
        file_name=stored.file_name,
        job_id=job_id,
        width=stored.facts.width,
        height=stored.facts.height,
        duration_seconds=stored.facts.duration_seconds,
        animated=stored.facts.animated,
    )
    session.add(media)
    await session.flush()
    return media


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
