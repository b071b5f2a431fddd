"""The `threads` connector: the Threads API (graph.threads.net), posts and reply chains through media containers.

Each behaviour follows a section of Meta's Threads API documentation, named where it is implemented.

Exactly once without an idempotency key: like Instagram, a post is a container (`POST /{threads-user-id}/threads`)
then its publication (`POST /{threads-user-id}/threads_publish`). Each post of a chain saves its container (with
its place in the chain and its time) before it is published, and its media id right after. A retry that finds a
container without a media id asks for its status: PUBLISHED is looked up among the account's own threads (or
replies, for a post below the first) by text, from the container's time on, and adopted; FINISHED is published;
EXPIRED is made anew. `platform_metadata.threads.thread` adds posts below the first, each replying (`reply_to_id`)
to the one before; `reply_to_id` there makes the first post itself a reply.
"""

from __future__ import annotations

from datetime import UTC, datetime
from typing import Any, ClassVar
from urllib.parse import urljoin

from toolhost.platform.dates import iso, parse_iso
from toolhost.providers.connectors.base import (
    COMMENTS_LIST,
    COMMENTS_MODERATE,
    COMMENTS_POST,
    COMMENTS_REPLY,
    METRICS,
    PUBLISH,
    AccountSession,
    Comment,
    OutgoingPost,
    PublishContext,
    PublishFailed,
    PublishResult,
)
from toolhost.providers.connectors.meta import (
    ContainerStatus,
    MetaConnector,
    RateLimitReached,
    comparable,
    kind_of,
    media_url,
    options_of,
    published_since,
    upstream_error,
)

# Threads API "Get Started", Authorization: threads_basic for every endpoint, threads_content_publish to post,
# threads_read_replies and threads_manage_replies for replies, threads_manage_insights for insights.
SCOPES = (
    "threads_basic",
    "threads_content_publish",
    "threads_read_replies",
    "threads_manage_replies",
    "threads_manage_insights",
)
# Threads API "Insights", Media insights: the metrics of a post, as toolhost names them.
METRIC_NAMES = {"views": "views", "likes": "likes", "replies": "comments", "reposts": "shares", "quotes": "quotes"}
# The account's threads (or replies) read while looking for a post an earlier attempt published.
RECONCILE_POSTS = 50


