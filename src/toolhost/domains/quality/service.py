"""Quality checks of posts and plans: brand signals and recent posts gathered, then the pure scorer."""

from __future__ import annotations

import re
import uuid
from dataclasses import dataclass
from datetime import UTC, datetime, timedelta
from typing import Any

from sqlalchemy import select
from sqlalchemy.ext.asyncio import AsyncSession

from toolhost.domains.brand import service as brand_service
from toolhost.domains.content.models import ContentRecord

# The pure scorer is also schedule_content_plan's per-post gate (distribution).
from toolhost.domains.quality.scoring import BrandSignals as BrandSignals
from toolhost.domains.quality.scoring import PostInput as PostInput
from toolhost.domains.quality.scoring import QualityResult
from toolhost.domains.quality.scoring import score_post as score_post
from toolhost.providers.text.base import BrandContext

RECENT_DAYS = 30
RECENT_LIMIT = 50


def _consistency(runtime: dict[str, Any], text: str) -> tuple[int, list[str]] | None:
    """The brand consistency score (0-100) of a text and its first two suggestions."""
    if not text.strip():
        return None
    result = brand_service.score_consistency(runtime, text)
    issues = [issue.suggestion or issue.rule for issue in result.issues[:2]]
    return int(result.overall), [str(issue) for issue in issues if issue]


class BrandJudge:
    """The brand side of the score for one project (or none): consistency when a profile exists."""

    def __init__(
        self,
        runtime: dict[str, Any] | None,
        *,
        keyword: str | None,
        avoid_patterns: list[str],
        banned_terms: list[str],
    ) -> None:
        self.runtime = runtime
        brand = BrandContext.from_runtime(runtime)
        self.keyword = keyword
        self.avoid_patterns = tuple(avoid_patterns) + brand.avoid_patterns
        self.banned_terms = tuple(banned_terms) + brand.banned_terms
        self.supported = tuple(point.claim + " " + point.evidence for point in brand.proof_points) + (
            brand.value_propositions
        )
        self.name = brand.name

    def signals(self, text: str) -> BrandSignals:
        """The brand signals for one text."""
        scored = _consistency(self.runtime, text) if self.runtime else None
        return BrandSignals(
            consistency=scored[0] if scored else None,
            consistency_issues=tuple(scored[1]) if scored else (),
            keyword=self.keyword,
            avoid_patterns=self.avoid_patterns,
            banned_terms=self.banned_terms,
            supported_claims=self.supported,
            name=self.name,
        )


async def judge_for(
    session: AsyncSession,
    *,
    project_id: uuid.UUID | None,
    keyword: str | None,
    avoid_patterns: list[str] | None = None,
    banned_terms: list[str] | None = None,
) -> BrandJudge:
    """The brand judge of a project (its runtime when it has a profile) plus the caller's own terms."""
    runtime = await brand_service.get_runtime(session=session, project_id=project_id) if project_id else None
    return BrandJudge(runtime, keyword=keyword, avoid_patterns=avoid_patterns or [], banned_terms=banned_terms or [])


@dataclass(frozen=True, slots=True)
class StoredText:
    """A text the project generated recently, with what it was made from (a prompt, or the adapted text)."""

    text: str
    source: str


async def recent_posts(session: AsyncSession, *, project_id: uuid.UUID | None) -> list[StoredText]:
    """The project's texts of the last 30 days, which a new post should not repeat."""
    if project_id is None:
        return []
    since = datetime.now(UTC) - timedelta(days=RECENT_DAYS)
    rows = await session.execute(
        select(ContentRecord.text, ContentRecord.prompt)
        .where(
            ContentRecord.project_id == project_id,
            ContentRecord.created_at >= since,
            ContentRecord.text.is_not(None),
        )
        .order_by(ContentRecord.created_at.desc())
        .limit(RECENT_LIMIT)
    )
    return [StoredText(text=text, source=prompt or "") for text, prompt in rows if text]


def _key(text: str) -> str:
    return " ".join(text.split()).lower()


def _sentences(text: str) -> set[str]:
    body = re.sub(r"(?:(?<=\s)|^)#\w+", "", text)
    return {_key(part) for part in re.split(r"(?<=[.!?])\s+|\n+", body) if len(part.split()) >= 3}


