"""Idempotency of scheduling: derived keys, request fingerprints, and the answers a repeat gets back.

A scheduling call stores its answer under its key for 7 days; a repeat of the request reads it back.
schedule_post claims its key before execute() takes any credit (`claim`): the record holds the claimant's
request id until the call stores its answer (`answer`) or fails (`release`), and a repeat arriving meanwhile
waits for the answer, so however many repeats race, one call does the work and pays.

Stored answers are JSON documents in the tool's output shape (a repeat gets back exactly what the first call
returned); the dataclasses here write and read them, and the functions that store or replay them take dicts.
"""

from __future__ import annotations

import asyncio
import hashlib
import json
import time
import uuid
from collections.abc import Callable, Mapping, Sequence
from contextlib import AbstractAsyncContextManager
from dataclasses import dataclass
from datetime import timedelta
from typing import Any

from sqlalchemy import delete, select
from sqlalchemy.exc import IntegrityError
from sqlalchemy.ext.asyncio import AsyncSession

from toolhost.db.base import utcnow
from toolhost.domains.distribution.models import IdempotencyRecord
from toolhost.platform.results import Conflict

IDEMPOTENCY_DAYS = 7
# The payload of a claimed key until its answer is stored: the request id of the call that holds it.
CLAIMED_BY = "claimed_by"
# How long a repeat waits for the call holding its key before it is told to call again.
CLAIM_WAIT_SECONDS = 30.0
Transaction = Callable[[], AbstractAsyncContextManager[AsyncSession]]


@dataclass(frozen=True, slots=True)
class PlatformPost:
    """The post created for one platform and the job that publishes it."""

    post_id: uuid.UUID
    job_id: uuid.UUID


@dataclass(frozen=True, slots=True)
class ScheduledPosts:
    """schedule_post's answer: per platform (by display name) its post."""

    posts: dict[str, PlatformPost]
    scheduled_at: str | None  # ISO-8601 UTC; None when published at once
    idempotency_key: str

    def document(self) -> dict[str, Any]:
        """The answer as stored under its idempotency key, in schedule_post's JSON shape."""
        return {
            "success": True,
            "results": {
                name: {"success": True, "jobId": str(post.job_id), "postId": str(post.post_id)}
                for name, post in self.posts.items()
            },
            "scheduledAt": self.scheduled_at,
            "idempotency_key": self.idempotency_key,
        }

    @classmethod
    def from_document(cls, document: Mapping[str, Any]) -> ScheduledPosts:
        """A stored answer, replayed to a repeat of its request."""
        return cls(
            posts={
                name: PlatformPost(post_id=uuid.UUID(result["postId"]), job_id=uuid.UUID(result["jobId"]))
                for name, result in document["results"].items()
            },
            scheduled_at=document["scheduledAt"],
            idempotency_key=document["idempotency_key"],
        )


@dataclass(frozen=True, slots=True)
class ScheduledPlanPost:
    """One plan post scheduled: the plan's id of it (as the plan gives it), its post and job, its time as given."""

    plan_post_id: object
    platform: str
    post_id: uuid.UUID
    job_id: uuid.UUID
    scheduled_at: str

    def document(self) -> dict[str, Any]:
        """The result as plans record it (and as stored under the post's idempotency key)."""
        return {
            "id": self.plan_post_id,
            "platform": self.platform,
            "success": True,
            "post_id": str(self.post_id),
            "job_id": str(self.job_id),
            "scheduled_at": self.scheduled_at,
        }

    @classmethod
    def from_document(cls, document: Mapping[str, Any]) -> ScheduledPlanPost:
        """A stored result, replayed when the same plan post is scheduled again."""
        return cls(
            plan_post_id=document["id"],
            platform=document["platform"],
            post_id=uuid.UUID(document["post_id"]),
            job_id=uuid.UUID(document["job_id"]),
            scheduled_at=document["scheduled_at"],
        )


def derived_key(
    *,
    project_id: uuid.UUID,
    platforms: Sequence[str],
    caption: str,
    title: str | None,
    media: str | Sequence[str] | None,
    schedule_at: str | None,
) -> str:
    """The idempotency key of a schedule_post call without one (CATALOG.md §10)."""
    document = {
        "projectId": str(project_id),
        "platforms": sorted(platforms),
        "caption": caption or "",
        "title": title or "",
        "media": media,
        "scheduleAt": schedule_at,
    }
    return hashlib.sha256(json.dumps(document, separators=(",", ":"), sort_keys=True).encode()).hexdigest()[:64]


def request_hash(arguments: dict[str, Any]) -> str:
    """Fingerprint of a request, to tell a repeat from a different request under the same key."""
    return hashlib.sha256(
        json.dumps(arguments, sort_keys=True, separators=(",", ":"), default=str).encode()
    ).hexdigest()


async def replay(*, session: AsyncSession, project_id: uuid.UUID, key: str, fingerprint: str) -> dict[str, Any] | None:
    """The stored answer of a key used in the last 7 days, or None; a different request is conflict.

    The answer is the JSON document the first request returned, so a repeat answers byte for byte the same.
    """
    record = await session.scalar(
        select(IdempotencyRecord).where(IdempotencyRecord.project_id == project_id, IdempotencyRecord.key == key)
    )
    if record is None:
        return None
    if record.expires_at <= utcnow():
        await session.delete(record)
        await session.flush()
        return None
    if record.request_hash != fingerprint:
        raise Conflict(
            "this idempotency_key was already used for a different request",
            code="idempotency_key_reused",
            recover_with="use a new idempotency_key",
        )
    return dict(record.payload)


