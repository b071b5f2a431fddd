"""The `linkedin` connector: the Posts API for members and organisations, images and videos, OAuth 2.0
authorization code (no PKCE: LinkedIn takes it only from some apps, so the flow rests on a checked `state`).

Each behaviour follows a section of LinkedIn's public API documentation (Microsoft Learn, "LinkedIn Marketing
> Community Management"), named where it is implemented. Every `/rest` request carries the `LinkedIn-Version`
(YYYYMM) and `X-Restli-Protocol-Version: 2.0.0` headers ("Versioning", "Protocol Versions").

Exactly once without an idempotency key: `POST /rest/posts` has none, and a worker may die after LinkedIn
accepted a post but before toolhost recorded its `x-restli-id`. So before the create request the connector
saves an attempt marker (when the first unresolved attempt began) in the post's connector state, and right after
it the post's URN. A retry that finds a marker without a URN first looks for the post among the author's recent
posts ("Posts API", Find Posts by Authors, newest first) created since the marker, matched by commentary, and
adopts the one it finds; only when there is none does it post again.

A member's own posts can be read only with `r_member_social`, which LinkedIn grants to approved partners alone,
so for members that search is refused (403). The retry then sends the same request again (the same commentary
and the media uploaded once): LinkedIn refuses content that repeats the author's recent post with 422
DUPLICATE_POST, "Content is a duplicate of urn:li:share:...", naming the post, which is adopted; a post created
instead means the lost attempt never reached LinkedIn. LinkedIn's documentation does not describe this refusal
(it is the answer developers report, e.g. github.com/Arisamiga/Linkedin-RSS/issues/5) nor how long it remembers
a post (reports say a day or more), so a retry relies on it only within DUPLICATE_WINDOW of the first attempt;
later, a member post whose first attempt may have posted fails instead of risking a second.
"""

from __future__ import annotations

import asyncio
import json
import re
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
    raise_for_status,
    upstream,
)
from toolhost.providers.connectors.oauth import OAuthApp, OAuthConnector, waiting_out_rate_limits
from toolhost.providers.fetch import FetchedResponse, Fetcher

# "Sign In with LinkedIn using OpenID Connect": openid and profile name the member (GET /v2/userinfo);
# "Posts API" permissions: w_member_social posts as the member.
MEMBER_SCOPES = ("openid", "profile", "w_member_social")
# "Posts API" and "Organization Access Control by Role": w_organization_social posts as an organisation the
# member administers, r_organization_admin lists those organisations. Only apps approved for the Community
# Management API may ask for them, so they are asked for only when the operator says the app has them.
# r_organization_social lets a retry read the organisation's recent posts; reading a member's own posts needs
# r_member_social, which LinkedIn grants only to approved partners (see `_find_post`).
ORGANIZATION_SCOPES = ("w_organization_social", "r_organization_social", "r_organization_admin")
RESTLI_PROTOCOL = "2.0.0"
# "Posts API", Little Text Format: these characters are markup in commentary and are escaped with a backslash;
# a hashtag is written as the {hashtag|\#|word} template.
RESERVED = re.compile(r"([\\|{}@\[\]()<>#*_~])")
HASHTAG = re.compile(r"(?<![\w#])#(\w+)")
# How far before the attempt marker a reconciling search reaches: LinkedIn's clock and ours differ a little.
CLOCK_SKEW = timedelta(seconds=60)
# "Posts API", Find Posts by Authors: count per page (at most 100), and the pages a reconciliation reads.
PAGE_SIZE = 50
RECONCILE_PAGES = 3
PROCESSING_POLL_SECONDS = 2.0  # between "Get a Video" requests while LinkedIn processes an upload
DUPLICATE = "duplicate"
# How long after a lost attempt a retry relies on LinkedIn refusing the same content again (see the module's
# docstring): well within what developers report, and longer than the job machine's retries after a lost lease.
DUPLICATE_WINDOW = timedelta(hours=1)
# The post a DUPLICATE_POST refusal names.
DUPLICATE_OF = re.compile(r"urn:li:(?:share|ugcPost):\d+")


