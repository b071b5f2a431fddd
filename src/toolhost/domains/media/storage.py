"""Where media lives: the configured store (local or S3), keys and the signed, expiring URLs of toolhost's media
route, and the row of a stored file (its facts measured as it is stored)."""

from __future__ import annotations

import asyncio
import hashlib
import hmac
import re
import time
import uuid
from dataclasses import dataclass, field
from typing import TYPE_CHECKING
from urllib.parse import quote, unquote, urlsplit

from sqlalchemy import delete, update
from sqlalchemy.ext.asyncio import AsyncSession, async_sessionmaker

from toolhost.db.base import utcnow
from toolhost.domains.media.files import EXTENSIONS
from toolhost.domains.media.models import MediaObject
from toolhost.providers.media_facts import MediaFacts, measure
from toolhost.providers.media_store import LocalMediaStore, S3MediaStore

if TYPE_CHECKING:
    from toolhost.config import Settings
    from toolhost.keyring import KeyGeneration

SCHEME_PREFIX = re.compile(r"^[a-zA-Z][a-zA-Z0-9+.-]*://")


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
