"""The quality gate tools: score a post, score a plan, and the visual gate of carousel slides."""

from __future__ import annotations

from toolhost.domains.quality import service, visual
from toolhost.domains.quality.schemas import (
    OverflowIssue,
    PlanQualitySummary,
    PreRender,
    QualityCategory,
    QualityCheckIn,
    QualityCheckOut,
    QualityCheckPlanIn,
    QualityCheckPlanOut,
    SpellingIssue,
    VisualGateConstraintsIn,
    VisualGateConstraintsOut,
    VisualQualityCheckIn,
    VisualQualityCheckOut,
)
from toolhost.domains.quality.scoring import MAX_TOTAL
from toolhost.platform.context import ToolContext
from toolhost.platform.dates import iso
from toolhost.platform.registry import tool


def _overflow_issue(overflow: visual.Overflow) -> OverflowIssue:
    return OverflowIssue(
        slideIdx=overflow.slide_index,
        field=overflow.field,
        kind=overflow.kind,
        detail=overflow.detail,
        estimatedLines=overflow.estimated_lines,
        maxLines=overflow.max_lines,
    )


@tool(module="quality", scope="mcp:read", read_only=True, idempotent=True, project="optional")
async def quality_check(ctx: ToolContext, args: QualityCheckIn) -> QualityCheckOut:
    """Scores a post before it is published: seven categories (hook, clarity, platform fit, brand alignment,
    novelty, CTA, safety/claims) of 0-5 each, with a sentence per category saying why.

    passed = total >= threshold (26 by default) with no category below 3 and no blocked term. With a project
    it uses the project's brand and recent posts. Fix what the blockers name, then check again.
    """
    result = await service.check(
        session=ctx.session,
        project_id=ctx.project.id if ctx.project else None,
        caption=args.caption,
        title=args.title,
        platforms=list(args.platforms),
        threshold=args.threshold,
        keyword=args.brand_keyword or ctx.settings.quality.brand_keyword,
        avoid_patterns=args.brand_avoid_patterns,
        banned_terms=args.custom_banned_terms,
    )
    return QualityCheckOut(
        threshold=args.threshold,
        total=result.total,
        maxTotal=MAX_TOTAL,
        categories=[
            QualityCategory(name=item.name, score=item.score, maxScore=item.max_score, detail=item.detail)
            for item in result.categories
        ],
        blockers=result.blockers,
        passed=result.passed,
    )


@tool(module="quality", scope="mcp:read", read_only=True, idempotent=True, project="optional")
async def quality_check_plan(ctx: ToolContext, args: QualityCheckPlanIn) -> QualityCheckPlanOut:
    """Scores every post of a plan for its own platform and summarizes how many pass.

    A post for a platform that needs media (instagram, tiktok, youtube) without media_url is flagged, so it
    is fixed before approval. Next: update_content_plan failing posts, then submit_content_plan_for_approval.
    """
    posts = [post.model_dump() for post in args.plan.posts]
    scored, summary = await service.check_plan(
        session=ctx.session,
        project_id=ctx.project.id if ctx.project else None,
        posts=posts,
        threshold=args.threshold,
        keyword=ctx.settings.quality.brand_keyword,
    )
    return QualityCheckPlanOut(
        posts=scored,
        totals=PlanQualitySummary(
            total_posts=summary.total_posts, passed=summary.passed, failed=summary.failed, avg_score=summary.avg_score
        ),
    )


@tool(module="quality", scope="mcp:read", read_only=True, idempotent=True, project="optional")
async def visual_quality_check(ctx: ToolContext, args: VisualQualityCheckIn) -> VisualQualityCheckOut:
    """Checks carousel slides before rendering: predicts from the renderer's font metrics whether each
    field (headline, body, bullets, footnote...) fits its layout's lines, flags high-risk slides and words
    in neither the English word list nor the project's brand vocabulary.

    passed = no overflow issue. Use it on generate_carousel's slides (visual_style: minimal/professional ->
    clean-editorial, bold/hormozi -> bold-authority, playful -> dark-cinematic) before create_carousel;
    when it fails, shorten what correctiveHint names and check again. Limits: visual_gate_constraints.
    """
    check = await visual.visual_check(
        session=ctx.session,
        project_id=ctx.project.id if ctx.project else None,
        slides=[slide.model_dump(exclude_none=True) for slide in args.slides],
        visual_style=args.visual_style,
    )
    verdict = check.verdict
    return VisualQualityCheckOut(
        passed=verdict.passed,
        preRender=PreRender(
            ok=verdict.passed,
            overflowIssues=[_overflow_issue(overflow) for overflow in verdict.overflows],
            spellingIssues=[
                SpellingIssue(slideIdx=issue.slide_index, field=issue.field, word=issue.word)
                for issue in verdict.misspellings
            ],
            highRiskSlideIdx=verdict.high_risk_slides,
        ),
        # The gate never renders, so there is never a render attempt to count.
        attempts=0,
        elapsedMs=check.elapsed_ms,
        checkedAt=iso(check.checked_at),
        correctiveHint=verdict.corrective_hint,
    )


@tool(module="quality", scope="mcp:read", read_only=True, idempotent=True, response_format="json")
async def visual_gate_constraints(ctx: ToolContext, args: VisualGateConstraintsIn) -> VisualGateConstraintsOut:
    """The visual gate's limits: for each of the seven slide layouts (or the one named), every text field's
    font size, wrap width in pixels, expected and maximum lines, and whether it is single-line or
    upper-cased. Read it before writing slide text; visual_quality_check applies these limits.
    """
    return VisualGateConstraintsOut(layouts=visual.constraints(args.layout))
