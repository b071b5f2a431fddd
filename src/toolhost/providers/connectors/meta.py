"""What the Meta connectors (`instagram`, `facebook`, `threads`) share: Graph API requests and their errors, rate
limits, long-lived tokens and their renewal, publishing quotas and waiting for a media container.

Each behaviour follows a section of Meta's public documentation, named where it is implemented:
- Graph API "Handling Errors": an error is `{"error": {message, type, code, error_subcode, is_transient}}`; code
  190 is an access token Meta no longer accepts (expired, revoked, password changed): the account needs a new
  sign-in. Codes 4, 17, 32, 613 and the 80001-80014 family are rate limits ("Rate Limits", "Error Codes").
- Graph API "Rate Limits": `X-App-Usage` (percentages of the app's hourly allowance) and
  `X-Business-Use-Case-Usage` (per business: percentages and `estimated_time_to_regain_access` in minutes). A
  request refused for a rate limit is tried again once the estimate has passed; without an estimate, after a
  delay that doubles with each limit met during the same publication (kept in the post's connector state).
- Meta issues no refresh token: the short-lived token of the code exchange is traded for a long-lived one
  (`extend`), which each platform renews with its own grant before it runs out (`renew`).
"""

from __future__ import annotations

import asyncio
import hashlib
import hmac
import json
from collections.abc import Awaitable, Callable
from dataclasses import dataclass
from datetime import UTC, datetime, timedelta
from typing import Any, ClassVar
from urllib.parse import urlencode

from toolhost.platform.dates import iso, parse_iso
from toolhost.platform.results import UpstreamFailed
from toolhost.providers.connectors.base import (
    AccountSession,
    OutgoingPost,
    PublishContext,
    PublishFailed,
    PublishResult,
    json_body,
    upstream,
)
from toolhost.providers.connectors.oauth import REFRESH_MARGIN, OAuthApp, OAuthConnector
from toolhost.providers.fetch import FetchedResponse, Fetcher

# Graph API "Handling Errors": 190 (and the older 102) is an access token Meta refuses.
TOKEN_CODES = frozenset({102, 190})
# Graph API "Rate Limits" and "Error Codes": application (4), user (17), Page (32), per-hour (613) and the
# Business Use Case limits of Instagram, Pages and the others (80001-80014).
RATE_LIMIT_CODES = frozenset({4, 17, 32, 613, *range(80001, 80015)})
# Graph API "Handling Errors": 1 (unknown) and 2 (service) are temporary; `is_transient` says so too.
TRANSIENT_CODES = frozenset({1, 2})
# Instagram "Error Codes" 2207042 and Threads' publishing limit: the account's 24-hour posting quota is used up.
QUOTA_SUBCODES = frozenset({2207042})
# A used-up quota frees up as posts leave the moving 24-hour window; asked again after this long.
QUOTA_RETRY = timedelta(hours=1)
# A long-lived token (60 days) is renewed once fewer than this many days are left: every use in the last month
# renews it, and Threads only renews tokens at least a day old.
RENEW_BEFORE = timedelta(days=30)
# Without Meta's estimate, a rate limit is tried again after this delay, doubled for each further limit.
RATE_LIMIT_BACKOFF = timedelta(minutes=2)
RATE_LIMIT_BACKOFF_CAP = timedelta(hours=1)
# A rate limit that Meta expects to lift within the operator's rate_limit_wait is waited out this many times.
RATE_LIMIT_WAITS = 3
# How far before a saved marker the search for a post already published starts: Meta's clock and ours differ.
CLOCK_SKEW = timedelta(minutes=2)


class RateLimitReached(PublishFailed):
    """Meta refused a request for a rate limit or a used-up quota; `retry_at` is Meta's estimate when it gave one."""

    def __init__(self, message: str, *, retry_at: datetime | None) -> None:
        super().__init__(message, retryable=True, retry_at=retry_at)


@dataclass(frozen=True, slots=True)
class GraphError:
    """The error object of a Graph API answer ("Handling Errors")."""

    code: int | None
    subcode: int | None
    message: str
    transient: bool

    @property
    def label(self) -> str:
        """`code 190` or `code 9/2207042`, as the error is named in the documentation's tables."""
        if self.code is None:
            return "no error code"
        return f"code {self.code}" + (f"/{self.subcode}" if self.subcode else "")


class GraphRefusal(PublishFailed):
    """Meta refused a request for a reason other than the token or a rate limit; `error` says which."""

    def __init__(self, message: str, *, retryable: bool, error: GraphError) -> None:
        super().__init__(message, retryable=retryable)
        self.error = error


