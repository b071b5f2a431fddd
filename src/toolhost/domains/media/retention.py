"""Media retention (CATALOG.md §1.13): job outputs and uploads older than `media.retention_days` are deleted
unless a post, a plan (its approval items included) or a brand profile still references them: every column
whose `info` carries `db.base.REFERENCES_MEDIA` is searched, so this module names no other domain's table.
A job's output row commits before its file is written and awaits the job's completion; one whose job is no
longer pending or processing (it failed, was cancelled, or completed with another attempt's output because the
process that wrote this one died) is deleted with its file once `media.orphan_grace_seconds` old. Files in the
store that no row names (a store deletion that failed after its row went) are deleted after the same grace.

A worker poller: each worker sweeps at most once per `media.retention_sweep_seconds`.
"""

from __future__ import annotations

import json
import logging
import re
import time
import uuid
from collections.abc import Iterable
from datetime import datetime, timedelta
from typing import Any

from sqlalchemy import Column, and_, delete, or_, select
from sqlalchemy.ext.asyncio import AsyncSession

from toolhost.db.base import REFERENCES_MEDIA, Base, utcnow
from toolhost.domains.media import service
from toolhost.domains.media.models import MediaObject
from toolhost.platform.jobs import Job, WorkerContext
from toolhost.platform.models import Project
from toolhost.providers.media_store import KEY_PATTERN

logger = logging.getLogger(__name__)

BATCH = 200
# A media key anywhere inside a stored value: bare, behind an `r2://` prefix or inside a signed URL.
KEY_IN_TEXT = re.compile(KEY_PATTERN.pattern.removeprefix("^").removesuffix("$"))

_next_sweep: dict[str, float] = {}


async def sweep_expired_media(context: WorkerContext) -> int:
    """The poller: a sweep when this worker's last one is old enough; returns the objects deleted."""
    now = time.monotonic()
    if _next_sweep.get(context.worker_id, 0.0) > now:
        return 0
    _next_sweep[context.worker_id] = now + context.settings.media.retention_sweep_seconds
    return await sweep(context) + await sweep_abandoned_outputs(context) + await sweep_orphans(context)


async def sweep(context: WorkerContext) -> int:
    """Deletes every expired, unreferenced object, a batch per transaction, oldest first."""
    cutoff = utcnow() - timedelta(days=context.settings.media.retention_days)
    store = service.store(context.settings)
    deleted = 0
    after: tuple[datetime, uuid.UUID] | None = None
    while True:
        async with context.session_factory() as session, session.begin():
            batch = await _expired(session, cutoff, after)
            if not batch:
                return deleted
            after = (batch[-1].created_at, batch[-1].id)
            referenced = await _referenced_keys(session, {media.account_id for media in batch})
            doomed = [media for media in batch if media.key not in referenced]
            if doomed:
                # The rows go first, in this transaction: a key without a row can no longer be used, and
                # a store deletion that fails afterwards only leaves an unreachable object behind.
                await session.execute(delete(MediaObject).where(MediaObject.id.in_([m.id for m in doomed])))
        for media in doomed:
            try:
                await store.delete(media.key)
            except Exception:
                logger.exception("could not delete expired media %s from the store", media.key)
                continue
            deleted += 1


async def sweep_abandoned_outputs(context: WorkerContext) -> int:
    """Deletes the job outputs still awaiting a completion their job will no longer make, rows first."""
    cutoff = utcnow() - timedelta(seconds=context.settings.media.orphan_grace_seconds)
    store = service.store(context.settings)
    deleted = 0
    while True:
        async with context.session_factory() as session, session.begin():
            query = (
                select(MediaObject)
                .outerjoin(Job, Job.id == MediaObject.job_id)
                .where(
                    MediaObject.awaiting_completion,
                    MediaObject.created_at < cutoff,
                    or_(Job.id.is_(None), Job.status.not_in(["pending", "processing"])),
                )
                .limit(BATCH)
            )
            doomed = list(await session.scalars(query))
            if not doomed:
                return deleted
            await session.execute(delete(MediaObject).where(MediaObject.id.in_([media.id for media in doomed])))
        for media in doomed:
            try:
                await store.delete(media.key)
            except Exception:
                logger.exception("could not delete the abandoned job output %s", media.key)
                continue
            deleted += 1


async def sweep_orphans(context: WorkerContext) -> int:
    """Deletes every file in the store that no row names and that is older than the grace period."""
    cutoff = utcnow() - timedelta(seconds=context.settings.media.orphan_grace_seconds)
    store = service.store(context.settings)
    deleted = 0
    async for stale in store.stale_keys(older_than=cutoff):
        for start in range(0, len(stale), BATCH):
            batch = stale[start : start + BATCH]
            async with context.session_factory() as session:
                named = set(await session.scalars(select(MediaObject.key).where(MediaObject.key.in_(batch))))
            for key in batch:
                if key in named:
                    continue
                try:
                    await store.delete(key)
                except Exception:
                    logger.exception("could not delete the orphaned media file %s", key)
                    continue
                deleted += 1
    if deleted:
        logger.info("deleted %d media files that no row named", deleted)
    return deleted


async def _expired(
    session: AsyncSession, cutoff: datetime, after: tuple[datetime, uuid.UUID] | None
) -> list[MediaObject]:
    query = select(MediaObject).where(MediaObject.created_at < cutoff)
    if after is not None:
        created, identifier = after
        query = query.where(
            or_(
                MediaObject.created_at > created,
                and_(MediaObject.created_at == created, MediaObject.id > identifier),
            )
        )
    rows = await session.scalars(query.order_by(MediaObject.created_at, MediaObject.id).limit(BATCH))
    return list(rows)


async def _referenced_keys(session: AsyncSession, account_ids: set[uuid.UUID]) -> set[str]:
    """Every media key the columns marked REFERENCES_MEDIA (posts, plans, approval items, brand profiles)
    mention in these accounts' projects."""
    projects = select(Project.id).where(Project.account_id.in_(list(account_ids))).scalar_subquery()
    keys: set[str] = set()
    for column in _reference_columns():
        query = select(column).where(column.table.c.project_id.in_(projects), column.is_not(None))
        keys.update(_keys_in(await session.scalars(query)))
    return keys


def _reference_columns() -> list[Column[Any]]:
    # Every table is loaded by then: the worker imports the tool modules, and they import their tables.
    return [
        column for table in Base.metadata.sorted_tables for column in table.columns if column.info.get(REFERENCES_MEDIA)
    ]


def _keys_in(values: Iterable[Any]) -> set[str]:
    found: set[str] = set()
    for value in values:
        if value:
            found.update(match.group(0) for match in KEY_IN_TEXT.finditer(json.dumps(value)))
    return found
