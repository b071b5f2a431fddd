"""The `tiktok` connector: the Content Posting API's direct post (or upload to the creator's inbox) of a video,
OAuth 2.0 authorization code through Login Kit for Web.

Each behaviour follows a section of TikTok's public developer documentation (developers.tiktok.com), named where
it is implemented. TikTok names the client `client_key` and separates scopes with commas, so this connector
writes its own authorization URL and token requests.

Exactly once: a post exists on TikTok only once its upload under one `publish_id` completes. The connector
saves the `publish_id` (with the upload URL) right after "init", before any byte is sent; a retry that finds
it never starts a second publication: it asks TikTok for that publication's status and resumes polling (or
re-sends the file to the same upload URL when TikTok says the upload is incomplete). An init whose answer was
lost leaves an upload nobody completes, which TikTok discards.
"""

from __future__ import annotations

import asyncio
import json
from collections.abc import Awaitable, Callable
from datetime import UTC, datetime, timedelta
from typing import Any, ClassVar
from urllib.parse import urlencode

from authlib.oauth2.rfc6749 import OAuth2Token

from toolhost.providers.connectors.base import (
    PUBLISH,
    AccountSession,
    OutgoingPost,
    PublishContext,
    PublishFailed,
    PublishResult,
    json_body,
    raise_for_status,
)
from toolhost.providers.connectors.oauth import Authorization, OAuthApp, OAuthConnector
from toolhost.providers.fetch import FetchedResponse, Fetcher

# "Scopes": user.info.basic names the creator; video.publish posts directly, video.upload sends to the inbox.
SCOPES = ("user.info.basic", "video.publish", "video.upload")
# "Media Transfer Guide": a file up to 64 MB may go in one chunk; larger ones in chunks of 5 to 64 MB, where
# total_chunk_count is video_size // chunk_size and the last chunk takes the remainder (up to 128 MB).
CHUNK_BYTES = 10 * 1024 * 1024
WHOLE_FILE_BYTES = 64 * 1024 * 1024
# "Rate Limits": the posting endpoints allow 6 requests a minute per user token, without a reset header.
RATE_LIMIT_PAUSE = timedelta(minutes=1)
# "Get Post Status": these states mean TikTok is still working on the publication.
IN_PROGRESS = {"PROCESSING_UPLOAD", "PROCESSING_DOWNLOAD"}
DONE = {"PUBLISH_COMPLETE", "SEND_TO_USER_INBOX"}
PROCESSING_POLL_SECONDS = 3.0  # between "Get Post Status" requests while TikTok processes the video


