"""fetch_youtube_analytics: live reports of the YouTube Analytics API through the routed YouTube account."""

from __future__ import annotations

import uuid
from dataclasses import dataclass
from datetime import date
from typing import Any
from urllib.parse import urlencode

from sqlalchemy import select
from sqlalchemy.ext.asyncio import AsyncSession

from toolhost.config import Settings
from toolhost.db.session import end_unit_of_work
from toolhost.domains.distribution import service as accounts_service
from toolhost.domains.distribution.models import ConnectedAccount
from toolhost.platform.results import ValidationFailed
from toolhost.providers.connectors.registry import Connectors
from toolhost.providers.connectors.vault import TokenVault
from toolhost.providers.connectors.youtube import YouTubeConnector

TOTALS = (
    "views",
    "estimatedMinutesWatched",
    "subscribersGained",
    "subscribersLost",
    "likes",
    "dislikes",
    "comments",
    "shares",
)
DAILY = ("views", "estimatedMinutesWatched", "subscribersGained", "subscribersLost", "likes", "comments", "shares")
TOP = ("views", "estimatedMinutesWatched", "likes", "comments")
RENAMED = {"estimatedMinutesWatched": "watchTimeMinutes"}


async def _account(session: AsyncSession, project_id: uuid.UUID, connected_account_id: str | None) -> ConnectedAccount:
    """The routed YouTube account: the given id in this project, else the single usable one."""
    accounts = [
        account
        for account in await session.scalars(
            select(ConnectedAccount).where(
                ConnectedAccount.project_id == project_id,
                ConnectedAccount.platform == "youtube",
                ConnectedAccount.connector == "youtube",
            )
        )
        if accounts_service.is_usable(account)
    ]
    if connected_account_id is not None:
        wanted = uuid.UUID(connected_account_id)
        for account in accounts:
            if account.id == wanted:
                return account
        raise ValidationFailed(
            "connected_account_id is not a usable YouTube account of this project",
            field_errors=[{"path": "connected_account_id", "message": "no usable YouTube account with this id"}],
        )
    if not accounts:
        raise ValidationFailed(
            f"no active YouTube account is bound to project {project_id}",
            recover_with="call start_platform_connection with platform youtube",
        )
    if len(accounts) > 1:
        raise ValidationFailed(
            "several YouTube accounts are connected: pass connected_account_id",
            candidates=[{"id": str(account.id), "username": account.username} for account in accounts],
        )
    return accounts[0]


def _rows(report: dict[str, Any]) -> list[dict[str, Any]]:
    names = [str(header.get("name")) for header in report.get("columnHeaders") or []]
    return [dict(zip(names, row, strict=False)) for row in report.get("rows") or [] if isinstance(row, list)]


def _number(value: Any) -> float:
    return float(value) if isinstance(value, int | float) and not isinstance(value, bool) else 0.0


def _counts(row: dict[str, Any], metrics: tuple[str, ...]) -> dict[str, Any]:
    """A report row's figures by YouTube's metric names (watch time renamed): the API names them, not toolhost."""
    values: dict[str, Any] = {}
    for metric in metrics:
        number = _number(row.get(metric))
        values[RENAMED.get(metric, metric)] = number if metric == "estimatedMinutesWatched" else int(number)
    return values


@dataclass(frozen=True, slots=True)
class Report:
    """A YouTube Analytics report: the channel's or a video's totals, one row per day, or the top videos.

    Rows are keyed by YouTube's metric names, as the API returns them.
    """

    totals: dict[str, Any] | None = None
    daily: list[dict[str, Any]] | None = None
    video_id: str | None = None
    average_view_duration: int | None = None
    top_videos: list[dict[str, Any]] | None = None


async def fetch(
    *,
    session: AsyncSession,
    settings: Settings,
    project_id: uuid.UUID,
    action: str,
    start_date: date,
    end_date: date,
    video_id: str | None,
    max_results: int,
    connected_account_id: str | None,
) -> Report:
    """Runs the report the action asks for through the account's YouTube connector."""
    connector = Connectors(settings).get("youtube")
    if not isinstance(connector, YouTubeConnector):
        raise ValidationFailed(
            "the youtube connector is not configured on this server",
            recover_with="an operator sets distribution.connectors.youtube_client_id and youtube_client_secret",
        )
    account = await _account(session, project_id, connected_account_id)
    # The report calls come next: no transaction is held across them.
    await end_unit_of_work(session)
    vault = TokenVault(settings.keyring)
    view = accounts_service.session_of(account, vault)
    root = settings.distribution.connectors.youtube_analytics_url.rstrip("/")
    base = {"ids": "channel==MINE", "startDate": start_date.isoformat(), "endDate": end_date.isoformat()}

    async def report(**query: Any) -> list[dict[str, Any]]:
        # The connector's authorised read (token refresh, upstream errors) serves both Google APIs.
        return _rows(await connector._read(view, f"{root}/reports?{urlencode({**base, **query})}"))

    if action == "channel":
        rows = await report(metrics=",".join(TOTALS))
        result = Report(totals=_counts(rows[0] if rows else {}, TOTALS))
    elif action == "daily":
        rows = await report(metrics=",".join(DAILY), dimensions="day", sort="day")
        result = Report(daily=[{"date": str(row.get("day")), **_counts(row, DAILY)} for row in rows])
    elif action == "video":
        metrics = (*TOTALS, "averageViewDuration")
        rows = await report(metrics=",".join(metrics), filters=f"video=={video_id}")
        counts = _counts(rows[0] if rows else {}, metrics)
        duration = counts.pop("averageViewDuration")
        result = Report(totals=counts, video_id=video_id, average_view_duration=duration)
    else:
        rows = await report(metrics=",".join(TOP), dimensions="video", sort="-views", maxResults=str(max_results))
        ids = [str(row.get("video")) for row in rows if row.get("video")]
        snippets: dict[str, dict[str, Any]] = {}
        if ids:
            query = urlencode({"part": "snippet", "id": ",".join(ids)})
            videos = await connector._read(view, f"{connector.api_url}/videos?{query}")
            snippets = {str(video.get("id")): video.get("snippet") or {} for video in videos.get("items") or []}
        result = Report(
            top_videos=[
                {
                    "videoId": str(row.get("video")),
                    "title": str(snippets.get(str(row.get("video")), {}).get("title") or ""),
                    "thumbnail": (
                        (snippets.get(str(row.get("video")), {}).get("thumbnails") or {}).get("default") or {}
                    ).get("url"),
                    **_counts(row, TOP),
                }
                for row in rows
            ]
        )
    accounts_service.store_refreshed(account, view, vault)
    return result
