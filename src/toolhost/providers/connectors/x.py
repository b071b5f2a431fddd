"""The `x` connector: X API v2 posts, threads and media, OAuth 2.0 authorization code with PKCE.

Each behaviour follows a section of X's public API documentation, named where it is implemented.

Exactly once without an idempotency key: X's `POST /2/tweets` has none, and a worker may die after X accepted
a post but before toolhost recorded it. So before every create request the connector saves an attempt marker
(which post of the thread, and when) in the post's connector state, and after it the post's id. A retry that
finds a marker without an id first looks for the post among the account's own recent posts (`GET
/2/users/:id/tweets` from the marker's time on, matched by text and, in a thread, by the post it replies to)
and adopts the one it finds; only when there is none does it publish again. X's "duplicate content" refusal
is answered the same way. Nothing invisible is added to the text for this.
"""

from __future__ import annotations

import asyncio
import html
import json
import re
from collections.abc import Awaitable, Callable
from datetime import UTC, datetime, timedelta
from typing import Any, ClassVar
from urllib.parse import quote, urlencode

from toolhost.platform.dates import iso, parse_iso
from toolhost.platform.results import UpstreamFailed, ValidationFailed
from toolhost.providers.connectors.base import (
    COMMENTS_DELETE,
    COMMENTS_LIST,
    COMMENTS_POST,
    COMMENTS_REPLY,
    METRICS,
    PUBLISH,
    AccountSession,
    Comment,
    MediaItem,
    OutgoingPost,
    PublishContext,
    PublishFailed,
    PublishResult,
    json_body,
    multipart,
    raise_for_status,
    upstream,
)
from toolhost.providers.connectors.oauth import OAuthApp, OAuthConnector, waiting_out_rate_limits
from toolhost.providers.fetch import FetchedResponse, Fetcher

# "X API v2 authentication mapping": POST /2/tweets needs tweet.read tweet.write users.read; the timeline,
# lookup and search reads need tweet.read users.read; media upload needs media.write; "OAuth 2.0 Authorization
# Code Flow with PKCE": offline.access is what makes X issue a refresh token.
SCOPES = ("tweet.read", "tweet.write", "users.read", "offline.access", "media.write")
# Media "Chunked media upload" (APPEND): each chunk is at most 5 MB; 4 MB leaves room for the multipart frame.
CHUNK_BYTES = 4 * 1024 * 1024
# Media "Best practices", media categories: the use case decides X's limits and processing.
MEDIA_CATEGORY = {"image": "tweet_image", "gif": "tweet_gif", "video": "tweet_video"}
# How far before the attempt marker a reconciling search starts: X's clock and ours differ a little.
CLOCK_SKEW = timedelta(seconds=60)
# Pages of the account's timeline a reconciliation reads (100 posts each, "User Post timeline").
RECONCILE_PAGES = 3
URL = re.compile(r"https?://\S+")
DUPLICATE = "duplicate"
METRIC_NAMES = {
    "impression_count": "views",
    "like_count": "likes",
    "reply_count": "comments",
    "retweet_count": "shares",
    "bookmark_count": "saves",
    "quote_count": "quotes",
}


def comparable(text: str) -> str:
    """A post's text as X stores it and as toolhost sent it, made equal: X wraps links (t.co), escapes
    &, < and > as HTML entities, and may trim surrounding whitespace."""
    return " ".join(URL.sub("<link>", html.unescape(text)).split())


