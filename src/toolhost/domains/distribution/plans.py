"""schedule_content_plan (CATALOG.md §7): approval gate, slots, quality gate, then schedule_post per post."""

from __future__ import annotations

import dataclasses
import hashlib
import uuid
from collections.abc import Awaitable, Callable, Sequence
from dataclasses import dataclass
from datetime import timedelta
from typing import TYPE_CHECKING, Any

from sqlalchemy import select
from sqlalchemy.ext.asyncio import AsyncSession

from toolhost.db.base import utcnow
from toolhost.domains.approvals import service as approvals_service
from toolhost.domains.brand import service as brand_service
from toolhost.domains.distribution import accounts as accounts_service
from toolhost.domains.distribution import service, slots
from toolhost.domains.distribution.accounts import canonical_platform
from toolhost.domains.distribution.models import Post
from toolhost.domains.planning import service as planning_service
from toolhost.domains.quality import service as quality_service
from toolhost.platform.dates import iso
from toolhost.platform.results import BillingFailed, Conflict, NotFound, ToolError, ValidationFailed
from toolhost.providers import platforms as social_platforms
from toolhost.providers.fetch import Fetcher
from toolhost.providers.text.base import BrandContext

if TYPE_CHECKING:
    from toolhost.config import Settings
    from toolhost.domains.planning.models import ContentPlan

DEFAULT_THRESHOLD = 26
OVERLAY_FIELDS = ("caption", "title", "platform", "media_url", "schedule_at", "hashtags")
GIVEN_TIME = "_given_schedule_at"


def post_key(
    *, plan_id: str, post_id: str, platform: str, schedule_at: str | None, caption: str, seed: str | None
) -> str:
    """The derived per-post idempotency key of CATALOG.md §7."""
    parts = [
        "schedule_content_plan",
        plan_id,
        post_id,
        platform.lower(),
        schedule_at or "",
        hashlib.sha256(caption.encode()).hexdigest()[:16],
        seed or "",
    ]
    return "plan-" + hashlib.sha256(":".join(parts).encode()).hexdigest()[:48]


# A post's result is a JSON document: the plan keeps it as the post's `schedule_result` and the tool returns it
# as given, beside the plan posts it reports in a dry run (free-form: whatever fields the plan's posts have).
def _failure(post: dict[str, Any], error: str, kind: str, *, retryable: bool = False) -> dict[str, Any]:
    return {
        "id": post.get("id"),
        "platform": post.get("platform"),
        "success": False,
        "error": error,
        "failure_kind": kind,
        "retryable": retryable,
    }


@dataclass(frozen=True, slots=True)
class InlinePlan:
    """A plan given in the call instead of by id: its posts (as plans store them), project and accounts."""

    posts: list[dict[str, Any]]
    project_id: str | None
    account_ids: dict[str, str]


@dataclass(frozen=True, slots=True)
class PlanScheduling:
    """schedule_content_plan's answer: the approval gate, each post's result (its gate in a dry run), the summary."""

    plan_id: uuid.UUID | None
    approvals: dict[str, int]
    posts: list[dict[str, Any]]
    summary: dict[str, int]
    dry_run: bool


@dataclass(frozen=True, slots=True)
class _Scheduler:
    """Who schedules the posts of one call, and the options they all share."""

    session: AsyncSession
    settings: Settings
    fetcher: Fetcher
    charge: Callable[[int], Awaitable[None]]
    account_id: uuid.UUID
    project_id: uuid.UUID
    accessible_project_ids: Sequence[uuid.UUID]
    enforce_quality: bool
    idempotency_seed: str | None


