"""Idempotency of scheduling: derived keys, request fingerprints, and the answers a repeat gets back.

A scheduling call stores its answer under its key for 7 days; a repeat of the request reads it back.
"""

from __future__ import annotations

import hashlib
import json
import uuid
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from datetime import timedelta
from typing import Any

from sqlalchemy import select
from sqlalchemy.exc import IntegrityError
from sqlalchemy.ext.asyncio import AsyncSession

from toolhost.db.base import utcnow
from toolhost.domains.distribution.models import IdempotencyRecord
from toolhost.platform.results import Conflict

IDEMPOTENCY_DAYS = 7


@dataclass(frozen=True, slots=True)
class PlatformPost:
    """The post created for one platform and the job that publishes it."""

    post_id: uuid.UUID
    job_id: uuid.UUID


@dataclass(frozen=True, slots=True)
class ScheduledPosts:
    """schedule_post's answer: per platform (by display name) its post; `repeat` when it answers an earlier call."""

    posts: dict[str, PlatformPost]
    scheduled_at: str | None  # ISO-8601 UTC; None when published at once
    idempotency_key: str
    repeat: bool

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
            repeat=True,
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