class PostsUnreadable(Exception):
    """LinkedIn refused to list the author's posts (a member's posts need the partner-only r_member_social)."""


def commentary(text: str) -> str:
    """Text as Little Text Format: reserved characters escaped, hashtags as hashtag templates."""
    escaped = RESERVED.sub(r"\\\1", text)
    return re.sub(r"(?<![\w#\\])\\#(\w+)", r"{hashtag|\\#|\1}", escaped)


def comparable(text: str) -> str:
    """Commentary as LinkedIn returns it and as toolhost sent it, made equal (surrounding whitespace)."""
    return " ".join(text.split())


class LinkedInConnector(OAuthConnector):
    """Posts (text, an article link, images or a video) by a member or an organisation, and their counters."""

    name: ClassVar[str] = "linkedin"
    sign_in_with: ClassVar[str] = "LinkedIn"
    platforms: ClassVar[tuple[str, ...]] = ("linkedin",)
    media_kinds: ClassVar[tuple[str, ...]] = ("image", "video")
    capabilities: ClassVar[frozenset[str]] = frozenset({PUBLISH, METRICS})

    def __init__(
        self,
        fetcher: Fetcher,
        *,
        app: OAuthApp,
        api_url: str,
        version: str,
        organizations: bool,
        rate_limit_wait: float,
        media_processing_polls: int,
        sleep: Callable[[float], Awaitable[None]] = asyncio.sleep,
    ) -> None:
        super().__init__(fetcher, app=app)
        self.api_url = api_url.rstrip("/")
        self.version = version
        self.organizations = organizations
        self.rate_limit_wait = rate_limit_wait
        self.media_processing_polls = media_processing_polls
        self.sleep = sleep

    async def identify(self, account: AccountSession) -> tuple[str | None, dict[str, Any]]:
        """ "Sign In with LinkedIn using OpenID Connect" (GET /v2/userinfo): the member's id (`sub`) and name;
        with the organisation scopes, "Organization Access Control by Role" (GET /rest/organizationAcls,
        q=roleAssignee, role ADMINISTRATOR, state APPROVED): the organisations the member may post as."""
        user = await self._call(account, "GET", "/v2/userinfo", action="read the account")
        if not user.get("sub"):
            raise PublishFailed("linkedin: /v2/userinfo did not name the member", retryable=True)
        settings: dict[str, Any] = {"person_urn": f"urn:li:person:{user['sub']}", "organizations": []}
        if self.organizations:
            query = urlencode({"q": "roleAssignee", "role": "ADMINISTRATOR", "state": "APPROVED"})
            acls = await self._call(account, "GET", f"/rest/organizationAcls?{query}", action="list organisations")
            settings["organizations"] = sorted(
                {str(element["organization"]) for element in acls.get("elements") or [] if element.get("organization")}
            )
        return str(user.get("name") or user["sub"]), settings

    def author(self, account: AccountSession, post: OutgoingPost) -> str:
        """The member, or the organisation named in platform_metadata.linkedin.organization (an id or URN) when
        the member administers it."""
        options: dict[str, Any] = post.platform_metadata.get("linkedin") or {}
        organization = options.get("organization")
        if not organization:
            return str(account.settings["person_urn"])
        urn = str(organization) if str(organization).startswith("urn:") else f"urn:li:organization:{organization}"
        if urn not in (account.settings.get("organizations") or []):
            raise PublishFailed(
                f"linkedin: the signed-in member does not administer {urn}; sign in as one of its administrators",
                retryable=False,
            )
        return urn

    # --- publishing --------------------------------------------------------------------------------------

    async def publish(self, account: AccountSession, post: OutgoingPost, context: PublishContext) -> PublishResult:
        """Uploads the media once, then creates the post once (reconciling an attempt whose answer was lost)."""
        state = dict(context.state)
        author = self.author(account, post)
        text = commentary(post.text())
        urn = state.get("post_urn")
        attempt = state.get("attempt")
        since = parse_iso(str(attempt["since"])) if attempt else None
        if urn is None and since is not None:
            try:
                urn = await self._find_post(account, author, text, since=since)
            except PostsUnreadable as unreadable:
                if datetime.now(UTC) - since > DUPLICATE_WINDOW:
                    raise PublishFailed(
                        "linkedin: an earlier attempt may have posted, and the app may not read the author's posts "
                        "to check (HTTP 403); look at the profile before scheduling it again",
                        retryable=False,
                    ) from unreadable
            if urn is not None:
                state = {**state, "post_urn": urn, "attempt": None}
                await context.save_state(state)
        if urn is None:
            content, state = await self._content(account, author, post, state, context)
            if since is None:
                state = {**state, "attempt": {"since": iso(datetime.now(UTC))}}
                await context.save_state(state)
            urn = await self._create(account, author, text, content, lost_attempt=since is not None)
            state = {**state, "post_urn": urn, "attempt": None}
            await context.save_state(state)
        return PublishResult(external_post_id=str(urn), external_url=f"https://www.linkedin.com/feed/update/{urn}/")

    async def _content(
        self,
        account: AccountSession,
        author: str,
        post: OutgoingPost,
        state: dict[str, Any],
        context: PublishContext,
    ) -> tuple[dict[str, Any] | None, dict[str, Any]]:
        """The post's `content` ("Posts API": media, multiImage or article), its media uploaded once."""
        options: dict[str, Any] = post.platform_metadata.get("linkedin") or {}
        if not post.media:
            article = options.get("article_url")
            return (
                {"article": {"source": str(article), "title": post.title or str(article)}} if article else None
            ), state
        urns = [str(value) for value in state.get("media") or []]
        if not urns:
            for index, item in enumerate(post.media):
                if item.content_type.startswith("video/"):
                    urns.append(await self._upload_video(account, author, item, index))
                else:
                    urns.append(await self._upload_image(account, author, item, index))
            state = {**state, "media": urns}
            await context.save_state(state)
        if len(urns) == 1:
            return {"media": {"id": urns[0], "title": post.title} if post.title else {"id": urns[0]}}, state
        return {"multiImage": {"images": [{"id": value} for value in urns]}}, state

    async def _create(
        self, account: AccountSession, author: str, text: str, content: dict[str, Any] | None, *, lost_attempt: bool
    ) -> str:
        """ "Posts API", Create a Post (POST /rest/posts): 201 with the post's URN in the x-restli-id header.

        After a lost attempt, a duplicate refusal names the post that attempt made, which is adopted; otherwise it
        is another post of the author's with the same text, and this one fails."""
        body: dict[str, Any] = {
            "author": author,
            "commentary": text,
            "visibility": "PUBLIC",
            "distribution": {
                "feedDistribution": "MAIN_FEED",
                "targetEntities": [],
                "thirdPartyDistributionChannels": [],
            },
            "lifecycleState": "PUBLISHED",
            "isReshareDisabledByAuthor": False,
        }
        if content is not None:
            body["content"] = content
        response = await self._request(account, "POST", "/rest/posts", body=body)
        if response.status in (409, 422) and DUPLICATE in _message(response).lower():
            named = DUPLICATE_OF.search(_message(response))
            if lost_attempt and named is not None:
                return named.group(0)
            raise PublishFailed(
                "linkedin refused the post as duplicate content: the author published the same text recently",
                retryable=False,
            )
        _raise_for_linkedin(response, "create the post")
        urn = response.headers.get("x-restli-id") or json_body("linkedin", response).get("id")
        if not urn:
            raise PublishFailed("linkedin: the create reply has no x-restli-id", retryable=True)
        return str(urn)

    async def _find_post(self, account: AccountSession, author: str, text: str, *, since: datetime) -> str | None:
        """The author's post with this commentary created since the attempt began, when there is one.

        "Posts API", Find Posts by Authors (GET /rest/posts?q=author&author=&sortBy=CREATED&count=&start=): the
        author's posts, newest first, each with its commentary and createdAt (epoch milliseconds).
        """
        wanted = comparable(text)
        earliest = (since - CLOCK_SKEW).timestamp() * 1000
        for page in range(RECONCILE_PAGES):
            query = urlencode(
                {"q": "author", "author": author, "sortBy": "CREATED", "count": PAGE_SIZE, "start": page * PAGE_SIZE}
            )
            response = await self._request(account, "GET", f"/rest/posts?{query}")
            if response.status == 403:
                raise PostsUnreadable
            _raise_for_linkedin(response, "read the author's posts")
            reply = json_body("linkedin", response)
            elements = reply.get("elements") or []
            for element in elements:
                if int(element.get("createdAt") or 0) < earliest:
                    return None
                if comparable(str(element.get("commentary") or "")) == wanted:
                    return str(element["id"])
            if len(elements) < PAGE_SIZE:
                return None
        return None

    async def _upload_image(self, account: AccountSession, author: str, item: MediaItem, index: int) -> str:
        """ "Images API": initializeUpload (POST /rest/images?action=initializeUpload) gives an upload URL and
        the image URN; the bytes are PUT there with the member's token."""
        data = _bytes(item, index)
        started = await self._call(
            account,
            "POST",
            "/rest/images?action=initializeUpload",
            body={"initializeUploadRequest": {"owner": author}},
            action="start an image upload",
        )
        value = started.get("value") or {}
        if not value.get("uploadUrl") or not value.get("image"):
            raise PublishFailed("linkedin: the image upload has no URL", retryable=True)
        response = await self.authorized(
            account,
            "PUT",
            str(value["uploadUrl"]),
            content=data,
            headers={"Content-Type": "application/octet-stream"},
            timeout=600,
        )
        _raise_for_linkedin(response, "upload an image")
        return str(value["image"])

    async def _upload_video(self, account: AccountSession, author: str, item: MediaItem, index: int) -> str:
        """ "Videos API": initializeUpload (fileSizeBytes) answers upload instructions, one per byte range; each
        part is PUT to its URL and its ETag kept; finalizeUpload takes the ETags in order; then GET
        /rest/videos/{urn} until its status is AVAILABLE (or PROCESSING_FAILED, with processingFailureReason)."""
        data = _bytes(item, index)
        started = await self._call(
            account,
            "POST",
            "/rest/videos?action=initializeUpload",
            body={
                "initializeUploadRequest": {
                    "owner": author,
                    "fileSizeBytes": len(data),
                    "uploadCaptions": False,
                    "uploadThumbnail": False,
                }
            },
            action="start a video upload",
        )
        value = started.get("value") or {}
        video = str(value.get("video") or "")
        instructions = value.get("uploadInstructions") or []
        if not video or not instructions:
            raise PublishFailed("linkedin: the video upload has no instructions", retryable=True)
        etags: list[str] = []
        for instruction in instructions:
            first, last = int(instruction["firstByte"]), int(instruction["lastByte"])
            # The part URLs are pre-signed: they take the bytes without the member's token.
            response = await self.send(
                "PUT",
                str(instruction["uploadUrl"]),
                content=data[first : last + 1],
                headers={"Content-Type": "application/octet-stream"},
                timeout=600,
            )
            _raise_for_linkedin(response, "upload a video part")
            etag = response.headers.get("etag")
            if not etag:
                raise PublishFailed("linkedin: a video part was stored without an ETag", retryable=True)
            etags.append(etag)
        await self._call(
            account,
            "POST",
            "/rest/videos?action=finalizeUpload",
            body={
                "finalizeUploadRequest": {
                    "video": video,
                    "uploadToken": str(value.get("uploadToken") or ""),
                    "uploadedPartIds": etags,
                }
            },
            action="finish a video upload",
        )
        for _ in range(self.media_processing_polls):
            status = await self._call(account, "GET", f"/rest/videos/{quote(video, safe='')}", action="check a video")
            if status.get("status") == "AVAILABLE":
                return video
            if status.get("status") == "PROCESSING_FAILED":
                why = str(status.get("processingFailureReason") or "processing failed")[:200]
                raise PublishFailed(f"linkedin could not process media {index + 1}: {why}", retryable=False)
            await self.sleep(PROCESSING_POLL_SECONDS)
        raise PublishFailed(f"linkedin is still processing media {index + 1}", retryable=True)

    # --- requests ----------------------------------------------------------------------------------------

    async def _request(
        self, account: AccountSession, method: str, path: str, *, body: dict[str, Any] | None = None
    ) -> FetchedResponse:
        """One authorized request with LinkedIn's version headers; a rate limit is waited out in place when it
        lifts soon, else reported with the time it lifts.

        "Rate Limits": an application or member over its quota gets 429; daily quotas reset at midnight UTC.
        """
        headers = {"LinkedIn-Version": self.version, "X-Restli-Protocol-Version": RESTLI_PROTOCOL}
        if body is not None:
            headers["Content-Type"] = "application/json"
        content = json.dumps(body, ensure_ascii=False).encode() if body is not None else b""
        return await waiting_out_rate_limits(
            lambda: self.authorized(account, method, f"{self.api_url}{path}", content=content, headers=headers),
            platform="linkedin",
            lifts_at=_lifts_at,
            longest_wait=self.rate_limit_wait,
            sleep=self.sleep,
        )

    async def _call(
        self, account: AccountSession, method: str, path: str, *, body: dict[str, Any] | None = None, action: str
    ) -> dict[str, Any]:
        response = await self._request(account, method, path, body=body)
        _raise_for_linkedin(response, action)
        return json_body("linkedin", response) if response.content else {}

    # --- metrics -----------------------------------------------------------------------------------------

    async def fetch_metrics(self, account: AccountSession, external_post_id: str) -> dict[str, int]:
        """ "Social Metadata API" (GET /rest/socialMetadata/{post URN}): the post's reactions and comments."""
        try:
            reply = await self._call(
                account, "GET", f"/rest/socialMetadata/{quote(external_post_id, safe='')}", action="read counters"
            )
        except PublishFailed as error:
            raise upstream(error, "linkedin") from error
        reactions = reply.get("reactionSummaries")
        comments = reply.get("commentSummary")
        if reactions is None and comments is None:
            raise UpstreamFailed("linkedin does not show this post", provider="linkedin")
        likes = sum(int(summary.get("count") or 0) for summary in (reactions or {}).values())
        return {"likes": likes, "comments": int((comments or {}).get("count") or 0)}