def graph_error(response: FetchedResponse) -> GraphError:
    """The error of a refused request; Meta's user-facing message when it has one (never the request's input)."""
    try:
        document = json.loads(response.content or b"{}")
    except ValueError:
        document = {}
    error = document.get("error") if isinstance(document, dict) else None
    if not isinstance(error, dict):
        return GraphError(None, None, f"HTTP {response.status}", False)
    message = str(error.get("error_user_msg") or error.get("message") or f"HTTP {response.status}")
    return GraphError(
        code=_integer(error.get("code")),
        subcode=_integer(error.get("error_subcode")),
        message=" ".join(message.split())[:300],
        transient=bool(error.get("is_transient")),
    )


def regain_time(response: FetchedResponse) -> datetime | None:
    """When Meta expects the rate limit to lift: the longest `estimated_time_to_regain_access` (minutes) of the
    `X-Business-Use-Case-Usage` header ("Rate Limits", Business Use Case Rate Limits); None when not given."""
    try:
        usage = json.loads(response.headers.get("x-business-use-case-usage", "") or "{}")
    except ValueError:
        return None
    minutes = [
        entry.get("estimated_time_to_regain_access")
        for entries in (usage.values() if isinstance(usage, dict) else [])
        if isinstance(entries, list)
        for entry in entries
        if isinstance(entry, dict)
    ]
    longest = max((value for value in minutes if isinstance(value, int | float) and value > 0), default=None)
    return datetime.now(UTC) + timedelta(minutes=float(longest)) if longest is not None else None


def check_graph(connector: str, response: FetchedResponse, action: str) -> None:
    """A Graph API answer as PublishFailed: token refused (code 190, HTTP 401) is an authentication failure, a rate
    limit or used-up quota is RateLimitReached, a temporary error is retryable, anything else final."""
    if response.ok:
        return
    error = graph_error(response)
    if error.code in TOKEN_CODES or response.status == 401:
        raise PublishFailed(
            f"{connector} refused the account's access token ({error.label}: {error.message}); sign in again",
            retryable=False,
            authentication=True,
        )
    if error.subcode in QUOTA_SUBCODES:
        raise RateLimitReached(
            f"{connector}: the account's publishing limit is reached ({error.label})",
            retry_at=datetime.now(UTC) + QUOTA_RETRY,
        )
    if error.code in RATE_LIMIT_CODES or response.status == 429:
        raise RateLimitReached(f"{connector} rate limit reached ({error.label})", retry_at=regain_time(response))
    retryable = error.transient or error.code in TRANSIENT_CODES or response.status >= 500
    raise GraphRefusal(
        f"{connector} refused to {action}: {error.message} ({error.label})", retryable=retryable, error=error
    )


@dataclass(frozen=True, slots=True)
class ContainerStatus:
    """Where a media container stands: IN_PROGRESS, FINISHED, PUBLISHED, ERROR or EXPIRED, and Meta's reason."""

    state: str
    detail: str = ""