class XConnector(OAuthConnector):
    """Posts (with images, a GIF or a video, and threads), their counters and their replies on X."""

    name: ClassVar[str] = "x"
    sign_in_with: ClassVar[str] = "X"
    platforms: ClassVar[tuple[str, ...]] = ("twitter",)
    media_kinds: ClassVar[tuple[str, ...]] = ("image", "gif", "video")
    capabilities: ClassVar[frozenset[str]] = frozenset(
        {PUBLISH, METRICS, COMMENTS_LIST, COMMENTS_REPLY, COMMENTS_POST, COMMENTS_DELETE}
    )

    def __init__(
        self,
        fetcher: Fetcher,
        *,
        app: OAuthApp,
        api_url: str,
        rate_limit_wait: float,
        media_processing_polls: int,
        sleep: Callable[[float], Awaitable[None]] = asyncio.sleep,
    ) -> None:
        super().__init__(fetcher, app=app)
        self.api_url = api_url.rstrip("/")
        self.rate_limit_wait = rate_limit_wait
        self.media_processing_polls = media_processing_polls
        self.sleep = sleep

    async def identify(self, account: AccountSession) -> tuple[str | None, dict[str, Any]]:
        """Users "User lookup" (GET /2/users/me): the signed-in account's id and @username."""
        user = (await self._call(account, "GET", "/users/me", action="read the account")).get("data") or {}
        if not user.get("id") or not user.get("username"):
            raise PublishFailed("x: /2/users/me did not name the account", retryable=True)
        return f"@{user['username']}", {"user_id": str(user["id"]), "username": str(user["username"])}

    # --- publishing --------------------------------------------------------------------------------------

    async def publish(self, account: AccountSession, post: OutgoingPost, context: PublishContext) -> PublishResult:
        """Uploads the media once, then creates the post and each thread post as a reply to the one before."""
        options: dict[str, Any] = post.platform_metadata.get("twitter") or {}
        parts = [post.text(), *(str(part) for part in options.get("thread") or [])]
        state = dict(context.state)
        posted = [str(tweet_id) for tweet_id in state.get("posted", [])]
        attempt = state.get("attempt")
        if attempt is not None and int(attempt["index"]) == len(posted) < len(parts):
            found = await self._find_post(
                account,
                parts[len(posted)],
                since=parse_iso(str(attempt["since"])),
                reply_to=posted[-1] if posted else None,
            )
            if found is not None:
                posted.append(found)
                state = {**state, "posted": posted, "attempt": None}
                await context.save_state(state)
        media_ids: list[str] = []
        if not posted and post.media:
            media_ids, state = await self._uploaded_media(account, post.media, state, context)
        for index in range(len(posted), len(parts)):
            since = datetime.now(UTC)
            state = {**state, "attempt": {"index": index, "since": iso(since)}}
            await context.save_state(state)
            # Posts "Create or Edit Post" (POST /2/tweets): text, media.media_ids, reply.in_reply_to_tweet_id.
            body: dict[str, Any] = {"text": parts[index]}
            if index == 0 and media_ids:
                body["media"] = {"media_ids": media_ids}
            if index == 0 and options.get("paid_partnership"):
                body["paid_partnership"] = True
            reply_to = posted[-1] if posted else None
            if reply_to is not None:
                body["reply"] = {"in_reply_to_tweet_id": reply_to}
            posted.append(await self._create(account, body, since=since, reply_to=reply_to))
            state = {**state, "posted": posted, "attempt": None}
            await context.save_state(state)
        username = account.settings.get("username") or "i"
        return PublishResult(external_post_id=posted[0], external_url=f"https://x.com/{username}/status/{posted[0]}")

    async def _create(
        self, account: AccountSession, body: dict[str, Any], *, since: datetime, reply_to: str | None
    ) -> str:
        response = await self._request(
            account,
            "POST",
            "/tweets",
            content=json.dumps(body, ensure_ascii=False).encode(),
            headers={"Content-Type": "application/json"},
        )
        if response.status == 403 and DUPLICATE in _problem(response).lower():
            # "Response codes and errors", 403: X refuses a post identical to a recent one of the account. When
            # that one is this post (an earlier attempt whose answer was lost), it is adopted, not refused.
            found = await self._find_post(account, str(body["text"]), since=since, reply_to=reply_to)
            if found is not None:
                return found
            raise PublishFailed(
                "x refused the post as duplicate content: the account published the same text recently",
                retryable=False,
            )
        _raise_for_x(response, "create the post")
        created = json_body("x", response).get("data") or {}
        if not created.get("id"):
            raise PublishFailed("x: the create reply has no post id", retryable=True)
        return str(created["id"])

    async def _find_post(
        self, account: AccountSession, text: str, *, since: datetime, reply_to: str | None
    ) -> str | None:
        """The account's own post with this text made since the attempt began, when there is one.

        Posts "User Post timeline" (GET /2/users/:id/tweets, start_time, max_results 5-100, pagination_token):
        the account's recent posts, replies included, newest first, with the fields asked for.
        """
        wanted = comparable(text)
        query: dict[str, str] = {
            "start_time": iso(since - CLOCK_SKEW) or "",
            "max_results": "100",
            "tweet.fields": "created_at,referenced_tweets",
        }
        path = f"/users/{quote(str(account.settings['user_id']))}/tweets"
        for _ in range(RECONCILE_PAGES):
            page = await self._call(account, "GET", f"{path}?{urlencode(query)}", action="read the account's posts")
            for candidate in page.get("data") or []:
                replied = {
                    str(reference.get("id"))
                    for reference in candidate.get("referenced_tweets") or []
                    if reference.get("type") == "replied_to"
                }
                if comparable(str(candidate.get("text", ""))) == wanted and (reply_to is None or reply_to in replied):
                    return str(candidate["id"])
            next_token = (page.get("meta") or {}).get("next_token")
            if not next_token:
                return None
            query["pagination_token"] = str(next_token)
        return None

    async def _uploaded_media(
        self, account: AccountSession, media: list[MediaItem], state: dict[str, Any], context: PublishContext
    ) -> tuple[list[str], dict[str, Any]]:
        """The post's media ids: those uploaded by an earlier attempt while X still keeps them, else new ones."""
        saved = state.get("media") or {}
        expires = saved.get("expires_at")
        if saved.get("ids") and expires and parse_iso(str(expires)) > datetime.now(UTC) + timedelta(minutes=10):
            return [str(media_id) for media_id in saved["ids"]], state
        ids: list[str] = []
        expiry: datetime | None = None
        for index, item in enumerate(media):
            media_id, expires_at = await self._upload(account, item, index)
            ids.append(media_id)
            expiry = expires_at if expiry is None else min(expiry, expires_at)
        state = {**state, "media": {"ids": ids, "expires_at": iso(expiry)}}
        await context.save_state(state)
        return ids, state

    async def _upload(self, account: AccountSession, item: MediaItem, index: int) -> tuple[str, datetime]:
        """Media "Chunked media upload": initialize, append each chunk, finalize, then wait for processing."""
        if item.data is None:
            raise PublishFailed("x: media must be stored in toolhost to upload", retryable=False)
        kind = "gif" if item.content_type == "image/gif" else item.content_type.split("/", 1)[0]
        category = MEDIA_CATEGORY.get(kind)
        if category is None:
            raise PublishFailed(f"x: media {index + 1} is {item.content_type}, not an image or video", retryable=False)
        # "Initialize media upload" (POST /2/media/upload/initialize): media_type, total_bytes, media_category.
        started = await self._call(
            account,
            "POST",
            "/media/upload/initialize",
            body={"media_type": item.content_type, "total_bytes": len(item.data), "media_category": category},
            action="start a media upload",
        )
        data = started.get("data") or {}
        media_id = str(data.get("id") or "")
        if not media_id:
            raise PublishFailed("x: the media upload has no id", retryable=True)
        # "Append media upload" (POST /2/media/upload/:id/append): multipart media + segment_index.
        for segment, offset in enumerate(range(0, len(item.data), CHUNK_BYTES)):
            content, content_type = multipart(
                {"segment_index": str(segment)},
                [
                    (
                        "media",
                        item.file_name or "media",
                        "application/octet-stream",
                        item.data[offset : offset + CHUNK_BYTES],
                    )
                ],
            )
            response = await self._request(
                account,
                "POST",
                f"/media/upload/{quote(media_id)}/append",
                content=content,
                headers={"Content-Type": content_type},
                timeout=600,
            )
            _raise_for_x(response, "upload media")
        # "Finalize media upload" (POST /2/media/upload/:id/finalize); processing_info means: poll STATUS.
        finished = (
            await self._call(
                account, "POST", f"/media/upload/{quote(media_id)}/finalize", action="finish a media upload"
            )
        ).get("data") or {}
        expires_at = datetime.now(UTC) + timedelta(seconds=int(finished.get("expires_after_secs") or 86_400))
        processing = finished.get("processing_info")
        polls = 0
        while processing and processing.get("state") not in ("succeeded", None):
            # "Get Media upload status" (GET /2/media/upload?command=STATUS&media_id=): pending -> in_progress
            # -> failed | succeeded; check_after_secs says when to ask again.
            if processing.get("state") == "failed":
                error = processing.get("error") or {}
                why = str(error.get("message") or error.get("name") or "failed")[:200]
                raise PublishFailed(f"x could not process media {index + 1}: {why}", retryable=False)
            polls += 1
            if polls > self.media_processing_polls:
                raise PublishFailed(f"x is still processing media {index + 1}", retryable=True)
            await self.sleep(min(float(processing.get("check_after_secs", 1)), 30.0))
            query = urlencode({"command": "STATUS", "media_id": media_id})
            status = await self._call(account, "GET", f"/media/upload?{query}", action="check media processing")
            processing = (status.get("data") or {}).get("processing_info")
        return media_id, expires_at

    # --- requests ----------------------------------------------------------------------------------------

    async def _request(
        self,
        account: AccountSession,
        method: str,
        path: str,
        *,
        content: bytes = b"",
        headers: dict[str, str] | None = None,
        timeout: float | None = None,
    ) -> FetchedResponse:
        """One authorized request; a rate limit is waited out in place when it resets soon, else reported.

        "Rate limits": every answer carries x-rate-limit-limit/-remaining/-reset (epoch seconds); a 429
        "Too Many Requests" is retried after the reset, never before.
        """
        return await waiting_out_rate_limits(
            lambda: self.authorized(
                account, method, f"{self.api_url}{path}", content=content, headers=headers, timeout=timeout
            ),
            platform="x",
            lifts_at=_reset_time,
            longest_wait=self.rate_limit_wait,
            sleep=self.sleep,
            lift_word="resets",
        )

    async def _call(
        self,
        account: AccountSession,
        method: str,
        path: str,
        *,
        body: dict[str, Any] | None = None,
        action: str,
    ) -> dict[str, Any]:
        content = json.dumps(body).encode() if body is not None else b""
        headers = {"Content-Type": "application/json"} if body is not None else {}
        response = await self._request(account, method, path, content=content, headers=headers)
        _raise_for_x(response, action)
        return json_body("x", response) if response.content else {}

    async def _read(self, account: AccountSession, path: str) -> dict[str, Any]:
        try:
            return await self._call(account, "GET", path, action="read")
        except PublishFailed as error:
            raise upstream(error, "x") from error

    # --- metrics and replies -----------------------------------------------------------------------------

    async def fetch_metrics(self, account: AccountSession, external_post_id: str) -> dict[str, int]:
        """Posts "Post lookup" (GET /2/tweets/:id, tweet.fields=public_metrics): the post's public counters."""
        reply = await self._read(account, f"/tweets/{quote(external_post_id)}?tweet.fields=public_metrics")
        counters = (reply.get("data") or {}).get("public_metrics")
        if counters is None:
            raise UpstreamFailed("x does not show this post", provider="x")
        return {name: int(counters[key]) for key, name in METRIC_NAMES.items() if isinstance(counters.get(key), int)}

    async def list_comments(self, account: AccountSession, external_post_id: str, *, limit: int) -> list[Comment]:
        """Replies to a post: Posts "Recent search" (GET /2/tweets/search/recent) on its conversation_id, which
        reaches the last 7 days; the replies are listed oldest first."""
        query = urlencode(
            {
                "query": f"conversation_id:{external_post_id} is:reply",
                "max_results": str(max(10, min(limit, 100))),
                "tweet.fields": "created_at,author_id,referenced_tweets",
                "expansions": "author_id",
                "user.fields": "username",
            }
        )
        reply = await self._read(account, f"/tweets/search/recent?{query}")
        users = {str(user.get("id")): user.get("username") for user in (reply.get("includes") or {}).get("users") or []}
        comments = []
        for tweet in reply.get("data") or []:
            parent = next(
                (str(ref.get("id")) for ref in tweet.get("referenced_tweets") or [] if ref.get("type") == "replied_to"),
                external_post_id,
            )
            comments.append(
                Comment(
                    id=str(tweet.get("id")),
                    text=html.unescape(str(tweet.get("text", ""))),
                    author=users.get(str(tweet.get("author_id"))),
                    created_at=tweet.get("created_at"),
                    parent_id=parent,
                )
            )
        comments.sort(key=lambda comment: comment.created_at or "")
        return comments[:limit]

    async def reply_to_comment(
        self, account: AccountSession, external_post_id: str, comment_id: str, text: str
    ) -> Comment:
        """Answers a reply with a post of the account's own."""
        return await self._reply(account, text, comment_id)

    async def post_comment(self, account: AccountSession, external_post_id: str, text: str) -> Comment:
        """Replies to the post itself."""
        return await self._reply(account, text, external_post_id)

    async def delete_comment(self, account: AccountSession, comment_id: str) -> None:
        """Posts "Delete Post" (DELETE /2/tweets/:id): only the account's own posts can be deleted."""
        try:
            response = await self._request(account, "DELETE", f"/tweets/{quote(comment_id)}")
            if response.status == 403:
                raise ValidationFailed("x can only delete the account's own posts")
            _raise_for_x(response, "delete the post")
        except PublishFailed as error:
            raise upstream(error, "x") from error

    async def _reply(self, account: AccountSession, text: str, parent_id: str) -> Comment:
        body = {"text": text, "reply": {"in_reply_to_tweet_id": parent_id}}
        try:
            created = await self._call(account, "POST", "/tweets", body=body, action="reply")
        except PublishFailed as error:
            raise upstream(error, "x") from error
        data = created.get("data") or {}
        return Comment(
            id=str(data.get("id")),
            text=text,
            author=account.settings.get("username"),
            created_at=iso(datetime.now(UTC)),
            parent_id=parent_id,
        )


