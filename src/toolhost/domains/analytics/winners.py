"""find_winning_content (CATALOG.md §5): the best performers among the project's measured posts and the swipe file.

An ideation tool in the catalogue, it lives in analytics because it ranks analytics' measurements (analytics
sits above ideation and reads its swipe file). Two groups are ranked separately, each by its own yardstick:
published posts by engagement rate (the latest metric snapshot per post), swipe-file items by views per hour
since publication. A candidate's qa_score is its percentile inside its group; the analysis fields come from
rules over its text, never from a model, and nothing is reported for a group without data.
"""

from __future__ import annotations

import re
import statistics
import uuid
from collections.abc import Sequence
from dataclasses import dataclass
from datetime import datetime, timedelta
from urllib.parse import urlsplit

from sqlalchemy import or_, select
from sqlalchemy.ext.asyncio import AsyncSession

from toolhost.db.base import utcnow
from toolhost.domains.analytics import metrics
from toolhost.domains.analytics.insights import hook_of
from toolhost.domains.analytics.models import SwipeItem
from toolhost.domains.distribution.models import ConnectedAccount
from toolhost.platform.dates import as_utc, iso
from toolhost.providers import platforms as social_platforms

# Catalogue hook types (§5), tried in this order; the first family whose words appear wins.
HOOK_RULES: tuple[tuple[str, re.Pattern[str]], ...] = (
    ("contrarian", re.compile(r"\b(myth|unpopular|actually|wrong|overrated|nobody tells)\b", re.IGNORECASE)),
    ("pain_point", re.compile(r"\b(stop|avoid|mistakes?|problems?|struggl\w*|fail\w*)\b", re.IGNORECASE)),
    (
        "authority",
        re.compile(r"\b(I|we)\b.*\b(years?|clients?|results?|customers?|built|grew)\b", re.IGNORECASE),
    ),
    ("data_driven", re.compile(r"\d")),
    ("curiosity", re.compile(r"\?|\b(why|secret|what happens|here's|this is how|the truth)\b", re.IGNORECASE)),
)
STORY_RULES: tuple[tuple[str, re.Pattern[str]], ...] = (
    ("how-to", re.compile(r"\b(how to|step[- ]by[- ]step|guide|tutorial|steps?)\b", re.IGNORECASE)),
    (
        "list",
        re.compile(
            r"^\s*\d+\s+\w+|\b(top \d+|\d+ (ways|tips|things|reasons|tools|lessons|mistakes|ideas|habits|steps))\b",
            re.IGNORECASE,
        ),
    ),
    ("announcement", re.compile(r"\b(introducing|launch\w*|announc\w*|now available|new)\b", re.IGNORECASE)),
    ("opinion", re.compile(r"\b(I think|I believe|unpopular|should|myth|overrated|hot take)\b", re.IGNORECASE)),
)
TRIGGERS: dict[str, re.Pattern[str]] = {
    "curiosity": re.compile(r"\?|\b(secret|why|discover|surpris\w*|hidden|revealed?)\b", re.IGNORECASE),
    "fear": re.compile(r"\b(mistakes?|risk\w*|avoid|lose|losing|danger\w*|warning|never)\b", re.IGNORECASE),
    "aspiration": re.compile(r"\b(grow\w*|dream|success\w*|achiev\w*|better|level up|goals?)\b", re.IGNORECASE),
    "humour": re.compile(r"\b(funny|lol|joke|hilarious|haha)\b|😂|🤣", re.IGNORECASE),
    "urgency": re.compile(r"\b(now|today|last chance|hurry|limited|deadline|before it's too late)\b", re.IGNORECASE),
}
CTA = re.compile(r"\b(comment|share|follow|subscribe|sign up|join|download|click|save|try|book|dm)\b", re.IGNORECASE)
VISUAL_PATTERNS = {"VIDEO": "video", "IMAGE": "single image", "CAROUSEL_ALBUM": "carousel"}
VIRAL_MULTIPLE = 10


@dataclass
class Candidate:
    """One post or swipe item with the figure its group ranks it by."""

    id: str
    source_platform: str
    source_url: str | None
    creator_name: str | None
    title: str
    text: str
    media_type: str | None
    views: int
    likes: int | None
    comments: int | None
    shares: int | None
    published_at: datetime
    yardstick: float
    yardstick_name: str
    velocity_vph: float = 0.0
    qa_score: float = 0.0
    is_viral: bool = False
    group_median: float = 0.0
    group_size: int = 0