class MetaConnector(OAuthConnector):
    """A Meta platform's connector: Graph API requests with the account's token, in the form Meta documents."""

    uploads_media_bytes: ClassVar[bool] = False
    # Graph API "Securing Requests": every call carries appsecret_proof (HMAC-SHA256 of the token with the app
    # secret), so a leaked token is useless without the app; the Threads API documents no such parameter.
    sends_app_secret_proof: ClassVar[bool] = True

    def __init__(
        self,
        fetcher: Fetcher,
        *,
        app: OAuthApp,
        api_url: str,
        rate_limit_wait: float,
        media_processing_polls: int,
        media_processing_seconds: float,
        sleep: Callable[[float], Awaitable[None]] = asyncio.sleep,
    ) -> None:
        super().__init__(fetcher, app=app)
        self.api_url = api_url.rstrip("/")
        self.rate_limit_wait = rate_limit_wait
        self.media_processing_polls = media_processing_polls
        self.media_processing_seconds = media_processing_seconds
        self.sleep = sleep

    # --- tokens ------------------------------------------------------------------------------------------

    async def access_token(self, account: AccountSession) -> str:
        """The account's token, renewed first once fewer than RENEW_BEFORE are left of it. A renewal that fails
        for a passing reason leaves the token in use while it is still valid."""
        expires_at = account.secrets.get("expires_at")
        if expires_at:
            left = datetime.fromtimestamp(int(expires_at), UTC) - datetime.now(UTC)
            if left < RENEW_BEFORE:
                try:
                    await self.refresh(account)
                except PublishFailed as failed:
                    if failed.authentication or left < REFRESH_MARGIN:
                        raise
        return str(account.secrets["access_token"])

    async def refresh(self, account: AccountSession) -> None:
        """Renews the long-lived token with the platform's own grant and stores it at once, with its expiry."""
        tokens = await self.renew(account)
        expires_at = int(datetime.now(UTC).timestamp()) + int(tokens.get("expires_in") or 0)
        account.update_secrets(
            {"access_token": str(tokens["access_token"]), "expires_at": expires_at},
            expires_at=datetime.fromtimestamp(expires_at, UTC),
        )
        if account.persist is not None:
            await account.persist(account)
            account.changed = False

    async def renew(self, account: AccountSession) -> dict[str, Any]:
        """The platform's renewal of a long-lived token: `{access_token, expires_in}`."""
        raise PublishFailed(
            f"{self.name}: the access token cannot be renewed; sign in again", retryable=False, authentication=True
        )

    async def token_grant(self, url: str, params: dict[str, str]) -> dict[str, Any]:
        """A GET on one of Meta's token endpoints (long-lived exchange, renewal). Code 190 (the token is no longer
        valid) means sign in again; any other refusal leaves a still-valid token in use."""
        response = await self.send("GET", f"{url}?{urlencode(params)}")
        check_graph(self.name, response, "extend the access token")
        reply = json_body(self.name, response)
        if not reply.get("access_token"):
            raise PublishFailed(f"{self.name}: the token reply has no access_token", retryable=True)
        return reply

    def long_lived(self, account: AccountSession, reply: dict[str, Any]) -> None:
        """Keeps a long-lived token in place of the short-lived one, with its expiry in epoch seconds."""
        material: dict[str, Any] = {"access_token": str(reply["access_token"])}
        if reply.get("expires_in"):
            material["expires_at"] = int(datetime.now(UTC).timestamp()) + int(reply["expires_in"])
        account.secrets = material

    # --- requests ----------------------------------------------------------------------------------------

    async def graph(
        self,
        account: AccountSession,
        method: str,
        path: str,
        params: dict[str, str] | None = None,
        *,
        action: str,
    ) -> dict[str, Any]:
        """One API request with the account's token (in the query, or the form body of a POST); a rate limit
        Meta expects to lift within rate_limit_wait is waited out in place, a longer one is raised."""
        access = await self.access_token(account)
        fields = {**(params or {}), "access_token": access}
        if self.sends_app_secret_proof and self.app.client_secret:
            fields["appsecret_proof"] = hmac.new(
                self.app.client_secret.encode(), access.encode(), hashlib.sha256
            ).hexdigest()
        url = f"{self.api_url}/{path.lstrip('/')}"
        body = urlencode(fields).encode()
        for _ in range(RATE_LIMIT_WAITS + 1):
            if method == "POST":
                response = await self.send(
                    "POST", url, content=body, headers={"Content-Type": "application/x-www-form-urlencoded"}
                )
            else:
                response = await self.send(method, f"{url}?{urlencode(fields)}")
            try:
                check_graph(self.name, response, action)
            except RateLimitReached as limited:
                wait = (limited.retry_at - datetime.now(UTC)).total_seconds() if limited.retry_at else None
                if wait is None or wait > self.rate_limit_wait:
                    raise
                await self.sleep(max(wait, 0.0) + 1.0)
                continue
            return json_body(self.name, response) if response.content else {}
        raise RateLimitReached(f"{self.name} kept answering with a rate limit", retry_at=regain_time(response))

    async def read(self, account: AccountSession, method: str, path: str, params: dict[str, str] | None = None) -> Any:
        """A request made for a tool caller (metrics, comments): a failure is the caller's upstream_error."""
        try:
            return await self.graph(account, method, path, params, action="read")
        except PublishFailed as error:
            raise upstream(error, self.name) from error

    # --- publishing --------------------------------------------------------------------------------------

    async def publish(self, account: AccountSession, post: OutgoingPost, context: PublishContext) -> PublishResult:
        """Publishes once (`publish_once`); a rate limit returns the post to the schedule until Meta's estimate, or
        after a delay that doubles with each limit this publication met."""
        try:
            return await self.publish_once(account, post, context)
        except RateLimitReached as limited:
            count = int(context.state.get("rate_limits") or 0)
            retry_at = limited.retry_at or datetime.now(UTC) + min(
                RATE_LIMIT_BACKOFF * 2**count, RATE_LIMIT_BACKOFF_CAP
            )
            await context.save_state({**context.state, "rate_limits": count + 1})
            raise PublishFailed(
                f"{limited.message}; trying again at {iso(retry_at)}", retryable=True, retry_at=retry_at
            ) from limited

    async def publish_once(self, account: AccountSession, post: OutgoingPost, context: PublishContext) -> PublishResult:
        """The platform's publication, resumable from `context.state`."""
        raise NotImplementedError

    async def check_quota(self, account: AccountSession, path: str) -> None:
        """Instagram "Content Publishing", Publishing limit (`content_publishing_limit`) and Threads "Posts",
        Publishing limit (`threads_publishing_limit`): `quota_usage` of `config.quota_total` posts in 24 hours."""
        reply = await self.graph(
            account, "GET", path, {"fields": "quota_usage,config"}, action="read the publishing limit"
        )
        for entry in reply.get("data") or []:
            total = _integer((entry.get("config") or {}).get("quota_total"))
            used = _integer(entry.get("quota_usage"))
            if total is not None and used is not None and used >= total:
                raise RateLimitReached(
                    f"{self.name}: the account published its {total} posts allowed in 24 hours",
                    retry_at=datetime.now(UTC) + QUOTA_RETRY,
                )

    async def container_status(self, account: AccountSession, container_id: str) -> ContainerStatus:
        """A container's status as the platform reports it."""
        raise NotImplementedError

    async def wait_until_processed(self, account: AccountSession, container_id: str, what: str) -> ContainerStatus:
        """Asks for the container's status until it is no longer IN_PROGRESS; still processing after
        media_processing_polls questions is retryable (the saved container is asked about again, not made anew)."""
        for poll in range(self.media_processing_polls + 1):
            status = await self.container_status(account, container_id)
            if status.state != "IN_PROGRESS":
                return status
            if poll < self.media_processing_polls:
                await self.sleep(self.media_processing_seconds)
        raise PublishFailed(f"{self.name} is still processing {what}", retryable=True)