def _bytes(item: MediaItem, index: int) -> bytes:
    if item.data is None:
        raise PublishFailed(f"linkedin: media {index + 1} must be stored in toolhost to upload", retryable=False)
    return item.data


def _message(response: FetchedResponse) -> str:
    """The message of a LinkedIn error reply ("Error Handling": {"message", "status", "serviceErrorCode"})."""
    try:
        document = json.loads(response.content or b"{}")
    except ValueError:
        return ""
    return str(document.get("message") or "")[:300] if isinstance(document, dict) else ""


def _raise_for_linkedin(response: FetchedResponse, action: str) -> None:
    """LinkedIn's answers as PublishFailed: 403 is a permission the member or app lacks ("Error Handling",
    ACCESS_DENIED), not a revoked token (401); the rest as every connector reads them."""
    if response.status == 403:
        raise PublishFailed(
            f"linkedin refused to {action} (HTTP 403): {_message(response) or 'access denied'}", retryable=False
        )
    if response.status == 422:
        raise PublishFailed(f"linkedin refused to {action} (HTTP 422): {_message(response)}", retryable=False)
    raise_for_status("linkedin", response, action)


def _lifts_at(response: FetchedResponse) -> datetime:
    """When a rate limit lifts: Retry-After seconds when sent, else the next midnight UTC (daily quotas)."""
    now = datetime.now(UTC)
    value = response.headers.get("retry-after", "")
    if value.isdigit():
        return now + timedelta(seconds=int(value))
    return datetime(now.year, now.month, now.day, tzinfo=UTC) + timedelta(days=1)
