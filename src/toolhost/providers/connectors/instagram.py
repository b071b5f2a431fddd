"""The `instagram` connector: Instagram API with Facebook Login, content publishing through media containers.

Each behaviour follows a section of Meta's Instagram Platform documentation, named where it is implemented.

Exactly once without an idempotency key: "Content Publishing" makes a post in two steps, a container (`POST
/{ig-user-id}/media`) and its publication (`POST /{ig-user-id}/media_publish`). The container's id is saved in
the post's connector state the moment it exists, before anything is published, and the published media's id
right after. A retry that finds a container without a media id asks for the container's status ("IG
Container", `status_code`): PUBLISHED means an earlier attempt published it and its answer was lost, so the
media is looked up among the account's own recent media (by caption, from the container's time on) and
adopted; FINISHED means it was never published, and the same container is published; IN_PROGRESS is waited
for; EXPIRED (24 hours unpublished) is made anew. A carousel's item containers are saved one by one as well.
"""

from __future__ import annotations

import json
from datetime import UTC, datetime
from typing import Any, ClassVar

from toolhost.platform.dates import iso, parse_iso
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
    OutgoingPost,
    PublishContext,
    PublishFailed,
    PublishResult,
)
from toolhost.providers.connectors.meta import (
    ContainerStatus,
    FacebookLoginConnector,
    RateLimitReached,
    comparable,
    kind_of,
    media_url,
    options_of,
    published_since,
    upstream_error,
)

# Instagram Platform "Instagram API with Facebook Login", Permissions: publishing needs instagram_basic,
# instagram_content_publish and pages_read_engagement; listing the Pages pages_show_list; comments
# instagram_manage_comments; insights instagram_manage_insights.
SCOPES = (
    "instagram_basic",
    "instagram_content_publish",
    "instagram_manage_comments",
    "instagram_manage_insights",
    "pages_show_list",
    "pages_read_engagement",
)
# Reference "IG Media Insights": the lifetime metrics of a post, reel or carousel, as toolhost names them.
METRIC_NAMES = {
    "views": "views",
    "reach": "reach",
    "likes": "likes",
    "comments": "comments",
    "shares": "shares",
    "saved": "saves",
}
# Media of the account read while looking for a post an earlier attempt published ("IG User Media", GET).
RECONCILE_MEDIA = 50