def _velocity(views: int, published_at: datetime, now: datetime) -> float:
    hours = max((now - as_utc(published_at)).total_seconds() / 3600, 1.0)
    return round(views / hours, 2)


def platform_of_url(url: str | None) -> str:
    """The network a swipe item's URL belongs to, or `web`."""
    host = (urlsplit(url).hostname or "").lower() if url else ""
    return social_platforms.platform_of_host(host) or "web"


def hook_type(hook: str) -> str | None:
    """The catalogue hook type of an opening line; None when no family's words appear."""
    return next((name for name, pattern in HOOK_RULES if pattern.search(hook)), None)


def _list_points(lines: Sequence[str]) -> int:
    return sum(1 for line in lines if re.match(r"^(\d+[.)]|[-•*])\s", line))


def story_type(text: str) -> str:
    """how-to, list (also: two or more list points), announcement or opinion by their words; else a story."""
    lines = [line.strip() for line in text.strip().splitlines() if line.strip()]
    if _list_points(lines) >= 2 and not STORY_RULES[0][1].search(text):
        return "list"
    return next((name for name, pattern in STORY_RULES if pattern.search(text)), "story")


def content_structure(text: str) -> str:
    """The parts of the text in reading order: hook, body lines, list points, call to action, hashtags."""
    lines = [line.strip() for line in text.strip().splitlines() if line.strip()]
    parts = ["hook"]
    points = _list_points(lines[1:])
    body = len(lines) - 1 - points
    if points:
        parts.append(f"{points} point(s)")
    if body > 0:
        parts.append(f"{body} body line(s)")
    if CTA.search(text):
        parts.append("call to action")
    if "#" in text:
        parts.append("hashtags")
    return " → ".join(parts)


def emotional_triggers(text: str) -> list[str]:
    """The lexicon's triggers whose words appear in the text."""
    return [name for name, pattern in TRIGGERS.items() if pattern.search(text)]


def _percentiles(group: Sequence[Candidate]) -> None:
    """qa_score = share of the group at or below the candidate's figure (the best is 1.0), 2 dp."""
    values = sorted(candidate.yardstick for candidate in group)
    median_views = statistics.median([candidate.views for candidate in group]) if group else 0
    median_yardstick = statistics.median(values) if values else 0
    for candidate in group:
        at_or_below = sum(1 for value in values if value <= candidate.yardstick)
        candidate.qa_score = round(at_or_below / len(values), 2)
        candidate.is_viral = median_views > 0 and candidate.views >= VIRAL_MULTIPLE * median_views
        candidate.group_median = median_yardstick
        candidate.group_size = len(group)


async def _post_candidates(
    session: AsyncSession, project_ids: Sequence[uuid.UUID], platform: str | None, since: datetime, now: datetime
) -> list[Candidate]:
    posts = await metrics.published_posts(
        session=session, project_ids=project_ids, platforms=[platform] if platform else None, since=since
    )
    measured = [item for item in await metrics.with_metrics(session=session, posts=posts) if item.latest]
    account_ids = {item.post.connected_account_id for item in measured}
    usernames = dict(
        (
            await session.execute(
                select(ConnectedAccount.id, ConnectedAccount.username).where(ConnectedAccount.id.in_(account_ids))
            )
        ).all()
        if account_ids
        else []
    )
    candidates = []
    for item in measured:
        post, latest = item.post, item.latest
        assert latest is not None and post.published_at is not None
        text = "\n".join(part for part in (post.title, post.caption) if part)
        candidates.append(
            Candidate(
                id=str(post.id),
                source_platform=post.platform,
                source_url=post.external_url,
                creator_name=usernames.get(post.connected_account_id),
                title=(post.title or hook_of(post.caption))[:300],
                text=text,
                media_type=post.media_type,
                views=item.views,
                likes=latest.likes,
                comments=latest.comments,
                shares=latest.shares,
                published_at=post.published_at,
                yardstick=metrics.engagement_rate(item.engagement, item.views),
                yardstick_name="engagement rate",
                velocity_vph=_velocity(item.views, post.published_at, now),
            )
        )
    return candidates


