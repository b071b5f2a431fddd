"""The `youtube` connector: OAuth 2.0 with refresh, resumable video upload, statistics and comments.

Idempotency: YouTube has no idempotency key, but a resumable upload session has a URI that lives for
days. The URI is saved before any byte is sent; a retry asks the session how far it got (a PUT with
`Content-Range: bytes */<size>`): 200/201 means the video already exists and its id is returned,
308 means resume from the acknowledged offset. So a crash mid-upload never yields a second video.
"""

from __future__ import annotations

import json
import re
from datetime import UTC, datetime, timedelta
from typing import Any, ClassVar
from urllib.parse import urlencode

from toolhost.platform.results import ValidationFailed
from toolhost.providers.connectors.base import (
    COMMENTS_DELETE,
    COMMENTS_LIST,
    COMMENTS_MODERATE,
    COMMENTS_POST,
    COMMENTS_REPLY,
    METRICS,
    PUBLISH,
    AccountSession,
    Comment,
    Connector,
    ConnectResult,
    OutgoingPost,
    PublishContext,
    PublishFailed,
    PublishResult,
    bearer,
    json_body,
    raise_for_status,
    upstream,
)

SCOPES = " ".join(
    (
        "https://www.googleapis.com/auth/youtube.upload",
        "https://www.googleapis.com/auth/youtube.force-ssl",
        "https://www.googleapis.com/auth/yt-analytics.readonly",
    )
)
REFRESH_MARGIN = timedelta(seconds=60)
SETTINGS = (
    "TOOLHOST_DISTRIBUTION__CONNECTORS__YOUTUBE_CLIENT_ID",
    "TOOLHOST_DISTRIBUTION__CONNECTORS__YOUTUBE_CLIENT_SECRET",
)
MODERATION = {
    "hide": "heldForReview",
    "hold": "heldForReview",
    "reject": "rejected",
    "publish": "published",
    "approve": "published",
}