async def schedule(
    *,
    session: AsyncSession,
    settings: Settings,
    charge: Callable[[int], Awaitable[None]],
    account_id: uuid.UUID,
    project_id: uuid.UUID,
    accessible_project_ids: Sequence[uuid.UUID],
    plan_id: str | None,
    inline_plan: InlinePlan | None,
    account_ids: dict[str, str] | None,
    auto_slot: bool,
    dry_run: bool,
    enforce_quality: bool,
    quality_threshold: int | None,
    batch_size: int,
    idempotency_seed: str | None,
) -> PlanScheduling:
    """Runs the eight steps; per-post failures are reported in posts[] and summary, never raised."""
    stored: ContentPlan | None = None
    if plan_id is not None:
        stored = await planning_service.get(session, plan_id=plan_id, project_id=project_id)
        raw_posts = [dict(post) for post in stored.payload.get("posts", [])]
        plan_accounts = dict(stored.payload.get("account_ids") or {})
    elif inline_plan is not None:
        if inline_plan.project_id and uuid.UUID(inline_plan.project_id) != project_id:
            raise ValidationFailed(
                "plan.project_id and project_id disagree",
                field_errors=[{"path": "plan.project_id", "message": "differs from project_id"}],
            )
        raw_posts = inline_plan.posts
        plan_accounts = dict(inline_plan.account_ids)
    else:
        raise ValidationFailed("give plan_id or plan", field_errors=[{"path": "plan_id", "message": "required"}])
    plan_ref = str(stored.id) if stored else "inline"

    # (2) Approval gate, failing closed.
    approvals = {"total": 0, "eligible": 0, "skipped": 0}
    items = await approvals_service.list_items(session, plan_id=stored.id) if stored else []
    if items:
        decided = {item.post_id: item for item in items if item.status in ("approved", "edited")}
        approvals["total"] = len(items)
        if not decided:
            raise ValidationFailed(
                "no approval item of this plan is approved or edited",
                recover_with="decide the items with respond_plan_approval first",
            )
        eligible = []
        for post in raw_posts:
            item = decided.get(str(post.get("id")))
            if item is None:
                continue
            overlay = {name: value for name, value in (item.edited_post or {}).items() if name in OVERLAY_FIELDS}
            eligible.append({**post, **overlay})
    else:
        approvals["total"] = len(raw_posts)
        eligible = [post for post in raw_posts if post.get("status") not in ("rejected", "needs_edit")]
    approvals["eligible"] = len(eligible)
    approvals["skipped"] = len(raw_posts) - len(eligible)

    results: list[dict[str, Any]] = []
    candidates: list[dict[str, Any]] = []
    for post in eligible:
        platform = canonical_platform(str(post.get("platform") or ""))
        if platform not in social_platforms.RULES:
            results.append(_failure(post, f"unknown platform {post.get('platform')!r}", "platform_policy"))
            continue
        # The idempotency key uses the time the plan gave, not an auto-assigned slot: a repeat of the call
        # would otherwise pick the next free slot (this post now occupies the first) and schedule it twice.
        candidates.append(
            {
                **post,
                "platform": platform,
                "caption": str(post.get("caption") or ""),
                GIVEN_TIME: post.get("schedule_at"),
            }
        )

    # (3) Slots for posts without a time: from tomorrow 00:00 UTC, 4 h apart per platform, in post order.
    if auto_slot and any(not post.get("schedule_at") for post in candidates):
        tomorrow = utcnow().replace(hour=0, minute=0, second=0, microsecond=0) + timedelta(days=1)
        planner = await slots.slot_planner(
            session=session,
            project_id=project_id,
            platforms=[post["platform"] for post in candidates],
            start=tomorrow - timedelta(microseconds=1),
            min_gap_hours=4,
        )
        for post in candidates:
            if post.get("schedule_at"):
                continue
            slot = planner.pick(post["platform"])
            if slot is not None:
                post["schedule_at"] = iso(slot.moment)

    # (4) Quality gate per post, for its own platform, with the project's brand: its avoid patterns and
    # banned terms are blocked terms.
    threshold = quality_threshold if quality_threshold is not None else DEFAULT_THRESHOLD
    runtime = await brand_service.get_runtime(session=session, project_id=project_id)
    judge = quality_service.BrandJudge(
        runtime, keyword=settings.quality.brand_keyword, avoid_patterns=[], banned_terms=[]
    )
    brand = BrandContext.from_runtime(runtime)
    recent = await quality_service.recent_posts(session, project_id=project_id)
    for post in candidates:
        text = f"{post.get('title') or ''} {post['caption']}".strip()
        quality = quality_service.score_post(
            quality_service.PostInput(
                caption=post["caption"],
                platforms=(post["platform"],),
                title=post.get("title"),
                media_url=post.get("media_url"),
                plan_post=True,
            ),
            brand=_signals_for(judge, brand, post["platform"], text),
            recent=quality_service.others(recent, post["caption"]),
            threshold=threshold,
        )
        post["quality"] = {
            "score": quality.total,
            "max_score": 35,
            "passed": quality.passed,
            "blockers": quality.blockers,
        }

    if dry_run:  # (5)
        passed = sum(1 for post in candidates if post["quality"]["passed"])
        summary = {
            "total_posts": len(candidates) + len(results),
            "passed": passed,
            "failed": len(candidates) + len(results) - passed,
        }
        if stored is not None:
            stored.payload = {**stored.payload, "quality_summary": summary}
            await session.flush()
        return PlanScheduling(
            plan_id=stored.id if stored else None,
            approvals=approvals,
            posts=[*results, *({k: v for k, v in post.items() if k != GIVEN_TIME} for post in candidates)],
            summary=summary,
            dry_run=True,
        )

    # (6) Account routing for every platform, before anything is created or debited.
    merged: dict[str, str] = {}
    sources = [plan_accounts, account_ids or {}] + [
        {post["platform"]: post["connected_account_id"]} for post in candidates if post.get("connected_account_id")
    ]
    for source in sources:
        for name, value in source.items():
            platform = canonical_platform(str(name))
            if merged.get(platform, str(value)) != str(value):
                raise ValidationFailed(
                    f"conflicting account ids for {platform}",
                    field_errors=[{"path": "account_ids", "message": f"two ids for {platform}"}],
                )
            merged[platform] = str(value)
    to_route = [post for post in candidates if not (enforce_quality and not post["quality"]["passed"])]
    routed = (
        await accounts_service.route(
            session=session,
            project_id=project_id,
            platforms=sorted({post["platform"] for post in to_route}),
            account_ids={
                platform: merged[platform] for platform in merged if platform in {post["platform"] for post in to_route}
            },
        )
        if to_route
        else {}
    )

    # (7) Schedule, grouped by platform, batch_size at a time (each post in a savepoint of its own).
    scheduler = _Scheduler(
        session=session,
        settings=settings,
        fetcher=Fetcher(settings.fetch),
        charge=charge,
        account_id=account_id,
        project_id=project_id,
        accessible_project_ids=accessible_project_ids,
        enforce_quality=enforce_quality,
        idempotency_seed=idempotency_seed,
    )
    ordered = sorted(candidates, key=lambda post: post["platform"])
    for start in range(0, len(ordered), batch_size):
        for post in ordered[start : start + batch_size]:
            results.append(await _schedule_one(scheduler, post, routed, plan_ref, stored))
    scheduled = sum(1 for result in results if result.get("success"))
    summary = {"total_posts": len(results), "scheduled": scheduled, "failed": len(results) - scheduled}

    # (8) Plan status and summary.
    if stored is not None:
        _move(stored, "scheduled" if summary["failed"] == 0 and scheduled else "approved")
        by_id = {str(result.get("id")): result for result in results}
        posts_payload = [
            dict(post, schedule_result=by_id[str(post.get("id"))]) if str(post.get("id")) in by_id else post
            for post in stored.payload.get("posts", [])
        ]
        stored.payload = {**stored.payload, "posts": posts_payload, "schedule_summary": summary}
        await session.flush()
    return PlanScheduling(
        plan_id=stored.id if stored else None, approvals=approvals, posts=results, summary=summary, dry_run=False
    )