def _problem(response: FetchedResponse) -> str:
    """The detail of an X error reply: "Response codes and errors" (RFC 7807 problem details, or v1.1's
    errors[].message)."""
    try:
        document = json.loads(response.content or b"{}")
    except ValueError:
        return ""
    if not isinstance(document, dict):
        return ""
    parts = [str(document.get(name) or "") for name in ("title", "detail")]
    parts += [
        str(error.get("message") or error.get("detail") or "")
        for error in document.get("errors") or []
        if isinstance(error, dict)
    ]
    return " ".join(part for part in parts if part)[:300]


def _raise_for_x(response: FetchedResponse, action: str) -> None:
    """X's answers as PublishFailed: 403 is X refusing the request (its detail says why), not the credentials
    (a revoked token is 401, "Response codes and errors"); the rest as every connector reads them."""
    if response.status == 403:
        raise PublishFailed(f"x refused to {action} (HTTP 403): {_problem(response) or 'forbidden'}", retryable=False)
    raise_for_status("x", response, action)


def _reset_time(response: FetchedResponse) -> datetime:
    """When the rate limit resets: x-rate-limit-reset (epoch seconds), else a minute from now."""
    value = response.headers.get("x-rate-limit-reset", "")
    try:
        return datetime.fromtimestamp(int(value), UTC)
    except (ValueError, OverflowError, OSError):
        return datetime.now(UTC) + timedelta(minutes=1)
