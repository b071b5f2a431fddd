"""Posting slots (CATALOG.md §7 find_next_slots): preferred hours, scored, kept apart per platform."""

from __future__ import annotations

import uuid
from collections import defaultdict
from collections.abc import Sequence
from dataclasses import dataclass
from datetime import UTC, datetime, timedelta

from sqlalchemy import func, select
from sqlalchemy.ext.asyncio import AsyncSession

from toolhost.db.base import utcnow
from toolhost.domains.distribution.models import ConnectorEvent, Post
from toolhost.providers import platforms as social_platforms

WEEKDAYS = ("mon", "tue", "wed", "thu", "fri", "sat", "sun")
MIDWEEK = (1, 2, 3)  # Tue-Thu
WINDOW = timedelta(days=7)
HISTORY = timedelta(days=90)
LEARNED_MINIMUM = 10
# Posts that hold their slot.
ACTIVE = ("draft", "pending", "scheduled")


@dataclass(frozen=True, slots=True)
class Candidate:
    """A whole-hour slot on one platform and its engagement score."""

    platform: str
    moment: datetime
    score: int

    @property
    def day_of_week(self) -> str:
        """mon … sun."""
        return WEEKDAYS[self.moment.weekday()]


@dataclass(frozen=True, slots=True)
class FreeSlots:
    """find_next_slots' answer: the chosen slots, how many candidates the window had, how many clashed."""

    slots: list[Candidate]
    total_candidates: int
    conflicts_avoided: int


async def learned_hours(session: AsyncSession, project_id: uuid.UUID, platform: str) -> tuple[int, ...] | None:
    """The platform's top 4 UTC hours by engagement once ≥10 posts with metrics were published in 90 days."""
    since = utcnow() - HISTORY
    posts = list(
        await session.execute(
            select(Post.published_at, Post.external_post_id, Post.connected_account_id).where(
                Post.project_id == project_id,
                Post.platform == platform,
                Post.status == "published",
                Post.published_at >= since,
                Post.external_post_id.is_not(None),
            )
        )
    )
    if len(posts) < LEARNED_MINIMUM:
        return None
    latest = {}
    rows = await session.execute(
        select(
            ConnectorEvent.connected_account_id,
            ConnectorEvent.external_post_id,
            ConnectorEvent.payload,
            ConnectorEvent.received_at,
        )
        .where(
            ConnectorEvent.kind == "metrics",
            ConnectorEvent.connected_account_id.in_({row.connected_account_id for row in posts}),
        )
        .order_by(ConnectorEvent.received_at)
    )
    for row in rows:
        latest[(row.connected_account_id, row.external_post_id)] = row.payload
    engagement: dict[int, list[float]] = defaultdict(list)
    for row in posts:
        metrics = latest.get((row.connected_account_id, row.external_post_id))
        if metrics is None:
            continue
        engagement[row.published_at.hour].append(
            sum(float(value) for name, value in metrics.items() if name in ("likes", "shares", "comments", "saves"))
        )
    if sum(len(values) for values in engagement.values()) < LEARNED_MINIMUM:
        return None
    ranked = sorted(engagement, key=lambda hour: (-sum(engagement[hour]) / len(engagement[hour]), hour))
    return tuple(ranked[:4])


async def occupied(
    session: AsyncSession, project_id: uuid.UUID, platforms: Sequence[str], start: datetime
) -> dict[str, list[datetime]]:
    """Times of the project's draft/pending/scheduled posts per platform around the window."""
    rows = await session.execute(
        select(Post.platform, func.coalesce(Post.scheduled_at, Post.due_at)).where(
            Post.project_id == project_id, Post.platform.in_(platforms), Post.status.in_(ACTIVE)
        )
    )
    taken: dict[str, list[datetime]] = defaultdict(list)
    for platform, moment in rows:
        if moment is not None:
            taken[platform].append(moment if moment.tzinfo else moment.replace(tzinfo=UTC))
    return taken


class SlotPlanner:
    """Candidates of a window and the slots chosen so far, so successive picks keep their distance."""

    def __init__(
        self,
        *,
        start: datetime,
        hours: dict[str, tuple[int, ...]],
        taken: dict[str, list[datetime]],
        min_gap_hours: int,
    ) -> None:
        self.gap = timedelta(hours=min_gap_hours)
        self.taken = {platform: list(times) for platform, times in taken.items()}
        self.candidates: list[Candidate] = []
        first = start.replace(minute=0, second=0, microsecond=0)
        for platform, preferred in hours.items():
            for offset in range(0, int(WINDOW.total_seconds() // 3600) + 1):
                moment = first + timedelta(hours=offset)
                if moment <= start or moment > start + WINDOW or moment.hour not in preferred:
                    continue
                score = len(preferred) - preferred.index(moment.hour) + (1 if moment.weekday() in MIDWEEK else 0)
                self.candidates.append(Candidate(platform=platform, moment=moment, score=score))
        self.candidates.sort(key=lambda candidate: (-candidate.score, candidate.moment))
        self.conflicts_avoided = 0

    def conflicts(self, candidate: Candidate) -> bool:
        """Whether a post on that platform lies within the gap."""
        return any(abs(candidate.moment - moment) < self.gap for moment in self.taken.get(candidate.platform, []))

    def pick(self, platform: str) -> Candidate | None:
        """The best free slot for one platform, taken."""
        for candidate in self.candidates:
            if candidate.platform == platform and not self.conflicts(candidate):
                self.taken.setdefault(platform, []).append(candidate.moment)
                return candidate
        return None

    def top(self, count: int) -> list[Candidate]:
        """The best `count` free slots over every platform, each taken as it is chosen."""
        chosen: list[Candidate] = []
        for candidate in self.candidates:
            if len(chosen) == count:
                break
            if self.conflicts(candidate):
                self.conflicts_avoided += 1
                continue
            self.taken.setdefault(candidate.platform, []).append(candidate.moment)
            chosen.append(candidate)
        return chosen


async def slot_planner(
    *,
    session: AsyncSession,
    project_id: uuid.UUID,
    platforms: Sequence[str],
    start: datetime,
    min_gap_hours: int,
) -> SlotPlanner:
    """A planner over the project's preferred (or learned) hours and its existing posts."""
    unique = list(dict.fromkeys(platforms))
    hours = {
        platform: (
            await learned_hours(session, project_id, platform) or social_platforms.RULES[platform].preferred_hours
        )
        for platform in unique
    }
    return SlotPlanner(
        start=start,
        hours=hours,
        taken=await occupied(session, project_id, unique, start),
        min_gap_hours=min_gap_hours,
    )


async def find(
    *,
    session: AsyncSession,
    project_id: uuid.UUID,
    platforms: Sequence[str],
    count: int,
    start_after: datetime | None,
    min_gap_hours: int,
) -> FreeSlots:
    """find_next_slots: the top `count` free candidates, by score then time."""
    start = start_after or utcnow()
    plan = await slot_planner(
        session=session, project_id=project_id, platforms=platforms, start=start, min_gap_hours=min_gap_hours
    )
    chosen = plan.top(count)
    return FreeSlots(slots=chosen, total_candidates=len(plan.candidates), conflicts_avoided=plan.conflicts_avoided)