class TikTokConnector(OAuthConnector):
    """Videos posted to a creator's TikTok profile (or inbox, to finish in the app)."""

    name: ClassVar[str] = "tiktok"
    sign_in_with: ClassVar[str] = "TikTok"
    platforms: ClassVar[tuple[str, ...]] = ("tiktok",)
    media_kinds: ClassVar[tuple[str, ...]] = ("video",)
    capabilities: ClassVar[frozenset[str]] = frozenset({PUBLISH})

    def __init__(
        self,
        fetcher: Fetcher,
        *,
        app: OAuthApp,
        api_url: str,
        media_processing_polls: int,
        sleep: Callable[[float], Awaitable[None]] = asyncio.sleep,
    ) -> None:
        super().__init__(fetcher, app=app)
        self.api_url = api_url.rstrip("/")
        self.media_processing_polls = media_processing_polls
        self.sleep = sleep

    def authorization(self, *, redirect_uri: str, state: str) -> Authorization:
        """ "Login Kit for Web", authorization: client_key, comma-separated scope, response_type, redirect_uri,
        state (web apps send no PKCE challenge)."""
        query = urlencode(
            {
                "client_key": self.app.client_id or "",
                "scope": ",".join(self.app.scopes),
                "response_type": "code",
                "redirect_uri": redirect_uri,
                "state": state,
            }
        )
        return Authorization(url=f"{self.app.authorize_url}?{query}", code_verifier=None)

    async def _token_request(self, grant_type: str, **fields: Any) -> dict[str, Any]:
        """ "Manage User Access Tokens" (POST /v2/oauth/token/): client_key and client_secret in the form body;
        a refused grant (400/401, or an `error` in the reply) needs a new sign-in."""
        missing = self.missing_settings()
        if missing:
            raise PublishFailed(f"tiktok: the app settings {', '.join(missing)} are not set", retryable=False)
        form = {
            "client_key": self.app.client_id or "",
            "client_secret": self.app.client_secret or "",
            "grant_type": grant_type,
            **{name: str(value) for name, value in fields.items() if value and name != "code_verifier"},
        }
        response = await self.send(
            "POST",
            self.app.token_url,
            content=urlencode(form).encode(),
            headers={"Content-Type": "application/x-www-form-urlencoded"},
        )
        reply = json_body("tiktok", response) if response.content else {}
        if response.status in (400, 401) or reply.get("error"):
            code = str(reply.get("error") or f"HTTP {response.status}")[:64]
            raise PublishFailed(
                f"tiktok refused the {grant_type.replace('_', ' ')} ({code}); sign in again",
                retryable=False,
                authentication=True,
            )
        raise_for_status("tiktok", response, "obtain a token")
        if not reply.get("access_token"):
            raise PublishFailed("tiktok: the token reply has no access_token", retryable=True)
        token = OAuth2Token(reply)
        material = {
            name: token[name] for name in ("access_token", "refresh_token", "expires_at", "scope") if token.get(name)
        }
        return material

    async def identify(self, account: AccountSession) -> tuple[str | None, dict[str, Any]]:
        """ "Get User Info" (GET /v2/user/info/?fields=open_id,display_name): who signed in."""
        reply = await self._call(
            account, "GET", "/v2/user/info/?fields=open_id,display_name", action="read the account"
        )
        user = (reply.get("data") or {}).get("user") or {}
        if not user.get("open_id"):
            raise PublishFailed("tiktok: /v2/user/info/ did not name the creator", retryable=True)
        return str(user.get("display_name") or user["open_id"]), {"open_id": str(user["open_id"])}

    # --- publishing --------------------------------------------------------------------------------------

    async def publish(self, account: AccountSession, post: OutgoingPost, context: PublishContext) -> PublishResult:
        """Starts one publication, uploads the video to it, and polls its status until TikTok finished."""
        state = dict(context.state)
        if len(post.media) != 1 or not post.media[0].data or not post.media[0].content_type.startswith("video/"):
            raise PublishFailed("tiktok: a post is one video stored in toolhost", retryable=False)
        video = post.media[0].data
        publication = state.get("publication")
        if publication is None:
            publication = await self._init(account, post, len(video))
            state = {**state, "publication": publication}
            await context.save_state(state)
            await self._upload(str(publication["upload_url"]), video)
        status = await self._status(account, str(publication["publish_id"]))
        if status.get("status") == "PROCESSING_UPLOAD" and int(status.get("uploaded_bytes") or 0) < len(video):
            # An earlier attempt died during the upload: the same upload URL takes the file again.
            await self._upload(str(publication["upload_url"]), video)
        polls = 0
        while status.get("status") in IN_PROGRESS:
            polls += 1
            if polls > self.media_processing_polls:
                raise PublishFailed("tiktok is still processing the video", retryable=True)
            await self.sleep(PROCESSING_POLL_SECONDS)
            status = await self._status(account, str(publication["publish_id"]))
        if status.get("status") == "FAILED":
            why = str(status.get("fail_reason") or "failed")[:200]
            raise PublishFailed(f"tiktok could not publish the video: {why}", retryable=False)
        if status.get("status") not in DONE:
            raise PublishFailed(f"tiktok answered an unknown status {str(status.get('status'))[:40]}", retryable=True)
        post_ids = status.get("publicaly_available_post_id") or []
        if not post_ids:
            # Sent to the inbox, or still under moderation: the publication id is what toolhost can name.
            return PublishResult(external_post_id=str(publication["publish_id"]), external_url=None)
        return PublishResult(external_post_id=str(post_ids[0]), external_url=None)

    async def _init(self, account: AccountSession, post: OutgoingPost, size: int) -> dict[str, Any]:
        """ "Direct Post" (POST /v2/post/publish/video/init/, post_info + source_info FILE_UPLOAD), or "Upload"
        to the inbox (POST /v2/post/publish/inbox/video/init/) with use_inbox. Direct posts first ask "Query
        Creator Info" which privacy levels the creator may choose."""
        options: dict[str, Any] = post.platform_metadata.get("tiktok") or {}
        chunk, count = _chunks(size)
        source = {"source": "FILE_UPLOAD", "video_size": size, "chunk_size": chunk, "total_chunk_count": count}
        if options.get("use_inbox"):
            body: dict[str, Any] = {"source_info": source}
            path = "/v2/post/publish/inbox/video/init/"
        else:
            creator = (
                await self._call(
                    account, "POST", "/v2/post/publish/creator_info/query/", body={}, action="read the creator"
                )
            ).get("data") or {}
            allowed = [str(level) for level in creator.get("privacy_level_options") or []]
            # schedule_post requires privacy_status for TikTok; the creator's account may not offer every level.
            privacy = str(options.get("privacy_status") or "SELF_ONLY")
            if privacy not in allowed:
                raise PublishFailed(
                    f"tiktok: the creator may post as {', '.join(allowed)}, not {privacy}", retryable=False
                )
            body = {
                "post_info": {
                    "title": post.text(),
                    "privacy_level": privacy,
                    "disable_duet": options.get("enable_duet") is False,
                    "disable_comment": options.get("enable_comment") is False,
                    "disable_stitch": options.get("enable_stitch") is False,
                    "is_aigc": bool(options.get("is_ai_generated")),
                    "brand_content_toggle": bool(options.get("brand_content")),
                    "brand_organic_toggle": bool(options.get("brand_organic")),
                },
                "source_info": source,
            }
            path = "/v2/post/publish/video/init/"
        data = (await self._call(account, "POST", path, body=body, action="start a publication")).get("data") or {}
        if not data.get("publish_id") or not data.get("upload_url"):
            raise PublishFailed("tiktok: the init reply has no publish_id", retryable=True)
        return {"publish_id": str(data["publish_id"]), "upload_url": str(data["upload_url"])}

    async def _upload(self, upload_url: str, video: bytes) -> None:
        """ "Media Transfer Guide": PUT each chunk with Content-Range bytes first-last/total; the last chunk
        takes the remainder."""
        size = len(video)
        chunk, count = _chunks(size)
        for index in range(count):
            first = index * chunk
            last = size - 1 if index == count - 1 else first + chunk - 1
            response = await self.send(
                "PUT",
                upload_url,
                content=video[first : last + 1],
                headers={"Content-Type": "video/mp4", "Content-Range": f"bytes {first}-{last}/{size}"},
                timeout=600,
            )
            raise_for_status("tiktok", response, "upload the video")

    async def _status(self, account: AccountSession, publish_id: str) -> dict[str, Any]:
        """ "Get Post Status" (POST /v2/post/publish/status/fetch/)."""
        reply = await self._call(
            account, "POST", "/v2/post/publish/status/fetch/", body={"publish_id": publish_id}, action="read the status"
        )
        return dict(reply.get("data") or {})

    # --- requests ----------------------------------------------------------------------------------------

    async def _call(
        self, account: AccountSession, method: str, path: str, *, body: dict[str, Any] | None = None, action: str
    ) -> dict[str, Any]:
        """One authorized request; TikTok's `error.code` says what went wrong ("Error Handling")."""
        headers = {"Content-Type": "application/json; charset=UTF-8"} if body is not None else {}
        content = json.dumps(body, ensure_ascii=False).encode() if body is not None else b""
        response = await self.authorized(account, method, f"{self.api_url}{path}", content=content, headers=headers)
        reply = json_body("tiktok", response) if response.content else {}
        code = str((reply.get("error") or {}).get("code") or "ok")
        if response.status == 429 or code == "rate_limit_exceeded":
            lifts = datetime.now(UTC) + RATE_LIMIT_PAUSE
            raise PublishFailed("tiktok rate limit reached", retryable=True, retry_at=lifts)
        if code in ("access_token_invalid", "scope_not_authorized"):
            raise PublishFailed(
                f"tiktok refused the account's token ({code}); sign in again", retryable=False, authentication=True
            )
        if code != "ok" or not response.ok:
            message = str((reply.get("error") or {}).get("message") or "")[:200]
            _raise(response, action, code, message)
        return reply


def _chunks(size: int) -> tuple[int, int]:
    """The chunk size and chunk count of an upload ("Media Transfer Guide")."""
    chunk = size if size <= WHOLE_FILE_BYTES else CHUNK_BYTES
    return chunk, size // chunk


def _raise(response: FetchedResponse, action: str, code: str, message: str) -> None:
    """4xx with an error code is final (spam_risk_*, unaudited_client_*, invalid_params); 5xx is retryable."""
    if response.status >= 500:
        raise_for_status("tiktok", response, action)
    raise PublishFailed(f"tiktok refused to {action} ({code}): {message}".rstrip(": "), retryable=False)
