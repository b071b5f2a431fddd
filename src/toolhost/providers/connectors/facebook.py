"""The `facebook` connector: posts, photos and videos on a Facebook Page through the Pages API, with the Page
access token that Facebook Login's long-lived user token yields.

Each behaviour follows a section of Meta's public documentation (Pages API, Graph API reference, Video API),
named where it is implemented.

Exactly once without an idempotency key: a Page post is made by one request (`/{page-id}/feed`, `/photos` or
`/videos`) that Facebook may accept while its answer is lost. Before that request the connector saves an attempt
marker (what it posts, and when) in the post's connector state, and the post's id right after. A retry that finds
a marker without an id first looks for the post among the Page's own recent posts (or videos), matched by its
exact text from the marker's time on, and adopts it; only when there is none does it post again. Facebook's
"duplicate status" refusal (code 506) is answered the same way. Photos of a multi-photo post are uploaded
unpublished first (invisible until the post names them) and their ids saved, so a retry reuses them.
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
    FacebookLoginConnector,
    GraphRefusal,
    comparable,
    kind_of,
    media_url,
    published_since,
    upstream_error,
)

# Pages API "Get Started" and "Posts": listing the Pages (pages_show_list), posting (pages_manage_posts,
# pages_read_engagement), comments (pages_manage_engagement, pages_read_user_content) and insights (read_insights).
SCOPES = (
    "pages_show_list",
    "pages_read_engagement",
    "pages_manage_posts",
    "pages_manage_engagement",
    "pages_read_user_content",
    "read_insights",
)
# Graph API "Error Codes": 506, a duplicate of a post the Page made recently.
DUPLICATE_CODE = 506
# Posts (or videos) of the Page read while looking for one an earlier attempt made.
RECONCILE_POSTS = 50


class FacebookConnector(FacebookLoginConnector):
    """Text, photo and video posts on a Facebook Page, their counters and their comments."""

    name: ClassVar[str] = "facebook"
    platforms: ClassVar[tuple[str, ...]] = ("facebook",)
    media_kinds: ClassVar[tuple[str, ...]] = ("image", "gif", "video")
    capabilities: ClassVar[frozenset[str]] = frozenset(
        {PUBLISH, METRICS, COMMENTS_LIST, COMMENTS_REPLY, COMMENTS_POST, COMMENTS_MODERATE, COMMENTS_DELETE}
    )

    async def identify(self, account: AccountSession) -> tuple[str | None, dict[str, Any]]:
        """Facebook Login "Long-Lived Access Tokens", Get a long-lived Page access token: the Page tokens GET
        /me/accounts returns for a long-lived user token have no expiry. The account keeps the Page token only."""
        pages = await self.pages(account, "id,name,access_token,tasks")
        able = [page for page in pages if page.get("access_token") and "CREATE_CONTENT" in (page.get("tasks") or [])]
        page = self.only_one("Page you can post to", able, lambda page: str(page.get("name") or page["id"]))
        account.secrets = {"access_token": str(page["access_token"])}
        name = str(page.get("name") or page["id"])
        return name, {"page_id": str(page["id"]), "name": name}

    # --- publishing --------------------------------------------------------------------------------------

    async def publish_once(self, account: AccountSession, post: OutgoingPost, context: PublishContext) -> PublishResult:
        """One Page post: text (`/feed`), one photo (`/photos`), several photos (unpublished photos, then `/feed`
        with attached_media) or a video (`/videos`); an earlier attempt's post is found before posting again."""
        state = dict(context.state)
        if state.get("post_id"):
            return await self._result(account, str(state["post_id"]))
        text = post.text()
        edge = "videos" if post.media and kind_of(post.media[0].content_type) == "VIDEO" else "posts"
        attempt = state.get("attempt")
        if attempt:
            found = await self._find(account, text, edge, since=parse_iso(str(attempt["since"])))
            if found is not None:
                return await self._adopted(account, found, state, context)
        photos: list[str] = []
        if len(post.media) > 1:
            photos, state = await self._unpublished_photos(account, post, state, context)
        since = datetime.now(UTC)
        state = {**state, "attempt": {"since": iso(since)}}
        await context.save_state(state)
        page = str(account.settings["page_id"])
        if edge == "videos":
            # Video API "Publishing", non-resumable upload: POST /{page-id}/videos with file_url and description.
            path, fields = f"{page}/videos", {"file_url": media_url(self.name, post, 0), "description": text}
        elif len(post.media) == 1:
            # Graph API reference "Page Photos", Creating: url and message publish a photo post.
            path, fields = f"{page}/photos", {"url": media_url(self.name, post, 0), "message": text}
        else:
            # Pages API "Posts", Publish a post (POST /{page-id}/feed): message, and attached_media for photos.
            path, fields = f"{page}/feed", {"message": text}
            for index, photo in enumerate(photos):
                fields[f"attached_media[{index}]"] = json.dumps({"media_fbid": photo})
        try:
            created = await self.graph(account, "POST", path, fields, action="publish the post")
        except PublishFailed as refused:
            if not (isinstance(refused, GraphRefusal) and refused.error.code == DUPLICATE_CODE):
                raise
            found = await self._find(account, text, edge, since=since)
            if found is not None:
                return await self._adopted(account, found, state, context)
            raise PublishFailed(
                "facebook refused the post as a duplicate: the Page published the same text recently",
                retryable=False,
            ) from refused
        post_id = str(created.get("post_id") or created.get("id") or "")
        if not post_id:
            raise PublishFailed("facebook: the publish reply has no id", retryable=True)
        return await self._adopted(account, post_id, state, context)

    async def _unpublished_photos(
        self, account: AccountSession, post: OutgoingPost, state: dict[str, Any], context: PublishContext
    ) -> tuple[list[str], dict[str, Any]]:
        """Pages API "Posts", Publish a multi-photo post: each photo uploaded with published=false (seen by no
        one until a post attaches it), its id saved as it arrives."""
        photos = [str(photo) for photo in state.get("photos") or []]
        for index in range(len(photos), len(post.media)):
            uploaded = await self.graph(
                account,
                "POST",
                f"{account.settings['page_id']}/photos",
                {"url": media_url(self.name, post, index), "published": "false"},
                action=f"upload photo {index + 1}",
            )
            if not uploaded.get("id"):
                raise PublishFailed("facebook: the photo upload reply has no id", retryable=True)
            photos.append(str(uploaded["id"]))
            state = {**state, "photos": photos}
            await context.save_state(state)
        return photos, state

    async def _find(self, account: AccountSession, text: str, edge: str, *, since: datetime) -> str | None:
        """The Page's own post (Graph API reference "Page Posts", GET /{page-id}/posts: id, message,
        created_time) or video ("Page Videos": id, description, created_time) with this text, made since the
        attempt began; newest first."""
        field = "description" if edge == "videos" else "message"
        reply = await self.graph(
            account,
            "GET",
            f"{account.settings['page_id']}/{edge}",
            {
                "fields": f"id,{field},created_time",
                "since": str(int(since.timestamp()) - 120),
                "limit": str(RECONCILE_POSTS),
            },
            action="read the Page's posts",
        )
        wanted = comparable(text)
        for candidate in reply.get("data") or []:
            if comparable(str(candidate.get(field) or "")) == wanted and published_since(
                candidate.get("created_time"), since
            ):
                return str(candidate["id"])
        return None

    async def _adopted(
        self, account: AccountSession, post_id: str, state: dict[str, Any], context: PublishContext
    ) -> PublishResult:
        await context.save_state({**state, "post_id": post_id, "attempt": None})
        return await self._result(account, post_id)

    async def _result(self, account: AccountSession, post_id: str) -> PublishResult:
        """Graph API reference "Post" (permalink_url); a video's page when the post is a video."""
        try:
            found = await self.graph(account, "GET", post_id, {"fields": "permalink_url"}, action="read the post")
        except PublishFailed as failed:
            if failed.authentication:
                raise
            found = {}
        url = found.get("permalink_url")
        if isinstance(url, str) and url.startswith("/"):
            url = f"https://www.facebook.com{url}"
        return PublishResult(external_post_id=post_id, external_url=url)

    # --- counters and comments ---------------------------------------------------------------------------

    async def fetch_metrics(self, account: AccountSession, external_post_id: str) -> dict[str, int]:
        """Graph API reference "Post": the summaries of its reactions and comments and its shares; Pages API
        "Page Post Insights" (post_impressions) for its views, when Facebook reports them."""
        fields = "shares,reactions.summary(total_count).limit(0),comments.summary(total_count).limit(0)"
        found = await self.read(account, "GET", external_post_id, {"fields": fields})
        counters: dict[str, int] = {}
        for name, key in (("likes", "reactions"), ("comments", "comments")):
            total = ((found.get(key) or {}).get("summary") or {}).get("total_count")
            if isinstance(total, int):
                counters[name] = total
        if isinstance((found.get("shares") or {}).get("count"), int):
            counters["shares"] = int(found["shares"]["count"])
        try:
            insights = await self.graph(
                account, "GET", f"{external_post_id}/insights", {"metric": "post_impressions"}, action="read"
            )
        except PublishFailed as failed:
            if failed.authentication:
                raise upstream_error(failed.message, self.name) from failed
            insights = {}
        for metric in insights.get("data") or []:
            values = metric.get("values") or []
            if metric.get("name") == "post_impressions" and values and isinstance(values[0].get("value"), int):
                counters["views"] = int(values[0]["value"])
        if not counters:
            raise upstream_error("facebook reported no counters for this post", self.name)
        return counters

    async def list_comments(self, account: AccountSession, external_post_id: str, *, limit: int) -> list[Comment]:
        """Graph API reference "Object Comments" (GET /{object-id}/comments, filter=stream: replies included, in
        chronological order)."""
        reply = await self.read(
            account,
            "GET",
            f"{external_post_id}/comments",
            {
                "fields": "id,message,from{name},created_time,parent{id}",
                "filter": "stream",
                "order": "chronological",
                "limit": str(min(limit, 100)),
            },
        )
        comments = [
            Comment(
                id=str(item.get("id")),
                text=str(item.get("message") or ""),
                author=(item.get("from") or {}).get("name"),
                created_at=item.get("created_time"),
                parent_id=str((item.get("parent") or {}).get("id") or external_post_id),
            )
            for item in reply.get("data") or []
        ]
        return comments[:limit]

    async def reply_to_comment(
        self, account: AccountSession, external_post_id: str, comment_id: str, text: str
    ) -> Comment:
        """ "Object Comments", Publishing: a comment on the comment, as the Page."""
        return await self._comment(account, comment_id, text)

    async def post_comment(self, account: AccountSession, external_post_id: str, text: str) -> Comment:
        """ "Object Comments", Publishing: a comment on the post, as the Page."""
        return await self._comment(account, external_post_id, text)

    async def moderate_comment(self, account: AccountSession, comment_id: str, action: str) -> None:
        """Graph API reference "Comment", Updating (is_hidden): rejected comments are hidden, published shown."""
        await self.read(account, "POST", comment_id, {"is_hidden": "true" if action == "reject" else "false"})

    async def delete_comment(self, account: AccountSession, comment_id: str) -> None:
        """Graph API reference "Comment", Deleting."""
        await self.read(account, "DELETE", comment_id)

    async def _comment(self, account: AccountSession, parent_id: str, text: str) -> Comment:
        created = await self.read(account, "POST", f"{parent_id}/comments", {"message": text})
        if not created.get("id"):
            raise upstream_error("facebook did not return the comment's id", self.name)
        return Comment(
            id=str(created["id"]),
            text=text,
            author=account.settings.get("name"),
            created_at=iso(datetime.now(UTC)),
            parent_id=parent_id,
        )
