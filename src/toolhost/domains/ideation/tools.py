"""The ideation tools: trends, ideation context and next-content suggestions; and planning's plan_content_week,
which lives here because it reads its source URL as extract_url_content does (planning sits below ideation).
find_winning_content ranks measured posts, so it lives with analytics (analytics/tools.py).
"""

from __future__ import annotations

import functools
from datetime import datetime
from typing import Any

from toolhost.domains.ideation import service, url_content
from toolhost.domains.ideation.schemas import (
    ExtractUrlContentIn,
    ExtractUrlContentOut,
    FetchTrendsIn,
    FetchTrendsOut,
    GetIdeationContextIn,
    GetIdeationContextOut,
    Suggestion,
    SuggestNextContentIn,
    SuggestNextContentOut,
    Trend,
)
from toolhost.domains.ideation.youtube import ConnectedYouTube
from toolhost.domains.planning import service as planning_service
from toolhost.domains.planning.schemas import PlanContentWeekIn, PlanContentWeekOut
from toolhost.platform.context import ToolContext
from toolhost.platform.dates import as_utc, iso, parse_iso
from toolhost.platform.registry import tool
from toolhost.providers.fetch import Fetcher


@tool(
    module="ideation",
    scope="mcp:read",
    read_only=True,
    idempotent=True,
    project="optional",
    response_format=None,
    text_shape="summary",
)
async def fetch_trends(ctx: ToolContext, args: FetchTrendsIn) -> FetchTrendsOut:
    """Finds current topics in an RSS/Atom feed (source rss) or a web page (source url), ranked by recency and
    how often a topic recurs; source youtube lists the most-viewed videos for the niche (else YouTube's
    most-popular chart) through a YouTube channel connected to one of your projects; source internal lists the
    project's own five posts with most engagement over 90 days (their openings and figures), once 3 or more
    published posts have metrics.

    Results are cached for an hour per feed (force_refresh skips the cache) and recorded in the account's
    swipe file, which suggest_next_content draws on. Next: generate_content or plan_content_week on a trend.
    """
    youtube = None
    if args.source == "youtube":
        youtube = await ConnectedYouTube.load(session=ctx.session, settings=ctx.settings, principal=ctx.principal)
    fetched = await service.fetch_trends(
        session=ctx.session,
        settings=ctx.settings,
        account_id=ctx.principal.account_id,
        project_id=ctx.project.id if ctx.project else None,
        source=args.source,
        category=args.category,
        niche=args.niche,
        url=args.url,
        force_refresh=args.force_refresh,
        youtube=youtube,
    )
    return FetchTrendsOut(
        trends=[Trend.model_validate(trend) for trend in fetched.trends],
        source=args.source,
        category=args.category,
        cached=fetched.cached,
        expiresAt=iso(fetched.expires_at),
        count=len(fetched.trends),
    )


@tool(module="ideation", scope="mcp:read", read_only=True, idempotent=True, project="strict")
async def get_ideation_context(ctx: ToolContext, args: GetIdeationContextIn) -> GetIdeationContextOut:
    """Summarizes what has worked for the project over `days` days (top hooks, hook types, formats, CTA styles,
    subjects, best posting time, what underperformed) from its published posts' metrics, as data and as one
    prompt paragraph; with fewer than 3 measured posts it says so and falls back to the brand's content pillars.

    generate_content and plan_content_week load it themselves; call it to see what they will use.
    """
    context = await service.ideation_context(session=ctx.session, project_id=ctx.project_id, days=args.days)
    return GetIdeationContextOut(
        projectId=str(context.project_id),
        hasHistoricalData=context.has_historical_data,
        promptInjection=context.prompt_injection,
        recommendedModel=context.recommended_model,
        recommendedDuration=context.recommended_duration,
        recommendedPostingTime=context.recommended_posting_time.record() if context.recommended_posting_time else None,
        winningPatterns=context.winning_patterns,
        topHooks=context.top_hooks,
        insightsCount=context.insights_count,
        generatedAt=context.generated_at,
        topTopics=context.top_topics,
        underperformed=context.underperformed,
    )


