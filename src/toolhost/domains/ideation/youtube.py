"""extract_url_content's and fetch_trends' YouTube side through the YouTube connector and the caller's connected
channels.

With the connector configured and a usable YouTube account in one of the caller's projects, videos and
channels are read from the Data API (views, likes, duration, tags, recent uploads). Captions are read only
for a video of a connected channel: the Data API gives captions to the channel that owns the video.
Videos and channels come back as parts of extract_url_content's page dict, trends as fetch_trends' trend dicts.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING, Any
from urllib.parse import parse_qs, urlsplit

from sqlalchemy import select
from sqlalchemy.ext.asyncio import AsyncSession

from toolhost.domains.distribution import service as accounts_service
from toolhost.domains.distribution.models import ConnectedAccount
from toolhost.domains.ideation.trends import TrendRecord
from toolhost.platform.models import Project
from toolhost.platform.results import NotFound
from toolhost.providers.connectors.base import AccountSession
from toolhost.providers.connectors.registry import Connectors
from toolhost.providers.connectors.vault import TokenVault
from toolhost.providers.connectors.youtube import YouTubeConnector

if TYPE_CHECKING:
    from toolhost.config import Settings
    from toolhost.platform.context import Principal

RECENT_VIDEOS = 10
TREND_VIDEOS = 25
NO_TRANSCRIPT_RECOVERY = (
    "captions come only through the YouTube connector for a video of a channel connected to one of your "
    "projects (start_platform_connection, platform youtube); use extract_type auto for the metadata"
)


def video_id(url: str) -> str | None:
    """The video id of a youtube.com/watch, /shorts/, /live/ or youtu.be URL."""
    parts = urlsplit(url)
    host = (parts.hostname or "").lower()
    path = parts.path.strip("/")
    if host == "youtu.be":
        return path.split("/")[0] or None
    if path == "watch":
        values = parse_qs(parts.query).get("v")
        return values[0] if values else None
    head, _, rest = path.partition("/")
    if head in ("shorts", "live") and rest:
        return rest.split("/")[0]
    return None


def channel_lookup(url: str) -> tuple[str, str] | None:
    """The Data API's channel filter for a channel URL: (`forHandle`|`id`|`forUsername`, value)."""
    segments = urlsplit(url).path.strip("/").split("/")
    if segments and segments[0].startswith("@") and len(segments[0]) > 1:
        return "forHandle", segments[0]
    if len(segments) >= 2 and segments[0] == "channel":
        return "id", segments[1]
    if len(segments) >= 2 and segments[0] == "user":
        return "forUsername", segments[1]
    if len(segments) >= 2 and segments[0] == "c":
        return "forHandle", "@" + segments[1]  # legacy custom URLs now resolve as handles
    return None