class YouTubeConnector(Connector):
    """Uploads videos to the authorized channel; reads statistics; manages comments."""

    name: ClassVar[str] = "youtube"
    platforms: ClassVar[tuple[str, ...]] = ("youtube",)
    media_kinds: ClassVar[tuple[str, ...]] = ("video",)
    capabilities: ClassVar[frozenset[str]] = frozenset(
        {PUBLISH, METRICS, COMMENTS_LIST, COMMENTS_REPLY, COMMENTS_POST, COMMENTS_MODERATE, COMMENTS_DELETE}
    )
    connect_fields: ClassVar[dict[str, str]] = {"refresh_token": "OAuth refresh token"}
    secret_fields: ClassVar[frozenset[str]] = frozenset({"refresh_token", "access_token"})

    def __init__(
        self,
        fetcher: Any,
        *,
        client_id: str | None,
        client_secret: str | None,
        auth_url: str,
        token_url: str,
        api_url: str,
        upload_url: str,
    ) -> None:
        super().__init__(fetcher)
        self.client_id = client_id
        self.client_secret = client_secret
        self.auth_url = auth_url
        self.token_url = token_url
        self.api_url = api_url.rstrip("/")
        self.upload_url = upload_url.rstrip("/")

    @property
    def configured(self) -> bool:
        """Whether the operator supplied OAuth client credentials."""
        return bool(self.client_id and self.client_secret)

    def required_settings(self) -> list[str]:
        """The operator's Google OAuth client."""
        return list(SETTINGS)

    def missing_settings(self) -> list[str]:
        """The OAuth client settings that are not set."""
        return [name for name, value in zip(SETTINGS, (self.client_id, self.client_secret), strict=True) if not value]

    def authorize_url(self, *, redirect_uri: str, state: str) -> str:
        """Google's consent page for the channel owner (offline access, so a refresh token comes back)."""
        query = urlencode(
            {
                "client_id": self.client_id,
                "redirect_uri": redirect_uri,
                "response_type": "code",
                "scope": SCOPES,
                "access_type": "offline",
                "prompt": "consent",
                "state": state,
                "include_granted_scopes": "true",
            }
        )
        return f"{self.auth_url}?{query}"

    async def _token(self, form: dict[str, str], action: str) -> dict[str, Any]:
        if not self.configured:
            raise PublishFailed("youtube: no OAuth client is configured", retryable=False)
        body = urlencode({**form, "client_id": self.client_id or "", "client_secret": self.client_secret or ""})
        response = await self.send(
            "POST",
            self.token_url,
            content=body.encode(),
            headers={"Content-Type": "application/x-www-form-urlencoded"},
        )
        if response.status in (400, 401):
            raise PublishFailed(
                f"youtube refused the grant while trying to {action}", retryable=False, authentication=True
            )
        raise_for_status("youtube", response, action)
        return json_body("youtube", response)

    async def exchange_code(self, *, code: str, redirect_uri: str) -> ConnectResult:
        """Trades the authorization code for tokens and reads the channel."""
        try:
            tokens = await self._token(
                {"grant_type": "authorization_code", "code": code, "redirect_uri": redirect_uri},
                "exchange the authorization code",
            )
        except PublishFailed as error:
            raise upstream(error, "youtube") from error
        return await self._connected(tokens)

    async def connect(self, *, platform: str, fields: dict[str, str]) -> ConnectResult:
        """Connects with a refresh token got elsewhere (scripts): refreshes it, then reads the channel."""
        refresh_token = (fields.get("refresh_token") or "").strip()
        if not refresh_token:
            raise ValidationFailed(
                "a YouTube connection needs an OAuth refresh token (or the OAuth flow)",
                field_errors=[{"path": "refresh_token", "message": "required"}],
            )
        try:
            tokens = await self._token(
                {"grant_type": "refresh_token", "refresh_token": refresh_token}, "refresh the token"
            )
        except PublishFailed as error:
            raise upstream(error, "youtube") from error
        return await self._connected({**tokens, "refresh_token": tokens.get("refresh_token") or refresh_token})

    async def _connected(self, tokens: dict[str, Any]) -> ConnectResult:
        if not tokens.get("refresh_token"):
            raise ValidationFailed("Google returned no refresh token; revoke toolhost's access and connect again")
        account = AccountSession(
            platform="youtube",
            username=None,
            settings={},
            secrets={"access_token": tokens["access_token"], "refresh_token": tokens["refresh_token"]},
            expires_at=_expiry(tokens),
        )
        try:
            channel = await self._api(
                account, "GET", f"{self.api_url}/channels?part=snippet&mine=true", action="read the channel"
            )
        except PublishFailed as error:
            raise upstream(error, "youtube") from error
        items = channel.get("items") or []
        if not items:
            raise ValidationFailed("this Google account has no YouTube channel")
        return ConnectResult(
            username=(items[0].get("snippet") or {}).get("title"),
            settings={"channel_id": items[0].get("id")},
            secrets=account.secrets,
            expires_at=account.expires_at,
        )

    async def _access_token(self, account: AccountSession, *, force: bool = False) -> str:
        expires = account.expires_at
        if (
            force
            or not account.secrets.get("access_token")
            or (expires is not None and expires - REFRESH_MARGIN <= datetime.now(UTC))
        ):
            tokens = await self._token(
                {"grant_type": "refresh_token", "refresh_token": account.secrets["refresh_token"]},
                "refresh the token",
            )
            account.update_secrets({"access_token": tokens["access_token"]}, expires_at=_expiry(tokens))
        return str(account.secrets["access_token"])

    async def _send_authorized(
        self,
        account: AccountSession,
        method: str,
        url: str,
        *,
        content: bytes = b"",
        headers: dict[str, str] | None = None,
        timeout: float | None = None,
    ) -> Any:
        for forced in (False, True):
            token = await self._access_token(account, force=forced)
            response = await self.send(
                method, url, content=content, headers={**(headers or {}), **bearer(token)}, timeout=timeout
            )
            if response.status == 401 and not forced:
                continue
            return response
        return response

    async def _api(
        self,
        account: AccountSession,
        method: str,
        url: str,
        *,
        body: dict[str, Any] | None = None,
        action: str,
    ) -> dict[str, Any]:
        content = json.dumps(body).encode() if body is not None else b""
        headers = {"Content-Type": "application/json"} if body is not None else {}
        response = await self._send_authorized(account, method, url, content=content, headers=headers)
        raise_for_status("youtube", response, action)
        return json_body("youtube", response) if response.content else {}

    async def publish(self, account: AccountSession, post: OutgoingPost, context: PublishContext) -> PublishResult:
        """Resumable upload of the post's video, resumed (never restarted) after a crash."""
        videos = [item for item in post.media if item.content_type.startswith("video/")]
        if len(videos) != 1 or videos[0].data is None:
            raise PublishFailed("youtube: a post needs exactly one stored video", retryable=False)
        video = videos[0]
        data = video.data or b""
        upload_url = context.state.get("upload_url")
        offset = 0
        if upload_url:
            response = await self._send_authorized(
                account, "PUT", upload_url, headers={"Content-Range": f"bytes */{len(data)}"}
            )
            if response.status in (200, 201):
                return _video_result(json_body("youtube", response))
            if response.status == 308:
                offset = _acknowledged(response.headers.get("range"))
            else:
                upload_url = None  # the session is gone (404/410): nothing was published, start a new one
        if not upload_url:
            upload_url = await self._start_upload(account, post, video.content_type, len(data))
            await context.save_state({**context.state, "upload_url": upload_url})
        headers = {"Content-Type": video.content_type}
        if offset:
            headers["Content-Range"] = f"bytes {offset}-{len(data) - 1}/{len(data)}"
        response = await self._send_authorized(
            account, "PUT", upload_url, content=data[offset:], headers=headers, timeout=600
        )
        raise_for_status("youtube", response, "upload the video")
        return _video_result(json_body("youtube", response))

    async def _start_upload(self, account: AccountSession, post: OutgoingPost, content_type: str, size: int) -> str:
        options: dict[str, Any] = post.platform_metadata.get("youtube") or {}
        snippet: dict[str, Any] = {
            "title": (options.get("title") or post.title or "")[:100],
            "description": options.get("description") or post.text(),
        }
        if options.get("tags"):
            snippet["tags"] = list(options["tags"])
        if options.get("category_id"):
            snippet["categoryId"] = str(options["category_id"])
        status: dict[str, Any] = {"privacyStatus": options.get("privacy_status") or "public"}
        if options.get("made_for_kids") is not None:
            status["selfDeclaredMadeForKids"] = bool(options["made_for_kids"])
        if options.get("contains_synthetic_media") is not None:
            status["containsSyntheticMedia"] = bool(options["contains_synthetic_media"])
        query = {"uploadType": "resumable", "part": "snippet,status"}
        if options.get("notify_subscribers") is not None:
            query["notifySubscribers"] = "true" if options["notify_subscribers"] else "false"
        response = await self._send_authorized(
            account,
            "POST",
            f"{self.upload_url}/videos?{urlencode(query)}",
            content=json.dumps({"snippet": snippet, "status": status}).encode(),
            headers={
                "Content-Type": "application/json; charset=UTF-8",
                "X-Upload-Content-Type": content_type,
                "X-Upload-Content-Length": str(size),
            },
        )
        raise_for_status("youtube", response, "start the upload")
        location = response.headers.get("location")
        if not location:
            raise PublishFailed("youtube: the upload session has no Location", retryable=True)
        return str(location)

    async def fetch_metrics(self, account: AccountSession, external_post_id: str) -> dict[str, int]:
        """Views, likes and comments of a video."""
        reply = await self._read(
            account, f"{self.api_url}/videos?{urlencode({'part': 'statistics', 'id': external_post_id})}"
        )
        items = reply.get("items") or []
        statistics = (items[0].get("statistics") if items else None) or {}
        return {
            "views": int(statistics.get("viewCount", 0)),
            "likes": int(statistics.get("likeCount", 0)),
            "comments": int(statistics.get("commentCount", 0)),
        }

    async def list_comments(self, account: AccountSession, external_post_id: str, *, limit: int) -> list[Comment]:
        """Top-level comments on a video."""
        query = urlencode({"part": "snippet", "videoId": external_post_id, "maxResults": min(limit, 100)})
        reply = await self._read(account, f"{self.api_url}/commentThreads?{query}")
        comments = []
        for thread in reply.get("items") or []:
            top = (thread.get("snippet") or {}).get("topLevelComment") or {}
            snippet = top.get("snippet") or {}
            comments.append(
                Comment(
                    id=str(top.get("id")),
                    text=str(snippet.get("textOriginal") or snippet.get("textDisplay") or ""),
                    author=snippet.get("authorDisplayName"),
                    created_at=snippet.get("publishedAt"),
                )
            )
        return comments

    async def reply_to_comment(
        self, account: AccountSession, external_post_id: str, comment_id: str, text: str
    ) -> Comment:
        """Replies to a comment."""
        created = await self._write(
            account,
            "POST",
            f"{self.api_url}/comments?part=snippet",
            {"snippet": {"parentId": comment_id, "textOriginal": text}},
        )
        return Comment(id=str(created.get("id")), text=text, author=None, created_at=None, parent_id=comment_id)

    async def post_comment(self, account: AccountSession, external_post_id: str, text: str) -> Comment:
        """Starts a comment thread on a video."""
        created = await self._write(
            account,
            "POST",
            f"{self.api_url}/commentThreads?part=snippet",
            {
                "snippet": {
                    "videoId": external_post_id,
                    "topLevelComment": {"snippet": {"textOriginal": text}},
                }
            },
        )
        top = (created.get("snippet") or {}).get("topLevelComment") or {}
        return Comment(id=str(top.get("id") or created.get("id")), text=text, author=None, created_at=None)

    async def moderate_comment(self, account: AccountSession, comment_id: str, action: str) -> None:
        """Holds, rejects or publishes a comment."""
        status = MODERATION.get(action)
        if status is None:
            raise ValidationFailed(f"unknown moderation action {action!r}", allowed=sorted(MODERATION))
        query = urlencode({"id": comment_id, "moderationStatus": status})
        await self._write(account, "POST", f"{self.api_url}/comments/setModerationStatus?{query}", None)

    async def delete_comment(self, account: AccountSession, comment_id: str) -> None:
        """Deletes a comment."""
        await self._write(account, "DELETE", f"{self.api_url}/comments?{urlencode({'id': comment_id})}", None)

    # --- reading (extract_url_content): the Data API's view of videos, channels and captions ----------------

    async def video(self, account: AccountSession, video_id: str) -> dict[str, Any] | None:
        """A video's snippet, statistics and content details; None when YouTube does not show it."""
        query = urlencode({"part": "snippet,statistics,contentDetails", "id": video_id})
        items = (await self._read(account, f"{self.api_url}/videos?{query}")).get("items") or []
        return items[0] if items else None

    async def channel(self, account: AccountSession, *, key: str, value: str) -> dict[str, Any] | None:
        """A channel by `id`, `forHandle` or `forUsername`; None when there is no such channel."""
        query = urlencode({"part": "snippet,statistics,contentDetails", key: value})
        items = (await self._read(account, f"{self.api_url}/channels?{query}")).get("items") or []
        return items[0] if items else None

    async def recent_uploads(self, account: AccountSession, playlist_id: str, *, limit: int) -> list[dict[str, Any]]:
        """The newest videos of an uploads playlist, each with its statistics."""
        query = urlencode({"part": "snippet,contentDetails", "playlistId": playlist_id, "maxResults": min(limit, 50)})
        entries = (await self._read(account, f"{self.api_url}/playlistItems?{query}")).get("items") or []
        ids = [
            str((entry.get("contentDetails") or {}).get("videoId") or "")
            for entry in entries
            if (entry.get("contentDetails") or {}).get("videoId")
        ]
        if not ids:
            return []
        query = urlencode({"part": "snippet,statistics", "id": ",".join(ids)})
        videos = (await self._read(account, f"{self.api_url}/videos?{query}")).get("items") or []
        by_id = {str(video.get("id")): video for video in videos}
        return [by_id[video_id] for video_id in ids if video_id in by_id]

    async def popular_videos(self, account: AccountSession, *, query: str | None, limit: int) -> list[dict[str, Any]]:
        """The most-viewed videos matching `query` (a search by view count), else the most-popular chart; each
        with its snippet and statistics."""
        count = min(limit, 50)
        if not query:
            chart = urlencode({"part": "snippet,statistics", "chart": "mostPopular", "maxResults": count})
            return list((await self._read(account, f"{self.api_url}/videos?{chart}")).get("items") or [])
        search = urlencode({"part": "snippet", "type": "video", "order": "viewCount", "q": query, "maxResults": count})
        found = (await self._read(account, f"{self.api_url}/search?{search}")).get("items") or []
        ids = [str((item.get("id") or {}).get("videoId")) for item in found if (item.get("id") or {}).get("videoId")]
        if not ids:
            return []
        details = urlencode({"part": "snippet,statistics", "id": ",".join(ids)})
        videos = (await self._read(account, f"{self.api_url}/videos?{details}")).get("items") or []
        by_id = {str(video.get("id")): video for video in videos}
        return [by_id[video_id] for video_id in ids if video_id in by_id]

    async def caption_text(self, account: AccountSession, video_id: str) -> str | None:
        """The plain text of a video's captions (a manual track before an automatic one); the Data API
        only hands captions to the video's own channel. None when the video has no captions."""
        query = urlencode({"part": "snippet", "videoId": video_id})
        tracks = (await self._read(account, f"{self.api_url}/captions?{query}")).get("items") or []
        if not tracks:
            return None
        track = min(
            tracks,
            key=lambda item: (
                (item.get("snippet") or {}).get("trackKind") == "asr",
                not str((item.get("snippet") or {}).get("language") or "").startswith("en"),
            ),
        )
        url = f"{self.api_url}/captions/{track.get('id')}?{urlencode({'tfmt': 'vtt'})}"
        try:
            response = await self._send_authorized(account, "GET", url)
            raise_for_status("youtube", response, "download the captions")
        except PublishFailed as error:
            raise upstream(error, "youtube") from error
        return vtt_text(response.text)

    async def _read(self, account: AccountSession, url: str) -> dict[str, Any]:
        try:
            return await self._api(account, "GET", url, action="read")
        except PublishFailed as error:
            raise upstream(error, "youtube") from error

    async def _write(
        self, account: AccountSession, method: str, url: str, body: dict[str, Any] | None
    ) -> dict[str, Any]:
        try:
            return await self._api(account, method, url, body=body, action="write")
        except PublishFailed as error:
            raise upstream(error, "youtube") from error