class InstagramConnector(FacebookLoginConnector):
    """Images, reels and carousels on an Instagram professional account, their insights and their comments."""

    name: ClassVar[str] = "instagram"
    platforms: ClassVar[tuple[str, ...]] = ("instagram",)
    media_kinds: ClassVar[tuple[str, ...]] = ("image", "video")
    capabilities: ClassVar[frozenset[str]] = frozenset(
        {PUBLISH, METRICS, COMMENTS_LIST, COMMENTS_REPLY, COMMENTS_POST, COMMENTS_MODERATE, COMMENTS_DELETE}
    )

    async def identify(self, account: AccountSession) -> tuple[str | None, dict[str, Any]]:
        """ "Instagram API with Facebook Login", Get started: the Instagram professional account linked to the Page
        the person granted (`instagram_business_account` of GET /me/accounts)."""
        pages = await self.pages(account, "id,name,instagram_business_account{id,username}")
        linked = [page for page in pages if (page.get("instagram_business_account") or {}).get("id")]
        page = self.only_one(
            "Page with an Instagram professional account",
            linked,
            lambda page: str(page["instagram_business_account"].get("username") or page.get("name")),
        )
        instagram = page["instagram_business_account"]
        username = str(instagram.get("username") or instagram["id"])
        return f"@{username}", {"ig_user_id": str(instagram["id"]), "username": username, "page_id": str(page["id"])}

    async def renew(self, account: AccountSession) -> dict[str, Any]:
        """Facebook Login "Long-Lived Access Tokens": a valid long-lived user token is exchanged like a short one."""
        return await self.exchange(str(account.secrets["access_token"]))

    # --- publishing --------------------------------------------------------------------------------------

    async def publish_once(self, account: AccountSession, post: OutgoingPost, context: PublishContext) -> PublishResult:
        """A container (with its carousel items), processed, then published; resumed from the saved state."""
        state = dict(context.state)
        if state.get("media_id"):
            await self._first_comment(account, post, state, context)
            return await self._result(account, str(state["media_id"]))
        container = state.get("container")
        if container:
            status = await self.wait_until_processed(account, str(container["id"]), "the post")
            since = parse_iso(str(container["since"]))
            if status.state == "PUBLISHED":
                return await self._adopt(account, post, since, state, context)
            if status.state == "EXPIRED":
                container, state = None, {**state, "container": None, "children": []}
            else:
                _refuse_failed(status)
        if not container:
            await self.check_quota(account, f"{account.settings['ig_user_id']}/content_publishing_limit")
            state = await self._create(account, post, state, context)
            container = state["container"]
            _refuse_failed(await self.wait_until_processed(account, str(container["id"]), "the post"))
        since = parse_iso(str(container["since"]))
        try:
            # "Content Publishing", Step 2: POST /{ig-user-id}/media_publish with creation_id.
            published = await self.graph(
                account,
                "POST",
                f"{account.settings['ig_user_id']}/media_publish",
                {"creation_id": str(container["id"])},
                action="publish the post",
            )
        except PublishFailed as refused:
            if refused.authentication or isinstance(refused, RateLimitReached):
                raise
            # Whatever the refusal, a container that is PUBLISHED now was published (by this request or an
            # earlier one whose answer was lost): it is adopted, never published again.
            if (await self.container_status(account, str(container["id"]))).state == "PUBLISHED":
                return await self._adopt(account, post, since, state, context)
            raise
        if not published.get("id"):
            raise PublishFailed("instagram: the publish reply has no media id", retryable=True)
        state = {**state, "media_id": str(published["id"])}
        await context.save_state(state)
        await self._first_comment(account, post, state, context)
        return await self._result(account, str(published["id"]))

    async def _create(
        self, account: AccountSession, post: OutgoingPost, state: dict[str, Any], context: PublishContext
    ) -> dict[str, Any]:
        """Reference "IG User Media", POST: the post's container, after its carousel items' containers."""
        options = options_of(post)
        fields: dict[str, str] = {"caption": post.text()}
        if options.get("location"):
            fields["location_id"] = str(options["location"])
        if options.get("collaborators"):
            fields["collaborators"] = _json_list(options["collaborators"])
        if len(post.media) == 1 and kind_of(post.media[0].content_type) == "IMAGE":
            fields["image_url"] = media_url(self.name, post, 0)
        elif len(post.media) == 1:
            # "Reels" (media_type=REELS): single videos are published as reels; VIDEO is for carousel items.
            fields.update(media_type="REELS", video_url=media_url(self.name, post, 0))
            if options.get("share_to_feed") is not None:
                fields["share_to_feed"] = "true" if options["share_to_feed"] else "false"
            if options.get("cover_timestamp") is not None:
                fields["thumb_offset"] = str(int(float(options["cover_timestamp"]) * 1000))
        else:
            children = await self._carousel_items(account, post, state, context)
            state = {**state, "children": children}
            fields.update(media_type="CAROUSEL", children=",".join(children))
        created = await self.graph(
            account, "POST", f"{account.settings['ig_user_id']}/media", fields, action="create the post's container"
        )
        if not created.get("id"):
            raise PublishFailed("instagram: the container reply has no id", retryable=True)
        state = {**state, "container": {"id": str(created["id"]), "since": iso(datetime.now(UTC))}}
        await context.save_state(state)
        return state

    async def _carousel_items(
        self, account: AccountSession, post: OutgoingPost, state: dict[str, Any], context: PublishContext
    ) -> list[str]:
        """ "Carousel posts", Step 1: one container per item (is_carousel_item=true), each saved as it is made and
        processed before the carousel container names it."""
        children = [str(child) for child in state.get("children") or []]
        for index in range(len(children), len(post.media)):
            fields = {"is_carousel_item": "true"}
            if kind_of(post.media[index].content_type) == "VIDEO":
                fields.update(media_type="VIDEO", video_url=media_url(self.name, post, index))
            else:
                fields["image_url"] = media_url(self.name, post, index)
            created = await self.graph(
                account,
                "POST",
                f"{account.settings['ig_user_id']}/media",
                fields,
                action=f"create the container of carousel item {index + 1}",
            )
            if not created.get("id"):
                raise PublishFailed("instagram: the container reply has no id", retryable=True)
            children.append(str(created["id"]))
            await context.save_state({**state, "children": children})
        for index, child in enumerate(children):
            status = await self.wait_until_processed(account, child, f"carousel item {index + 1}")
            _refuse_failed(status, f"carousel item {index + 1}")
        return children

    async def container_status(self, account: AccountSession, container_id: str) -> ContainerStatus:
        """Reference "IG Container" (GET /{ig-container-id}?fields=status_code,status): EXPIRED, ERROR, FINISHED,
        IN_PROGRESS or PUBLISHED; `status` carries the error's reason."""
        reply = await self.graph(
            account, "GET", container_id, {"fields": "status_code,status"}, action="read the container's status"
        )
        return ContainerStatus(str(reply.get("status_code") or "IN_PROGRESS"), str(reply.get("status") or ""))

    async def _adopt(
        self,
        account: AccountSession,
        post: OutgoingPost,
        since: datetime,
        state: dict[str, Any],
        context: PublishContext,
    ) -> PublishResult:
        """The media an earlier attempt published: reference "IG User Media", GET (id, caption, timestamp), newest
        first, the one with this caption published since the container was made."""
        reply = await self.graph(
            account,
            "GET",
            f"{account.settings['ig_user_id']}/media",
            {"fields": "id,caption,timestamp", "limit": str(RECONCILE_MEDIA)},
            action="read the account's media",
        )
        wanted = comparable(post.text())
        for media in reply.get("data") or []:
            if comparable(str(media.get("caption") or "")) == wanted and published_since(media.get("timestamp"), since):
                state = {**state, "media_id": str(media["id"])}
                await context.save_state(state)
                await self._first_comment(account, post, state, context)
                return await self._result(account, str(media["id"]))
        # Published, but not listed yet: asked again later; publishing the container again is never tried.
        raise PublishFailed("instagram published the post but does not list it yet", retryable=True)

    async def _first_comment(
        self, account: AccountSession, post: OutgoingPost, state: dict[str, Any], context: PublishContext
    ) -> None:
        """platform_metadata.instagram.first_comment: the account's own comment on the new post ("IG Media
        Comments", POST), made once: a retry first looks for it among the post's comments. The post is published
        whatever happens to its comment, so a failure here leaves the post as it is."""
        text = str(options_of(post).get("first_comment") or "").strip()
        if not text or state.get("first_comment_id"):
            return
        media_id = str(state["media_id"])
        try:
            listed = await self.graph(
                account, "GET", f"{media_id}/comments", {"fields": "id,text,username"}, action="read the comments"
            )
            mine = next(
                (
                    str(comment["id"])
                    for comment in listed.get("data") or []
                    if comment.get("username") == account.settings.get("username")
                    and comparable(str(comment.get("text") or "")) == comparable(text)
                ),
                None,
            )
            if mine is None:
                created = await self.graph(
                    account, "POST", f"{media_id}/comments", {"message": text}, action="post the first comment"
                )
                mine = str(created.get("id") or "")
        except PublishFailed:
            return
        await context.save_state({**state, "first_comment_id": mine})

    async def _result(self, account: AccountSession, media_id: str) -> PublishResult:
        """Reference "IG Media": the post's permalink, when Instagram shows it."""
        try:
            media = await self.graph(account, "GET", media_id, {"fields": "permalink"}, action="read the post")
        except PublishFailed as failed:
            if failed.authentication:
                raise
            media = {}
        return PublishResult(external_post_id=media_id, external_url=media.get("permalink"))

    # --- insights and comments ---------------------------------------------------------------------------

    async def fetch_metrics(self, account: AccountSession, external_post_id: str) -> dict[str, int]:
        """Reference "IG Media Insights" (GET /{ig-media-id}/insights): each metric's lifetime value."""
        reply = await self.read(account, "GET", f"{external_post_id}/insights", {"metric": ",".join(METRIC_NAMES)})
        counters: dict[str, int] = {}
        for metric in reply.get("data") or []:
            values = metric.get("values") or []
            name = METRIC_NAMES.get(str(metric.get("name")))
            if name is not None and values and isinstance(values[0].get("value"), int):
                counters[name] = int(values[0]["value"])
        if not counters:
            raise upstream_error("instagram reported no insights for this post", self.name)
        return counters

    async def list_comments(self, account: AccountSession, external_post_id: str, *, limit: int) -> list[Comment]:
        """Reference "IG Media Comments" (GET /{ig-media-id}/comments) with each comment's replies, oldest first."""
        fields = "id,text,username,timestamp,replies{id,text,username,timestamp}"
        reply = await self.read(
            account, "GET", f"{external_post_id}/comments", {"fields": fields, "limit": str(min(limit, 50))}
        )
        comments = []
        for item in reply.get("data") or []:
            comments.append(_comment(item, external_post_id))
            answers = (item.get("replies") or {}).get("data") or []
            comments += [_comment(answer, str(item.get("id"))) for answer in answers]
        comments.sort(key=lambda comment: comment.created_at or "")
        return comments[:limit]

    async def reply_to_comment(
        self, account: AccountSession, external_post_id: str, comment_id: str, text: str
    ) -> Comment:
        """Reference "IG Comment Replies" (POST /{ig-comment-id}/replies with message)."""
        created = await self.read(account, "POST", f"{comment_id}/replies", {"message": text})
        return self._own(account, created, text, comment_id)

    async def post_comment(self, account: AccountSession, external_post_id: str, text: str) -> Comment:
        """Reference "IG Media Comments" (POST /{ig-media-id}/comments with message)."""
        created = await self.read(account, "POST", f"{external_post_id}/comments", {"message": text})
        return self._own(account, created, text, external_post_id)

    async def moderate_comment(self, account: AccountSession, comment_id: str, action: str) -> None:
        """Reference "IG Comment" (POST /{ig-comment-id} with hide): rejected comments are hidden, published shown."""
        await self.read(account, "POST", comment_id, {"hide": "true" if action == "reject" else "false"})

    async def delete_comment(self, account: AccountSession, comment_id: str) -> None:
        """Reference "IG Comment" (DELETE /{ig-comment-id})."""
        await self.read(account, "DELETE", comment_id)

    def _own(self, account: AccountSession, created: dict[str, Any], text: str, parent_id: str) -> Comment:
        if not created.get("id"):
            raise upstream_error("instagram did not return the comment's id", self.name)
        return Comment(
            id=str(created["id"]),
            text=text,
            author=account.settings.get("username"),
            created_at=iso(datetime.now(UTC)),
            parent_id=parent_id,
        )


def _refuse_failed(status: ContainerStatus, what: str = "the post") -> None:
    """A container Instagram could not process fails the post with Instagram's reason; EXPIRED is retryable."""
    if status.state == "ERROR":
        raise PublishFailed(f"instagram could not process {what}: {status.detail or 'ERROR'}", retryable=False)
    if status.state == "EXPIRED":
        raise PublishFailed(f"instagram let the container of {what} expire", retryable=True)


def _comment(item: dict[str, Any], parent_id: str) -> Comment:
    return Comment(
        id=str(item.get("id")),
        text=str(item.get("text") or ""),
        author=item.get("username"),
        created_at=item.get("timestamp"),
        parent_id=parent_id,
    )


def _json_list(values: Any) -> str:
    """A Graph API array parameter: a JSON list of strings."""
    return json.dumps([str(value) for value in values] if isinstance(values, list) else [str(values)])