def comparable(text: str) -> str:
    """A text as Meta stores it and as toolhost sent it, made equal: surrounding and repeated whitespace."""
    return " ".join(text.split())


def published_since(timestamp: Any, since: datetime) -> bool:
    """Whether a platform timestamp (ISO 8601, `+0000` offsets included) lies after a marker, less CLOCK_SKEW."""
    try:
        moment = parse_iso(str(timestamp))
    except ValueError:
        return False
    return moment.tzinfo is not None and moment >= since - CLOCK_SKEW


def options_of(post: OutgoingPost) -> dict[str, Any]:
    """The post's platform_metadata for its platform."""
    options = post.platform_metadata.get(post.platform)
    return options if isinstance(options, dict) else {}


def media_url(connector: str, post: OutgoingPost, index: int) -> str:
    """The signed URL a Meta platform fetches an item from (Meta downloads media; it takes no uploaded bytes)."""
    item = post.media[index]
    if not item.url:
        raise PublishFailed(f"{connector}: media {index + 1} has no URL Meta could fetch it from", retryable=False)
    return item.url


def kind_of(content_type: str) -> str:
    """IMAGE or VIDEO, as Meta's `media_type` names them."""
    return "VIDEO" if content_type.startswith("video/") else "IMAGE"


def upstream_error(message: str, connector: str) -> UpstreamFailed:
    """A reply that lacks what the documentation promises, reported to a tool caller."""
    return UpstreamFailed(message, provider=connector)


def _integer(value: Any) -> int | None:
    try:
        return int(value)
    except (TypeError, ValueError):
        return None


class FacebookLoginConnector(MetaConnector):
    """A connector whose accounts sign in with Facebook Login (Instagram with Facebook Login, Facebook Pages)."""

    sign_in_with: ClassVar[str] = "Facebook"

    async def extend(self, account: AccountSession) -> None:
        """Facebook Login "Long-Lived Access Tokens": GET oauth/access_token with grant_type=fb_exchange_token trades
        the short-lived user token (hours) for a long-lived one (about 60 days)."""
        self.long_lived(account, await self.exchange(str(account.secrets["access_token"])))

    async def exchange(self, token: str) -> dict[str, Any]:
        """The long-lived user token for a valid user token (short- or long-lived) of this app."""
        return await self.token_grant(
            self.app.token_url,
            {
                "grant_type": "fb_exchange_token",
                "client_id": self.app.client_id or "",
                "client_secret": self.app.client_secret or "",
                "fb_exchange_token": token,
            },
        )

    async def pages(self, account: AccountSession, fields: str) -> list[dict[str, Any]]:
        """Graph API reference "User Accounts" (GET /me/accounts): the Pages the person granted the app, with
        the fields asked for (a Page access token among them)."""
        reply = await self.graph(account, "GET", "me/accounts", {"fields": fields}, action="list the Pages")
        return [page for page in reply.get("data") or [] if isinstance(page, dict) and page.get("id")]

    @staticmethod
    def only_one(kind: str, candidates: list[dict[str, Any]], name: Callable[[dict[str, Any]], str]) -> dict[str, Any]:
        """The one Page (or Instagram account) the person granted; none or several is refused with their names,
        since one sign-in connects one account (Facebook Login's dialog lets the person choose which)."""
        if len(candidates) == 1:
            return candidates[0]
        if not candidates:
            raise PublishFailed(f"Facebook granted no {kind}; sign in again and choose one", retryable=False)
        names = ", ".join(name(candidate) for candidate in candidates[:10])
        raise PublishFailed(
            f"Facebook granted {len(candidates)} {kind}s ({names}); sign in again and choose only the one to connect",
            retryable=False,
        )