async def remember(
    *, session: AsyncSession, project_id: uuid.UUID, key: str, fingerprint: str
) -> IdempotencyRecord | None:
    """Claims a key for this request; None when a concurrent request committed it first (replay that)."""
    record = IdempotencyRecord(
        project_id=project_id,
        key=key,
        request_hash=fingerprint,
        payload={},
        expires_at=utcnow() + timedelta(days=IDEMPOTENCY_DAYS),
    )
    try:
        async with session.begin_nested():
            session.add(record)
            await session.flush()
    except IntegrityError:
        return None
    return record


class _KeyBusy(Exception):
    """Another call holds the key (or took it a moment ago): wait for its answer."""


async def claim(
    *,
    transaction: Transaction,
    project_id: uuid.UUID,
    key: str,
    fingerprint: str,
    claimant: str,
    lifetime: timedelta,
) -> dict[str, Any] | None:
    """The stored answer of a repeat, or None once `claimant` holds the key (committed).

    The same key with a different request is conflict. While another call holds the key, this waits for its
    answer (short transactions, none held between looks) for up to CLAIM_WAIT_SECONDS. A claim not answered
    within `lifetime` belonged to a process that died, and the next request takes it over.
    """
    deadline = time.monotonic() + CLAIM_WAIT_SECONDS
    pause = 0.02
    while True:
        try:
            async with transaction() as session:
                return await _claim_or_answer(
                    session,
                    project_id=project_id,
                    key=key,
                    fingerprint=fingerprint,
                    claimant=claimant,
                    lifetime=lifetime,
                )
        except _KeyBusy:
            if time.monotonic() >= deadline:
                raise Conflict(
                    "another request with this idempotency_key is still running",
                    code="idempotency_key_in_use",
                    recover_with="call again in a moment with the same arguments to receive its answer",
                ) from None
        await asyncio.sleep(pause)
        pause = min(pause * 2, 0.5)


async def _claim_or_answer(
    session: AsyncSession,
    *,
    project_id: uuid.UUID,
    key: str,
    fingerprint: str,
    claimant: str,
    lifetime: timedelta,
) -> dict[str, Any] | None:
    now = utcnow()
    record = await session.scalar(
        select(IdempotencyRecord).where(IdempotencyRecord.project_id == project_id, IdempotencyRecord.key == key)
    )
    if record is not None and record.expires_at <= now:
        # A statement, not an ORM delete: a concurrent request may have removed the row already.
        await session.execute(
            delete(IdempotencyRecord)
            .where(IdempotencyRecord.id == record.id, IdempotencyRecord.expires_at <= now)
            .execution_options(synchronize_session=False)
        )
        session.expunge(record)
        record = None
    if record is None:
        try:
            async with session.begin_nested():
                session.add(
                    IdempotencyRecord(
                        project_id=project_id,
                        key=key,
                        request_hash=fingerprint,
                        payload={CLAIMED_BY: claimant},
                        expires_at=now + lifetime,
                    )
                )
                await session.flush()
        except IntegrityError:
            raise _KeyBusy from None
        return None
    if record.request_hash != fingerprint:
        raise Conflict(
            "this idempotency_key was already used for a different request",
            code="idempotency_key_reused",
            recover_with="use a new idempotency_key",
        )
    if CLAIMED_BY in record.payload:
        raise _KeyBusy
    return dict(record.payload)


async def _claimed_record(
    session: AsyncSession, *, project_id: uuid.UUID, key: str, claimant: str
) -> IdempotencyRecord | None:
    record = await session.scalar(
        select(IdempotencyRecord)
        .where(IdempotencyRecord.project_id == project_id, IdempotencyRecord.key == key)
        .with_for_update()
    )
    if record is None or record.payload.get(CLAIMED_BY) != claimant:
        return None
    return record


async def answer(
    *, session: AsyncSession, project_id: uuid.UUID, key: str, claimant: str, document: dict[str, Any]
) -> None:
    """Stores the answer under the key `claimant` holds, in the caller's transaction, for 7 days."""
    record = await _claimed_record(session, project_id=project_id, key=key, claimant=claimant)
    if record is None:
        # The claim lapsed while this call ran, and a repeat took the key over: that one answers the request.
        raise Conflict(
            "this request outlived its claim on the idempotency_key, and a repeat of it took the key over",
            code="idempotency_key_in_use",
            recover_with="call again with the same arguments to receive the answer of the request that took over",
        )
    record.payload = document
    record.expires_at = utcnow() + timedelta(days=IDEMPOTENCY_DAYS)
    await session.flush()


async def release(*, session: AsyncSession, project_id: uuid.UUID, key: str, claimant: str) -> None:
    """Drops the claim `claimant` holds on a key (its call failed), so the next request under the key runs afresh."""
    record = await _claimed_record(session, project_id=project_id, key=key, claimant=claimant)
    if record is not None:
        await session.delete(record)
        await session.flush()