class ThreadsConnector(MetaConnector):
    """Text, image, video and carousel posts and reply chains on Threads, their insights and their replies."""

    name: ClassVar[str] = "threads"
    sign_in_with: ClassVar[str] = "Threads"
    platforms: ClassVar[tuple[str, ...]] = ("threads",)
    media_kinds: ClassVar[tuple[str, ...]] = ("image", "video")
    capabilities: ClassVar[frozenset[str]] = frozenset(
        {PUBLISH, METRICS, COMMENTS_LIST, COMMENTS_REPLY, COMMENTS_POST, COMMENTS_MODERATE}
    )
    sends_app_secret_proof: ClassVar[bool] = False

    async def extend(self, account: AccountSession) -> None:
        """Threads API "Long-Lived Tokens": GET /access_token with grant_type=th_exchange_token trades the one-hour
        token for one of 60 days."""
        reply = await self.token_grant(
            urljoin(self.api_url, "/access_token"),
            {
                "grant_type": "th_exchange_token",
                "client_secret": self.app.client_secret or "",
                "access_token": str(account.secrets["access_token"]),
            },
        )
        self.long_lived(account, reply)

    async def renew(self, account: AccountSession) -> dict[str, Any]:
        """Threads API "Long-Lived Tokens", Refresh: GET /refresh_access_token with grant_type=th_refresh_token, for
        a token at least a day old that has not expired; the new one is valid for 60 days."""
        return await self.token_grant(
            urljoin(self.api_url, "/refresh_access_token"),
            {"grant_type": "th_refresh_token", "access_token": str(account.secrets["access_token"])},
        )

    async def identify(self, account: AccountSession) -> tuple[str | None, dict[str, Any]]:
        """Threads API "Profiles" (GET /me?fields=id,username)."""
        profile = await self.graph(account, "GET", "me", {"fields": "id,username"}, action="read the profile")
        if not profile.get("id") or not profile.get("username"):
            raise PublishFailed("threads: /me did not name the account", retryable=True)
        return f"@{profile['username']}", {"user_id": str(profile["id"]), "username": str(profile["username"])}

    # --- publishing --------------------------------------------------------------------------------------

    async def publish_once(self, account: AccountSession, post: OutgoingPost, context: PublishContext) -> PublishResult:
        """Each post of the chain in turn: its container (made once, saved), processed, then published."""
        options = options_of(post)
        parts = [post.text(), *(str(part) for part in options.get("thread") or [])]
        state = dict(context.state)
        posted = [str(media_id) for media_id in state.get("posted") or []]
        if not posted and not state.get("container"):
            await self.check_quota(account, f"{account.settings['user_id']}/threads_publishing_limit")
        for index in range(len(posted), len(parts)):
            reply_to = posted[-1] if posted else options.get("reply_to_id")
            container = state.get("container")
            if container and int(container["index"]) == index:
                status = await self.wait_until_processed(account, str(container["id"]), f"post {index + 1}")
                if status.state == "PUBLISHED":
                    found = await self._find(
                        account, parts[index], index=index, reply_to=reply_to, since=parse_iso(container["since"])
                    )
                    posted.append(found)
                    state = {**state, "posted": posted, "container": None}
                    await context.save_state(state)
                    continue
                if status.state == "EXPIRED":
                    container = None
                else:
                    _refuse_failed(status, index)
            if not container or int(container["index"]) != index:
                state = await self._create(account, post, parts[index], index, reply_to, state, context)
                container = state["container"]
                _refuse_failed(
                    await self.wait_until_processed(account, str(container["id"]), f"post {index + 1}"), index
                )
            posted.append(
                await self._publish_container(
                    account, str(container["id"]), parts[index], index, reply_to, parse_iso(container["since"])
                )
            )
            state = {**state, "posted": posted, "container": None, "children": []}
            await context.save_state(state)
        try:
            first = await self.graph(account, "GET", posted[0], {"fields": "permalink"}, action="read the post")
        except PublishFailed as failed:
            if failed.authentication:
                raise
            first = {}
        return PublishResult(external_post_id=posted[0], external_url=first.get("permalink"))

    async def _publish_container(
        self,
        account: AccountSession,
        container_id: str,
        text: str,
        index: int,
        reply_to: str | None,
        since: datetime,
    ) -> str:
        """Threads API "Posts", Step 2: POST /{threads-user-id}/threads_publish with creation_id. A refusal after
        which the container is PUBLISHED (an earlier request went through) is adopted instead."""
        try:
            published = await self.graph(
                account,
                "POST",
                f"{account.settings['user_id']}/threads_publish",
                {"creation_id": container_id},
                action=f"publish post {index + 1}",
            )
        except PublishFailed as refused:
            if refused.authentication or isinstance(refused, RateLimitReached):
                raise
            if (await self.container_status(account, container_id)).state != "PUBLISHED":
                raise
            return await self._find(account, text, index=index, reply_to=reply_to, since=since)
        if not published.get("id"):
            raise PublishFailed("threads: the publish reply has no media id", retryable=True)
        return str(published["id"])

    async def _create(
        self,
        account: AccountSession,
        post: OutgoingPost,
        text: str,
        index: int,
        reply_to: str | None,
        state: dict[str, Any],
        context: PublishContext,
    ) -> dict[str, Any]:
        """Threads API "Posts", Step 1 (POST /{threads-user-id}/threads): TEXT, IMAGE or VIDEO, or a CAROUSEL of
        item containers made first ("Carousel posts"); only the chain's first post carries the media."""
        fields: dict[str, str] = {"text": text}
        if reply_to:
            fields["reply_to_id"] = str(reply_to)
        media = post.media if index == 0 else []
        if len(media) == 1:
            kind = kind_of(media[0].content_type)
            fields.update(media_type=kind, **{f"{kind.lower()}_url": media_url(self.name, post, 0)})
        elif media:
            children = await self._carousel_items(account, post, state, context)
            state = {**state, "children": children}
            fields.update(media_type="CAROUSEL", children=",".join(children))
        else:
            fields["media_type"] = "TEXT"
        created = await self.graph(
            account, "POST", f"{account.settings['user_id']}/threads", fields, action=f"create post {index + 1}"
        )
        if not created.get("id"):
            raise PublishFailed("threads: the container reply has no id", retryable=True)
        state = {**state, "container": {"index": index, "id": str(created["id"]), "since": iso(datetime.now(UTC))}}
        await context.save_state(state)
        return state

    async def _carousel_items(
        self, account: AccountSession, post: OutgoingPost, state: dict[str, Any], context: PublishContext
    ) -> list[str]:
        """ "Carousel posts", Step 1: an item container per image or video (is_carousel_item=true), saved as made."""
        children = [str(child) for child in state.get("children") or []]
        for index in range(len(children), len(post.media)):
            kind = kind_of(post.media[index].content_type)
            created = await self.graph(
                account,
                "POST",
                f"{account.settings['user_id']}/threads",
                {
                    "is_carousel_item": "true",
                    "media_type": kind,
                    f"{kind.lower()}_url": media_url(self.name, post, index),
                },
                action=f"create the container of carousel item {index + 1}",
            )
            if not created.get("id"):
                raise PublishFailed("threads: the container reply has no id", retryable=True)
            children.append(str(created["id"]))
            await context.save_state({**state, "children": children})
        for index, child in enumerate(children):
            status = await self.wait_until_processed(account, child, f"carousel item {index + 1}")
            if status.state != "FINISHED":
                raise PublishFailed(
                    f"threads could not process carousel item {index + 1}: {status.detail or status.state}",
                    retryable=status.state == "EXPIRED",
                )
        return children

    async def container_status(self, account: AccountSession, container_id: str) -> ContainerStatus:
        """Threads API "Troubleshooting", Publishing does not return a media ID (GET /{container-id}?fields=status,
        error_message): EXPIRED, ERROR, FINISHED, IN_PROGRESS or PUBLISHED."""
        reply = await self.graph(
            account, "GET", container_id, {"fields": "status,error_message"}, action="read the container's status"
        )
        return ContainerStatus(str(reply.get("status") or "IN_PROGRESS"), str(reply.get("error_message") or ""))

    async def _find(
        self, account: AccountSession, text: str, *, index: int, reply_to: str | None, since: datetime
    ) -> str:
        """The published post an earlier attempt made: Threads API "Retrieve Threads" (GET
        /{threads-user-id}/threads) for a chain's first post, "Reply Management" (GET /{threads-user-id}/replies)
        for the posts below it, matched by text, time and the post replied to."""
        edge = "replies" if index > 0 or reply_to else "threads"
        reply = await self.graph(
            account,
            "GET",
            f"{account.settings['user_id']}/{edge}",
            {
                "fields": "id,text,timestamp,replied_to",
                "since": str(int(since.timestamp()) - 120),
                "limit": str(RECONCILE_POSTS),
            },
            action="read the account's posts",
        )
        wanted = comparable(text)
        for candidate in reply.get("data") or []:
            replied = str((candidate.get("replied_to") or {}).get("id") or "")
            if (
                comparable(str(candidate.get("text") or "")) == wanted
                and published_since(candidate.get("timestamp"), since)
                and (not reply_to or replied == str(reply_to))
            ):
                return str(candidate["id"])
        raise PublishFailed("threads published the post but does not list it yet", retryable=True)

    # --- insights and replies ----------------------------------------------------------------------------

    async def fetch_metrics(self, account: AccountSession, external_post_id: str) -> dict[str, int]:
        """Threads API "Insights", Media insights (GET /{threads-media-id}/insights)."""
        reply = await self.read(account, "GET", f"{external_post_id}/insights", {"metric": ",".join(METRIC_NAMES)})
        counters: dict[str, int] = {}
        for metric in reply.get("data") or []:
            values = metric.get("values") or []
            name = METRIC_NAMES.get(str(metric.get("name")))
            if name is not None and values and isinstance(values[0].get("value"), int):
                counters[name] = int(values[0]["value"])
        if not counters:
            raise upstream_error("threads reported no insights for this post", self.name)
        return counters

    async def list_comments(self, account: AccountSession, external_post_id: str, *, limit: int) -> list[Comment]:
        """Threads API "Reply Management", Retrieve a conversation (GET /{threads-media-id}/conversation): every
        reply at any depth, each naming the post it replies to; oldest first."""
        reply = await self.read(
            account,
            "GET",
            f"{external_post_id}/conversation",
            {"fields": "id,text,username,timestamp,replied_to", "reverse": "false"},
        )
        comments = [
            Comment(
                id=str(item.get("id")),
                text=str(item.get("text") or ""),
                author=item.get("username"),
                created_at=item.get("timestamp"),
                parent_id=str((item.get("replied_to") or {}).get("id") or external_post_id),
            )
            for item in reply.get("data") or []
        ]
        comments.sort(key=lambda comment: comment.created_at or "")
        return comments[:limit]

    async def reply_to_comment(
        self, account: AccountSession, external_post_id: str, comment_id: str, text: str
    ) -> Comment:
        """ "Reply Management", Respond to replies: a TEXT container with reply_to_id, then published."""
        return await self._reply(account, comment_id, text)

    async def post_comment(self, account: AccountSession, external_post_id: str, text: str) -> Comment:
        """A reply to the post itself, as the account."""
        return await self._reply(account, external_post_id, text)

    async def moderate_comment(self, account: AccountSession, comment_id: str, action: str) -> None:
        """ "Reply Management", Hide replies (POST /{threads-reply-id}/manage_reply with hide)."""
        hide = "true" if action == "reject" else "false"
        await self.read(account, "POST", f"{comment_id}/manage_reply", {"hide": hide})

    async def _reply(self, account: AccountSession, parent_id: str, text: str) -> Comment:
        user = account.settings["user_id"]
        created = await self.read(
            account, "POST", f"{user}/threads", {"media_type": "TEXT", "text": text, "reply_to_id": parent_id}
        )
        if not created.get("id"):
            raise upstream_error("threads did not return the reply's container", self.name)
        published = await self.read(account, "POST", f"{user}/threads_publish", {"creation_id": str(created["id"])})
        if not published.get("id"):
            raise upstream_error("threads did not return the reply's id", self.name)
        return Comment(
            id=str(published["id"]),
            text=text,
            author=account.settings.get("username"),
            created_at=iso(datetime.now(UTC)),
            parent_id=parent_id,
        )


def _refuse_failed(status: ContainerStatus, index: int) -> None:
    """A container Threads could not process fails the post with Threads' reason; EXPIRED is retryable."""
    if status.state == "ERROR":
        raise PublishFailed(f"threads could not process post {index + 1}: {status.detail or 'ERROR'}", retryable=False)
    if status.state == "EXPIRED":
        raise PublishFailed(f"threads let the container of post {index + 1} expire", retryable=True)