async def _swipe_candidates(
    session: AsyncSession, account_id: uuid.UUID, platform: str | None, since: datetime, now: datetime
) -> list[Candidate]:
    rows = await session.scalars(
        select(SwipeItem).where(
            SwipeItem.account_id == account_id,
            SwipeItem.views.is_not(None),
            or_(
                SwipeItem.published_at >= since,
                (SwipeItem.published_at.is_(None)) & (SwipeItem.captured_at >= since),
            ),
        )
    )
    candidates = []
    for row in rows:
        source_platform = platform_of_url(row.url)
        if platform and source_platform != platform:
            continue
        published = row.published_at or row.captured_at
        views = row.views or 0
        velocity = _velocity(views, published, now)
        candidates.append(
            Candidate(
                id=str(row.id),
                source_platform=source_platform,
                source_url=row.url,
                creator_name=None,
                title=row.title[:300],
                text=row.title,
                media_type="VIDEO" if source_platform in {"youtube", "tiktok"} else None,
                views=views,
                likes=None,
                comments=None,
                shares=None,
                published_at=published,
                yardstick=velocity,
                yardstick_name="views per hour",
                velocity_vph=velocity,
            )
        )
    return candidates


def _analysis(candidate: Candidate) -> str:
    ratio = candidate.yardstick / candidate.group_median if candidate.group_median else None
    against = f"{ratio:.1f}× the median" if ratio is not None else "a group median of 0"
    return (
        f"{candidate.yardstick_name.capitalize()} {candidate.yardstick:,.2f} against a median of "
        f"{candidate.group_median:,.2f} across {candidate.group_size} item(s) ({against}); "
        f"{candidate.views:,} views, percentile {candidate.qa_score:.2f}."
    )


@dataclass(frozen=True, slots=True)
class Counts:
    """The counters behind a winner (a swipe item only has views)."""

    views: int
    likes: int | None
    comments: int | None
    shares: int | None


@dataclass(frozen=True, slots=True)
class Winner:
    """One winning post or swipe-file item, with a rule-based analysis of why it won."""

    id: str
    source_platform: str
    source_url: str | None
    creator_name: str | None
    title: str
    hook_text: str
    hook_type: str | None
    story_type: str
    visual_pattern: str
    emotional_triggers: list[str]
    content_structure: str
    metrics: Counts
    velocity_vph: float
    qa_score: float
    is_viral: bool
    ai_analysis: str
    replication_prompt: str
    scanned_at: str


def _winner(candidate: Candidate, scanned_at: str) -> Winner:
    hook = hook_of(candidate.text)
    kind = hook_type(hook)
    story = story_type(candidate.text)
    structure = content_structure(candidate.text)
    visual = VISUAL_PATTERNS.get((candidate.media_type or "").upper(), "text-only")
    opening = f"a {kind.replace('_', ' ')} hook" if kind else "a hook"
    return Winner(
        id=candidate.id,
        source_platform=candidate.source_platform,
        source_url=candidate.source_url,
        creator_name=candidate.creator_name,
        title=candidate.title,
        hook_text=hook,
        hook_type=kind,
        story_type=story,
        visual_pattern=visual,
        emotional_triggers=emotional_triggers(candidate.text),
        content_structure=structure,
        metrics=Counts(
            views=candidate.views, likes=candidate.likes, comments=candidate.comments, shares=candidate.shares
        ),
        velocity_vph=candidate.velocity_vph,
        qa_score=candidate.qa_score,
        is_viral=candidate.is_viral,
        ai_analysis=_analysis(candidate),
        replication_prompt=(
            f"Write a {story} {visual} post about [NEW_TOPIC] for [CREATOR_BRAND]. Open with {opening} in the "
            f'spirit of "{hook}", then follow this structure: {structure}.'
        ),
        scanned_at=scanned_at,
    )


async def find(
    *,
    session: AsyncSession,
    account_id: uuid.UUID,
    project_ids: Sequence[uuid.UUID],
    platform: str | None,
    days: int,
    limit: int,
    min_qa_score: float,
) -> list[Winner]:
    """The winners, best first: qa_score, then views per hour."""
    now = utcnow()
    since = now - timedelta(days=days)
    posts = await _post_candidates(session, project_ids, platform, since, now)
    swipe = await _swipe_candidates(session, account_id, platform, since, now)
    _percentiles(posts)
    _percentiles(swipe)
    winners = sorted(
        (candidate for candidate in (*posts, *swipe) if candidate.qa_score >= min_qa_score),
        key=lambda candidate: (-candidate.qa_score, -candidate.velocity_vph, candidate.id),
    )
    scanned_at = iso(now)
    return [_winner(candidate, scanned_at) for candidate in winners[:limit]]