def _signals_for(
    judge: quality_service.BrandJudge, brand: BrandContext, platform: str, text: str
) -> quality_service.BrandSignals:
    """The brand signals of one post: the brand's terms plus its platform override's avoid patterns."""
    signals = judge.signals(text)
    voice = brand.voice_for(platform)
    if voice is None or not voice.avoid_patterns:
        return signals
    return dataclasses.replace(signals, avoid_patterns=signals.avoid_patterns + voice.avoid_patterns)


def _move(plan: ContentPlan, target: str) -> None:
    """Plan status along the state machine (draft/in_review pass through approved)."""
    try:
        if plan.status == target:
            return
        if plan.status in ("draft", "in_review"):
            planning_service.transition(plan, "approved")
        if plan.status != target:
            planning_service.transition(plan, target)
    except Conflict:
        return  # a completed plan stays completed


async def _schedule_one(
    scheduler: _Scheduler,
    post: dict[str, Any],
    routed: dict[str, Any],
    plan_ref: str,
    stored: ContentPlan | None,
) -> dict[str, Any]:
    session = scheduler.session
    if stored is not None:
        # A post of this plan that is already live (scheduled by run_content_pipeline, or an earlier
        # run under another seed) is reported, never scheduled or charged a second time.
        existing = await session.scalar(
            select(Post).where(
                Post.plan_id == stored.id,
                Post.plan_post_id == str(post.get("id")),
                Post.platform == post["platform"],
                Post.status.not_in(("cancelled", "failed")),
            )
        )
        if existing is not None:
            return {
                "id": post.get("id"),
                "platform": post["platform"],
                "success": True,
                "post_id": str(existing.id),
                "job_id": str(existing.job_id) if existing.job_id else None,
            }
    quality = post["quality"]
    if scheduler.enforce_quality and not quality["passed"]:
        safety = any(blocker.startswith("Contains blocked term") for blocker in quality["blockers"])
        return {
            **_failure(
                post,
                "quality gate: " + "; ".join(quality["blockers"] or ["score below threshold"]),
                "safety" if safety else "quality",
            ),
            "quality": quality,
        }
    if not post.get("schedule_at"):
        return _failure(post, "no free slot in the next 7 days", "platform_policy")
    key = post_key(
        plan_id=plan_ref,
        post_id=str(post.get("id")),
        platform=post["platform"],
        schedule_at=post.get(GIVEN_TIME),
        caption=post["caption"],
        seed=scheduler.idempotency_seed,
    )
    previous = await service.previous_plan_post(session=session, project_id=scheduler.project_id, key=key)
    if previous is not None:
        return previous.document()
    try:
        scheduled = await service.schedule_plan_post(
            session=session,
            settings=scheduler.settings,
            fetcher=scheduler.fetcher,
            charge=scheduler.charge,
            account_id=scheduler.account_id,
            project_id=scheduler.project_id,
            accessible_project_ids=scheduler.accessible_project_ids,
            post=post,
            account=routed[post["platform"]],
            schedule_at=str(post["schedule_at"]),
            key=key,
            plan_id=stored.id if stored else None,
        )
    except BillingFailed as error:
        return _failure(post, error.message, "unknown")
    except NotFound as error:
        return _failure(post, error.message, "unknown")
    except ValidationFailed as error:
        kind = "platform_policy"
        if any(item.get("path") == "schedule_at" for item in error.details.get("field_errors", [])):
            kind = "unknown"
        return _failure(post, error.message, kind)
    except ToolError as error:
        return _failure(
            post,
            error.message,
            "transport" if error.error_type == "upstream_error" else "unknown",
            retryable=error.error_type == "upstream_error",
        )
    return scheduled.document()
