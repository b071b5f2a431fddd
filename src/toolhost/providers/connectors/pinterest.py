"""The `pinterest` connector: Pins (an image, a carousel of 2 to 5 images, or a video) on one of the account's
boards through the Pinterest API v5, their analytics, and OAuth 2.0 authorization code with a continuous refresh
token.

Each behaviour follows a section of Pinterest's public developer documentation (developers.pinterest.com: the
API v5 reference, "Set up authentication and authorization", "Rate limits"), named where it is implemented.
Pinterest documents no PKCE for its authorization page, so the flow rests on the `state` the connect page
checks; the token endpoint takes the app's id and secret as HTTP Basic, and the authorization page takes its
scopes separated by commas.

Exactly once without an idempotency key: "Create Pin" has none, and Pinterest refuses no repeated content (a
second identical request is a second Pin). So before the create request the connector saves an attempt marker
(when the first unresolved attempt began) in the post's connector state, and the Pin's id right after. A retry
that finds a marker without an id first looks for the Pin among the board's Pins ("List Pins on board", newest
first) created since the marker, matched by title and description, and adopts the one it finds; only when there
is none does it create the Pin again. A video's media id is saved once registered, so a retry reuses an upload
Pinterest already processed.
"""

from __future__ import annotations

import asyncio
import base64
import json
from collections.abc import Awaitable, Callable
from datetime import UTC, datetime, timedelta
from typing import Any, ClassVar
from urllib.parse import quote, urlencode