@dataclass
class ConnectedYouTube:
    """The YouTube connector with the caller's usable YouTube accounts (token refreshes are stored back)."""

    connector: YouTubeConnector
    accounts: list[tuple[ConnectedAccount, AccountSession]]
    vault: TokenVault

    @classmethod
    async def load(cls, *, session: AsyncSession, settings: Settings, principal: Principal) -> ConnectedYouTube | None:
        """None unless the connector is configured and a project the caller may use (its key's bound
        project, else any of its account's) has a usable YouTube account."""
        connector = Connectors(settings).get("youtube")
        if not isinstance(connector, YouTubeConnector):
            return None
        query = (
            select(ConnectedAccount)
            .join(Project, Project.id == ConnectedAccount.project_id)
            .where(
                Project.account_id == principal.account_id,
                ConnectedAccount.platform == "youtube",
                ConnectedAccount.connector == "youtube",
            )
            .order_by(ConnectedAccount.created_at)
        )
        if principal.project_id is not None:
            query = query.where(Project.id == principal.project_id)
        rows = await session.scalars(query)
        vault = TokenVault(settings.keyring)
        usable = [account for account in rows if accounts_service.is_usable(account)]
        if not usable:
            return None
        sessions = [(account, accounts_service.session_of(account, vault)) for account in usable]
        return cls(connector, sessions, vault)

    def store_refreshed(self) -> None:
        """Writes back token material the connector refreshed while reading."""
        for account, account_session in self.accounts:
            accounts_service.store_refreshed(account, account_session, self.vault)

    def _owner(self, channel_id: str | None) -> AccountSession | None:
        for account, account_session in self.accounts:
            if channel_id and account.settings.get("channel_id") == channel_id:
                return account_session
        return None

    async def read_video(self, url: str, extract_type: str) -> dict[str, Any]:
        """A video's metadata, and its captions when it belongs to a connected channel."""
        identifier = video_id(url)
        if not identifier:
            raise NotFound("the URL names no YouTube video", recover_with="give a youtube.com/watch?v=… URL")
        reader = self.accounts[0][1]
        video = await self.connector.video(reader, identifier)
        if video is None:
            raise NotFound(f"YouTube shows no video {identifier} (private, removed or never published)")
        snippet = video.get("snippet") or {}
        owner = self._owner(snippet.get("channelId"))
        transcript = await self.connector.caption_text(owner, identifier) if owner is not None else None
        if extract_type == "transcript" and not transcript:
            raise NotFound(
                "No transcript available for this video"
                + ("" if owner is not None else ": it does not belong to a connected channel"),
                recover_with=NO_TRANSCRIPT_RECOVERY,
            )
        statistics = video.get("statistics") or {}
        payload: dict[str, Any] = {
            "title": str(snippet.get("title") or ""),
            "description": str(snippet.get("description") or ""),
            "video_metadata": {
                "views": _count(statistics.get("viewCount")),
                "likes": _count(statistics.get("likeCount")),
                "duration": (video.get("contentDetails") or {}).get("duration"),
                "tags": [str(tag) for tag in snippet.get("tags") or []][:30],
                "channel_name": snippet.get("channelTitle"),
            },
        }
        if transcript:
            payload["transcript"] = transcript
        return payload

    async def read_channel(self, url: str) -> dict[str, Any] | None:
        """A channel's title, description and recent uploads; None when the URL is no channel URL."""
        lookup = channel_lookup(url)
        if lookup is None:
            return None
        reader = self.accounts[0][1]
        channel = await self.connector.channel(reader, key=lookup[0], value=lookup[1])
        if channel is None:
            raise NotFound(f"YouTube shows no channel {lookup[1]}")
        snippet = channel.get("snippet") or {}
        uploads = ((channel.get("contentDetails") or {}).get("relatedPlaylists") or {}).get("uploads")
        videos = await self.connector.recent_uploads(reader, str(uploads), limit=RECENT_VIDEOS) if uploads else []
        return {
            "title": str(snippet.get("title") or ""),
            "description": str(snippet.get("description") or ""),
            "recent_videos": [
                {
                    "title": str((video.get("snippet") or {}).get("title") or ""),
                    "url": f"https://www.youtube.com/watch?v={video.get('id')}",
                    "published_at": (video.get("snippet") or {}).get("publishedAt"),
                    "views": _count((video.get("statistics") or {}).get("viewCount")),
                }
                for video in videos
            ],
        }

    async def trends(self, *, niche: str | None, category: str) -> list[TrendRecord]:
        """The most-viewed videos for the niche (a search), else YouTube's most-popular chart, as trends."""
        videos = await self.connector.popular_videos(self.accounts[0][1], query=niche, limit=TREND_VIDEOS)
        found = []
        for video in videos:
            snippet = video.get("snippet") or {}
            title = " ".join(str(snippet.get("title") or "").split())
            if not title:
                continue
            trend: TrendRecord = {
                "title": title[:1000],
                "url": f"https://www.youtube.com/watch?v={video.get('id')}",
                "views": _count((video.get("statistics") or {}).get("viewCount")),
                "source": "youtube",
                "category": category,
            }
            description = " ".join(str(snippet.get("description") or "").split())
            if description:
                trend["description"] = description[:500]
            if snippet.get("publishedAt"):
                trend["publishedAt"] = str(snippet["publishedAt"])
            thumbnail = ((snippet.get("thumbnails") or {}).get("high") or {}).get("url")
            if thumbnail:
                trend["thumbnail"] = str(thumbnail)[:2048]
            found.append(trend)
        return found


def _count(value: object) -> int | None:
    try:
        return int(str(value))
    except ValueError:
        return None