@tool(module="ideation", scope="mcp:read", read_only=True, idempotent=True, project="optional")
async def suggest_next_content(ctx: ToolContext, args: SuggestNextContentIn) -> SuggestNextContentOut:
    """Suggests what to post next from stored evidence: the openings of the project's best-performing posts
    (hook insights), the swipe file's most-viewed items not yet covered, under-used content types and a
    behind-the-scenes post from the brand's pillars. data_quality counts measured posts (10+ strong, 3+ moderate).

    Every suggestion lists what it is based_on; nothing is invented, so with little data there are few
    suggestions. Next: generate_content or plan_content_week with a suggested topic.
    """
    project_ids = [ctx.project.id] if ctx.project else list(ctx.accessible_project_ids)
    result = await service.suggest_next(
        session=ctx.session,
        account_id=ctx.principal.account_id,
        project_ids=project_ids,
        brand_project_id=ctx.project.id if ctx.project else None,
        count=args.count,
        platforms=args.platforms,
    )
    return SuggestNextContentOut(
        suggestions=[Suggestion.model_validate(item, from_attributes=True) for item in result.suggestions],
        data_quality=result.data_quality,
        last_analysis_at=iso(result.last_analysis_at),
    )


@tool(module="ideation", scope="mcp:read", read_only=True, idempotent=True, open_world=True)
async def extract_url_content(ctx: ToolContext, args: ExtractUrlContentIn) -> ExtractUrlContentOut:
    """Reads a URL and returns its content: an article's clean main text, title, author and date; a product
    page's features, benefits and USP; a feed's items; a YouTube video's or channel's metadata (through the
    YouTube connector when one of your projects has a connected YouTube account, else the page's own;
    transcripts only for a connected channel's own videos, otherwise extract_type transcript is
    not_found). Adds three suggested hooks and records the page in the account's swipe file. Next:
    generate_content or plan_content_week with it.
    """
    youtube = None
    if url_content.youtube_kind(args.url) is not None:
        youtube = await ConnectedYouTube.load(session=ctx.session, settings=ctx.settings, principal=ctx.principal)
    await ctx.commit()
    payload = await url_content.extract(Fetcher(ctx.settings.fetch), args.url, args.extract_type, youtube)
    if youtube is not None:
        youtube.store_refreshed()
    items = payload.get("items") or [
        {"url": payload["url"], "title": payload["title"], "views": _views(payload)},
        *(payload.get("recent_videos") or []),
    ]
    await service.record_swipe_items(
        ctx.session,
        account_id=ctx.principal.account_id,
        items=[
            service.SwipeEntry(
                url=item.get("url"),
                title=str(item.get("title") or ""),
                views=item.get("views"),
                published_at=_moment(item.get("published_at")),
            )
            for item in items
        ],
    )
    return ExtractUrlContentOut.model_validate(payload)


def _views(payload: dict[str, Any]) -> int | None:
    return (payload.get("video_metadata") or {}).get("views")


def _moment(value: object) -> datetime | None:
    """An ISO-8601 publication time as the swipe file stores it (None when absent or unreadable)."""
    if not isinstance(value, str):
        return None
    try:
        return as_utc(parse_iso(value))
    except ValueError:
        return None


@tool(
    module="planning",
    scope="mcp:write",
    credits=lambda args: planning_service.plan_credits(args.source_url),
    project="strict",
    response_format="json",
    category="generation",
)
async def plan_content_week(ctx: ToolContext, args: PlanContentWeekIn) -> PlanContentWeekOut:
    """Plans up to a week of posts on a topic: one per platform per day (posts_per_day more), each with hook,
    angle, caption, hashtags and media type, rotating hook types, brand pillars and formats.

    The plan is stored as a draft. Next: quality_check_plan, update_content_plan (media_url for instagram,
    tiktok and youtube posts), then submit_content_plan_for_approval.
    """
    youtube = None
    if args.source_url and url_content.youtube_kind(args.source_url) is not None:
        youtube = await ConnectedYouTube.load(session=ctx.session, settings=ctx.settings, principal=ctx.principal)
    context = await service.ideation_context(session=ctx.session, project_id=ctx.project_id, days=30)
    plan = await planning_service.plan_week(
        session=ctx.session,
        settings=ctx.settings,
        project_id=ctx.project_id,
        insights=context.plan_insights(),
        topic=args.topic,
        source_url=args.source_url,
        platforms=list(dict.fromkeys(args.platforms)),
        posts_per_day=args.posts_per_day,
        days=args.days,
        start_date=args.start_date,
        brand_voice=args.brand_voice,
        read_page=functools.partial(
            url_content.extract, Fetcher(ctx.settings.fetch), extract_type="auto", youtube=youtube
        ),
    )
    if youtube is not None:
        youtube.store_refreshed()
    return PlanContentWeekOut.model_validate({**plan.payload, "status": plan.status})