from toolhost.platform.dates import iso, parse_iso
from toolhost.platform.results import UpstreamFailed
from toolhost.providers.connectors.base import (
    METRICS,
    PUBLISH,
    AccountSession,
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

# API v5 reference, the security of each operation: "Create Pin" needs boards:read, boards:write, pins:read and
# pins:write; "List Pins on board" and "Get Pin analytics" boards:read and pins:read; "Get user account"
# user_accounts:read. Secret boards would need the *_secret scopes, which are not asked for.
SCOPES = ("boards:read", "boards:write", "pins:read", "pins:write", "user_accounts:read")
# "List boards": page_size at most 250; the boards beyond the first page are reached with board_id.
BOARDS_PAGE_SIZE = 250
# "List Pins on board": page_size at most 250; a reconciliation reads a few pages, newest first.
PINS_PAGE_SIZE = 100
RECONCILE_PAGES = 3
PROCESSING_POLL_SECONDS = 2.0  # between "Get media upload details" requests while Pinterest processes a video
# How far before the attempt marker a reconciling search reaches: Pinterest's clock and ours differ a little.
CLOCK_SKEW = timedelta(seconds=60)
# "Rate limits": Standard access counts requests per minute per user per app; without a Retry-After the post
# waits that minute.
RATE_LIMIT_PAUSE = timedelta(minutes=1)
# "Get Pin analytics": start_date at most 90 days back.
ANALYTICS_DAYS = 89
METRIC_NAMES = {"IMPRESSION": "views", "SAVE": "saves", "TOTAL_REACTIONS": "likes", "TOTAL_COMMENTS": "comments"}


def comparable(text: str | None) -> str:
    """A title or description as Pinterest returns it and as toolhost sent it, made equal (whitespace)."""
    return " ".join((text or "").split())


class PinterestConnector(OAuthConnector):
    """Pins with an image, a carousel or a video on one of the account's boards, and their analytics."""

    name: ClassVar[str] = "pinterest"
    sign_in_with: ClassVar[str] = "Pinterest"
    platforms: ClassVar[tuple[str, ...]] = ("pinterest",)
    media_kinds: ClassVar[tuple[str, ...]] = ("image", "video")
    capabilities: ClassVar[frozenset[str]] = frozenset({PUBLISH, METRICS})

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

    async def _token_request(self, grant_type: str, **fields: Any) -> dict[str, Any]:
        """API v5 reference, "Generate OAuth access token": apps created before 25 September 2025 send
        `continuous_refresh=true` with the code to get the continuous refresh token (60 days, renewed with every
        refresh); later apps get it without asking."""
        if grant_type == "authorization_code":
            fields = {**fields, "continuous_refresh": "true"}
        return await super()._token_request(grant_type, **fields)

    async def identify(self, account: AccountSession) -> tuple[str | None, dict[str, Any]]:
        """ "Get user account" (GET /v5/user_account): who signed in; "List boards" (GET /v5/boards): the boards
        a Pin may go to (a post names one, or goes to the only one)."""
        user = await self._call(account, "GET", "/user_account", action="read the account")
        if not user.get("username"):
            raise PublishFailed("pinterest: /v5/user_account did not name the account", retryable=True)
        listed = await self._call(
            account, "GET", f"/boards?{urlencode({'page_size': BOARDS_PAGE_SIZE})}", action="list the boards"
        )
        boards = [
            {"id": str(board["id"]), "name": str(board.get("name") or board["id"])}
            for board in listed.get("items") or []
            if board.get("id")
        ]
        return str(user["username"]), {"user_id": str(user.get("id") or ""), "boards": boards}

    def board(self, account: AccountSession, post: OutgoingPost) -> str:
        """platform_metadata.pinterest.board_id, else the account's only board; several boards need a choice."""
        options: dict[str, Any] = post.platform_metadata.get("pinterest") or {}
        if options.get("board_id"):
            return str(options["board_id"])
        boards: list[dict[str, str]] = account.settings.get("boards") or []
        if len(boards) == 1:
            return boards[0]["id"]
        if not boards:
            raise PublishFailed(
                "pinterest: the account had no board when it connected; create one on Pinterest and sign in again, "
                "or give platform_metadata.pinterest.board_id",
                retryable=False,
            )
        named = ", ".join(f"{board['name']} ({board['id']})" for board in boards[:20])
        raise PublishFailed(
            f"pinterest: the account has several boards; say which with platform_metadata.pinterest.board_id: {named}",
            retryable=False,
        )

    # --- publishing --------------------------------------------------------------------------------------

    async def publish(self, account: AccountSession, post: OutgoingPost, context: PublishContext) -> PublishResult:
        """Registers and uploads a video once, then creates the Pin once (reconciling a lost attempt first)."""
        state = dict(context.state)
        board = self.board(account, post)
        options: dict[str, Any] = post.platform_metadata.get("pinterest") or {}
        pin: dict[str, Any] = {"board_id": board, "description": post.text()}
        for name, value in (
            ("title", post.title),
            ("link", options.get("link")),
            ("alt_text", options.get("alt_text")),
        ):
            if value:
                pin[name] = str(value)
        pin_id = state.get("pin_id")
        attempt = state.get("attempt")
        since = parse_iso(str(attempt["since"])) if attempt else None
        if pin_id is None and since is not None:
            pin_id = await self._find_pin(account, pin, since=since)
            if pin_id is not None:
                state = {**state, "pin_id": pin_id, "attempt": None}
                await context.save_state(state)
        if pin_id is None:
            source, state = await self._media_source(account, post, state, context)
            if since is None:
                state = {**state, "attempt": {"since": iso(datetime.now(UTC))}}
                await context.save_state(state)
            pin_id = await self._create(account, {**pin, "media_source": source})
            state = {**state, "pin_id": pin_id, "attempt": None}
            await context.save_state(state)
        return PublishResult(external_post_id=str(pin_id), external_url=f"https://www.pinterest.com/pin/{pin_id}/")

    async def _create(self, account: AccountSession, body: dict[str, Any]) -> str:
        """ "Create Pin" (POST /v5/pins): 201 with the Pin, its id among its fields."""
        created = await self._call(account, "POST", "/pins", body=body, action="create the Pin")
        if not created.get("id"):
            raise PublishFailed("pinterest: the create reply has no Pin id", retryable=True)
        return str(created["id"])

    async def _find_pin(self, account: AccountSession, pin: dict[str, Any], *, since: datetime) -> str | None:
        """The board's Pin with this title and description created since the attempt began, when there is one.

        "List Pins on board" (GET /v5/boards/{board_id}/pins, page_size, bookmark): the board's Pins, newest
        first, each with its title, description and created_at.
        """
        wanted = (comparable(pin.get("title")), comparable(pin["description"]))
        earliest = since - CLOCK_SKEW
        query: dict[str, Any] = {"page_size": PINS_PAGE_SIZE}
        path = f"/boards/{quote(str(pin['board_id']))}/pins"
        for _ in range(RECONCILE_PAGES):
            page = await self._call(account, "GET", f"{path}?{urlencode(query)}", action="read the board's Pins")
            items = page.get("items") or []
            for item in items:
                created = item.get("created_at")
                if not created or parse_iso(str(created)) < earliest:
                    continue
                if (comparable(item.get("title")), comparable(item.get("description"))) == wanted:
                    return str(item["id"])
            older = [item for item in items if item.get("created_at") and parse_iso(str(item["created_at"])) < earliest]
            if not page.get("bookmark") or (items and len(older) == len(items)):
                return None
            query["bookmark"] = str(page["bookmark"])
        return None

    async def _media_source(
        self, account: AccountSession, post: OutgoingPost, state: dict[str, Any], context: PublishContext
    ) -> tuple[dict[str, Any], dict[str, Any]]:
        """ "Create Pin" media_source: image_base64 for one image, multiple_image_base64 for 2 to 5, video_id
        for a video uploaded through "Register media upload"."""
        if not post.media:
            raise PublishFailed("pinterest: a Pin needs an image or a video", retryable=False)
        first = post.media[0]
        if first.content_type.startswith("video/"):
            media_id, state = await self._video(account, first, state, context)
            return {"source_type": "video_id", "media_id": media_id, "cover_image_key_frame_time": 0}, state
        images = [
            {"content_type": item.content_type, "data": base64.b64encode(_bytes(item, index)).decode()}
            for index, item in enumerate(post.media)
        ]
        if len(images) == 1:
            return {"source_type": "image_base64", **images[0]}, state
        return {"source_type": "multiple_image_base64", "items": images}, state

    async def _video(
        self, account: AccountSession, item: MediaItem, state: dict[str, Any], context: PublishContext
    ) -> tuple[str, dict[str, Any]]:
        """ "Register media upload" (POST /v5/media, media_type video) answers a media id, an upload URL and the
        form fields to POST with the file there; "Get media upload details" (GET /v5/media/{media_id}) moves from
        registered through processing to succeeded or failed. A saved media id is asked about first."""
        media_id = state.get("video_media_id")
        status = (await self._media_status(account, str(media_id))) if media_id else None
        if status not in ("processing", "succeeded"):
            registered = await self._call(
                account, "POST", "/media", body={"media_type": "video"}, action="register a video upload"
            )
            if not registered.get("media_id") or not registered.get("upload_url"):
                raise PublishFailed("pinterest: the media registration has no upload URL", retryable=True)
            media_id = str(registered["media_id"])
            state = {**state, "video_media_id": media_id}
            await context.save_state(state)
            fields = {str(name): str(value) for name, value in (registered.get("upload_parameters") or {}).items()}
            content, content_type = multipart(
                fields, [("file", item.file_name or "video", item.content_type, _bytes(item, 0))]
            )
            # The upload URL is a pre-signed storage form: it takes the file without the account's token.
            response = await self.send(
                "POST",
                str(registered["upload_url"]),
                content=content,
                headers={"Content-Type": content_type},
                timeout=600,
            )
            raise_for_status("pinterest", response, "upload the video")
            status = await self._media_status(account, media_id)
        polls = 0
        while status != "succeeded":
            if status == "failed":
                raise PublishFailed("pinterest could not process the video (media upload failed)", retryable=False)
            polls += 1
            if polls > self.media_processing_polls:
                raise PublishFailed("pinterest is still processing the video", retryable=True)
            await self.sleep(PROCESSING_POLL_SECONDS)
            status = await self._media_status(account, str(media_id))
        return str(media_id), state

    async def _media_status(self, account: AccountSession, media_id: str) -> str | None:
        response = await self._request(account, "GET", f"/media/{quote(media_id)}")
        if response.status == 404:
            return None
        _raise_for_pinterest(response, "check the video upload")
        return str(json_body("pinterest", response).get("status") or "") or None

    # --- requests ----------------------------------------------------------------------------------------

    async def _request(
        self, account: AccountSession, method: str, path: str, *, body: dict[str, Any] | None = None
    ) -> FetchedResponse:
        """One authorized request; a rate limit is waited out in place when it lifts soon, else reported with the
        time it lifts.

        "Rate limits": a request over a category's limit is answered 429; the limits of Standard access are per
        minute. A 429 whose message names spam is Pinterest's spam protection refusing the content, not a limit
        that lifts.
        """
        headers = {"Content-Type": "application/json"} if body is not None else {}
        content = json.dumps(body, ensure_ascii=False).encode() if body is not None else b""
        return await waiting_out_rate_limits(
            lambda: self.authorized(account, method, f"{self.api_url}{path}", content=content, headers=headers),
            platform="pinterest",
            lifts_at=_lifts_at,
            longest_wait=self.rate_limit_wait,
            sleep=self.sleep,
            refuse=_refuse_spam,
        )

    async def _call(
        self, account: AccountSession, method: str, path: str, *, body: dict[str, Any] | None = None, action: str
    ) -> dict[str, Any]:
        response = await self._request(account, method, path, body=body)
        _raise_for_pinterest(response, action)
        return json_body("pinterest", response) if response.content else {}

    # --- metrics -----------------------------------------------------------------------------------------

    async def fetch_metrics(self, account: AccountSession, external_post_id: str) -> dict[str, int]:
        """ "Get Pin analytics" (GET /v5/pins/{pin_id}/analytics, start_date at most 90 days back, metric_types
        comma-separated): lifetime totals where Pinterest gives them, else the sums over those 90 days."""
        today = datetime.now(UTC).date()
        query = urlencode(
            {
                "start_date": (today - timedelta(days=ANALYTICS_DAYS)).isoformat(),
                "end_date": today.isoformat(),
                "metric_types": ",".join(METRIC_NAMES),
            }
        )
        try:
            reply = await self._call(
                account, "GET", f"/pins/{quote(external_post_id)}/analytics?{query}", action="read the Pin's analytics"
            )
        except PublishFailed as error:
            raise upstream(error, "pinterest") from error
        totals = reply.get("all")
        if not isinstance(totals, dict):
            raise UpstreamFailed("pinterest does not show this Pin's analytics", provider="pinterest")
        lifetime = totals.get("lifetime_metrics") or {}
        summary = totals.get("summary_metrics") or {}
        counters: dict[str, int] = {}
        for metric, name in METRIC_NAMES.items():
            value = lifetime.get(metric, summary.get(metric))
            if isinstance(value, int | float):
                counters[name] = int(value)
        return counters


def _bytes(item: MediaItem, index: int) -> bytes:
    if item.data is None:
        raise PublishFailed(f"pinterest: media {index + 1} must be stored in toolhost to upload", retryable=False)
    return item.data


def _message(response: FetchedResponse) -> str:
    """The message of a Pinterest error reply (API v5 reference, Error: {"code", "message"})."""
    try:
        document = json.loads(response.content or b"{}")
    except ValueError:
        return ""
    return str(document.get("message") or "")[:300] if isinstance(document, dict) else ""


def _raise_for_pinterest(response: FetchedResponse, action: str) -> None:
    """Pinterest's answers as PublishFailed: 403 is a permission the account or app lacks ("You are not permitted
    to access that resource"), 400 and 404 a request Pinterest will not take (a board that is not the account's),
    none of them a revoked token (401); the rest as every connector reads them."""
    if response.status in (400, 403, 404, 409, 422):
        raise PublishFailed(
            f"pinterest refused to {action} (HTTP {response.status}): {_message(response) or 'refused'}",
            retryable=False,
        )
    raise_for_status("pinterest", response, action)


def _refuse_spam(response: FetchedResponse) -> None:
    message = _message(response)
    if "spam" in message.lower():
        raise PublishFailed(f"pinterest refused the Pin as spam: {message}", retryable=False)


def _lifts_at(response: FetchedResponse) -> datetime:
    """When a rate limit lifts: Retry-After seconds when sent, else a minute from now."""
    value = response.headers.get("retry-after", "")
    if value.isdigit():
        return datetime.now(UTC) + timedelta(seconds=int(value))
    return datetime.now(UTC) + RATE_LIMIT_PAUSE