def _is_cut_of(text: str, caption: str) -> bool:
    """Whether one of two texts is the other cut down or extended (an adaptation made by hand)."""
    mine, theirs = _sentences(caption), _sentences(text)
    if not mine or not theirs:
        return False
    shared = len(mine & theirs)
    return shared / min(len(mine), len(theirs)) >= 0.8


def others(recent: list[StoredText], caption: str) -> list[str]:
    """The recent texts that are not this post's own: not the post itself, not its adaptations or the text
    it was adapted from, not another version written from the same prompt, not a cut of it. A post checked
    right after it was generated, or beside its own adaptation, is not its own repeat."""
    lineage = {_key(caption)}
    grown = True
    while grown:
        grown = False
        for stored in recent:
            text, source = _key(stored.text), _key(stored.source)
            if (text in lineage) != (source in lineage) and source:
                lineage |= {text, source}
                grown = True
    return [
        stored.text for stored in recent if _key(stored.text) not in lineage and not _is_cut_of(stored.text, caption)
    ]


async def check(
    *,
    session: AsyncSession,
    project_id: uuid.UUID | None,
    caption: str,
    title: str | None,
    platforms: list[str],
    threshold: float,
    keyword: str | None,
    avoid_patterns: list[str] | None,
    banned_terms: list[str] | None,
) -> QualityResult:
    """quality_check: one post for its platforms."""
    judge = await judge_for(
        session,
        project_id=project_id,
        keyword=keyword,
        avoid_patterns=avoid_patterns,
        banned_terms=banned_terms,
    )
    recent = await recent_posts(session, project_id=project_id)
    return score_post(
        PostInput(caption=caption, platforms=tuple(platforms), title=title),
        brand=judge.signals(f"{title or ''} {caption}".strip()),
        recent=others(recent, caption),
        threshold=threshold,
    )


def quality_entry(result: QualityResult) -> dict[str, Any]:
    """The `quality` object of a plan post, as the plan stores it in its JSON."""
    return {"score": result.total, "max_score": 35, "passed": result.passed, "blockers": result.blockers}


@dataclass(frozen=True, slots=True)
class PlanSummary:
    """How a plan's posts fared: how many passed and their average score."""

    total_posts: int
    passed: int
    failed: int
    avg_score: float


def score_plan_posts(
    posts: list[dict[str, Any]], *, judge: BrandJudge, recent: list[StoredText], threshold: float
) -> tuple[list[dict[str, Any]], PlanSummary]:
    """Each post scored for its own platform (media checked), and the plan's summary.

    Plan posts are the plan's JSON, kept whole (a post may carry keys of its own): each comes back as a copy
    with its `quality` object added, ready to store.
    """
    scored = []
    for post in posts:
        caption = str(post.get("caption") or "")
        title = post.get("title")
        result = score_post(
            PostInput(
                caption=caption,
                platforms=(str(post.get("platform") or "").lower(),),
                title=str(title) if title else None,
                media_url=post.get("media_url"),
                plan_post=True,
            ),
            brand=judge.signals(f"{title or ''} {caption}".strip()),
            recent=others(recent, caption),
            threshold=threshold,
        )
        scored.append({**post, "quality": quality_entry(result)})
    passed = sum(1 for post in scored if post["quality"]["passed"])
    average = sum(post["quality"]["score"] for post in scored) / len(scored) if scored else 0.0
    return scored, PlanSummary(
        total_posts=len(scored), passed=passed, failed=len(scored) - passed, avg_score=round(average, 1)
    )


async def check_plan(
    *,
    session: AsyncSession,
    project_id: uuid.UUID | None,
    posts: list[dict[str, Any]],
    threshold: float,
    keyword: str | None,
) -> tuple[list[dict[str, Any]], PlanSummary]:
    """quality_check_plan: every post of a plan with the project's brand when one resolves."""
    judge = await judge_for(session, project_id=project_id, keyword=keyword)
    recent = await recent_posts(session, project_id=project_id)
    return score_plan_posts(posts, judge=judge, recent=recent, threshold=threshold)