def vtt_text(document: str) -> str:
    """The spoken text of a WebVTT (or SRT) caption file: cue timings, numbers, tags and repeats dropped."""
    lines: list[str] = []
    for raw in document.splitlines():
        line = raw.strip()
        if (
            not line
            or line.startswith(("WEBVTT", "NOTE", "STYLE", "REGION", "Kind:", "Language:"))
            or "-->" in line
            or line.isdigit()
        ):
            continue
        line = re.sub(r"<[^>]+>", "", line).strip()
        if line and (not lines or lines[-1] != line):
            lines.append(line)
    return " ".join(lines)


def _expiry(tokens: dict[str, Any]) -> datetime | None:
    seconds = tokens.get("expires_in")
    return datetime.now(UTC) + timedelta(seconds=int(seconds)) if seconds else None


def _acknowledged(range_header: str | None) -> int:
    """The next byte to send after a 308 (`Range: bytes=0-N` means N + 1 bytes arrived)."""
    if not range_header or "-" not in range_header:
        return 0
    try:
        return int(range_header.rsplit("-", 1)[1]) + 1
    except ValueError:
        return 0


def _video_result(video: dict[str, Any]) -> PublishResult:
    video_id = video.get("id")
    if not video_id:
        raise PublishFailed("youtube: the upload reply has no video id", retryable=True)
    return PublishResult(external_post_id=str(video_id), external_url=f"https://www.youtube.com/watch?v={video_id}")
