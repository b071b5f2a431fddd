"""The `bluesky` connector: AT Protocol XRPC against the account's PDS (posts with images).

Idempotency: the post's record key is a TID derived from the post (its creation time and a clock id
hashed from its idempotency key) and saved before `createRecord`; a retry first asks the PDS for
that record, so a post that was created before a crash is found, never created twice.
"""

from __future__ import annotations

import hashlib
import json
import re
from datetime import UTC, datetime
from typing import Any, ClassVar
from urllib.parse import urlencode

from toolhost.platform.dates import iso
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

POST_COLLECTION = "app.bsky.feed.post"
TID_ALPHABET = "234567abcdefghijklmnopqrstuvwxyz"
MAX_IMAGES = 4
HASHTAG = re.compile(r"(?:^|\s)(#[^\d\s#][^\s#]*)")
URL_PATTERN = re.compile(r"https?://[^\s]+")


def record_key(post: OutgoingPost) -> str:
    """A TID (13 base32-sortable characters) fixed for the post: creation microseconds + hashed clock id."""
    micros = int(post.created_at.timestamp() * 1_000_000)
    clock = int.from_bytes(hashlib.sha256(post.idempotency_key.encode()).digest()[:2], "big") & 0x3FF
    value = ((micros & ((1 << 53) - 1)) << 10) | clock
    return "".join(TID_ALPHABET[(value >> (5 * shift)) & 0x1F] for shift in range(12, -1, -1))


def facets(text: str) -> list[dict[str, Any]]:
    """Rich-text facets for the hashtags and links of a text (byte offsets, UTF-8)."""
    found: list[dict[str, Any]] = []
    for match in HASHTAG.finditer(text):
        tag = match.group(1).rstrip(".,;:!?")
        start = len(text[: match.start(1)].encode())
        found.append(
            {
                "index": {"byteStart": start, "byteEnd": start + len(tag.encode())},
                "features": [{"$type": "app.bsky.richtext.facet#tag", "tag": tag[1:]}],
            }
        )
    for match in URL_PATTERN.finditer(text):
        url = match.group(0).rstrip(".,;:!?)")
        start = len(text[: match.start()].encode())
        found.append(
            {
                "index": {"byteStart": start, "byteEnd": start + len(url.encode())},
                "features": [{"$type": "app.bsky.richtext.facet#link", "uri": url}],
            }
        )
    return found


class BlueskyConnector(Connector):
    """Posts, images, counters and replies on Bluesky (or any AT Protocol PDS)."""

    name: ClassVar[str] = "bluesky"
    platforms: ClassVar[tuple[str, ...]] = ("bluesky",)
    media_kinds: ClassVar[tuple[str, ...]] = ("image",)
    capabilities: ClassVar[frozenset[str]] = frozenset(
        {PUBLISH, METRICS, COMMENTS_LIST, COMMENTS_REPLY, COMMENTS_POST, COMMENTS_DELETE}
    )
    connect_fields: ClassVar[dict[str, str]] = {"handle": "Handle", "app_password": "App password"}
    secret_fields: ClassVar[frozenset[str]] = frozenset({"app_password"})

    def __init__(self, fetcher: Any, *, service: str, web: str) -> None:
        super().__init__(fetcher)
        self.service = service.rstrip("/")
        self.web = web.rstrip("/")

    async def connect(self, *, platform: str, fields: dict[str, str]) -> ConnectResult:
        """Creates a session with handle + app password; the password is kept to start new sessions."""
        handle = (fields.get("handle") or "").strip().lstrip("@")
        password = (fields.get("app_password") or "").strip()
        if not handle or not password:
            raise ValidationFailed(
                "a Bluesky connection needs a handle and an app password",
                field_errors=[
                    {"path": name, "message": "required"}
                    for name, value in (("handle", handle), ("app_password", password))
                    if not value
                ],
            )
        service = (fields.get("service") or self.service).rstrip("/")
        try:
            session = await self._create_session(service, handle, password)
        except PublishFailed as error:
            raise upstream(error, "bluesky") from error
        return ConnectResult(
            username=str(session.get("handle", handle)),
            settings={"service": service, "did": session["did"], "handle": session.get("handle", handle)},
            secrets={
                "app_password": password,
                "access_jwt": session["accessJwt"],
                "refresh_jwt": session["refreshJwt"],
            },
        )

    async def _create_session(self, service: str, handle: str, password: str) -> dict[str, Any]:
        response = await self.send(
            "POST",
            f"{service}/xrpc/com.atproto.server.createSession",
            content=json.dumps({"identifier": handle, "password": password}).encode(),
            headers={"Content-Type": "application/json"},
        )
        raise_for_status("bluesky", response, "create a session")
        session = json_body("bluesky", response)
        if not session.get("did") or not session.get("accessJwt"):
            raise PublishFailed("bluesky: the session reply lacks did or accessJwt", retryable=False)
        return session

    async def _renew(self, account: AccountSession) -> None:
        """Refreshes the session, or starts a new one with the app password when the refresh is refused."""
        service = account.settings["service"]
        response = await self.send(
            "POST",
            f"{service}/xrpc/com.atproto.server.refreshSession",
            headers=bearer(account.secrets["refresh_jwt"]),
        )
        if response.ok:
            session = json_body("bluesky", response)
        else:
            session = await self._create_session(service, account.settings["did"], account.secrets["app_password"])
        account.update_secrets({"access_jwt": session["accessJwt"], "refresh_jwt": session["refreshJwt"]})

    async def _xrpc(
        self,
        account: AccountSession,
        method: str,
        nsid: str,
        *,
        body: bytes = b"",
        content_type: str = "application/json",
        query: dict[str, str] | None = None,
        action: str,
        allow: tuple[int, ...] = (),
    ) -> tuple[int, dict[str, Any]]:
        """One authenticated XRPC call; an expired access token is renewed once and the call repeated."""
        url = f"{account.settings['service']}/xrpc/{nsid}" + (f"?{urlencode(query)}" if query else "")
        for renewed in (False, True):
            headers = {**bearer(account.secrets["access_jwt"])}
            if method == "POST":
                headers["Content-Type"] = content_type
            response = await self.send(method, url, content=body, headers=headers, timeout=120)
            expired = response.status == 401 or (response.status == 400 and b"ExpiredToken" in response.content[:2000])
            if expired and not renewed:
                await self._renew(account)
                continue
            if response.status in allow:
                return response.status, {}
            raise_for_status("bluesky", response, action)
            return response.status, json_body("bluesky", response)
        raise PublishFailed("bluesky: the session could not be renewed", retryable=False, authentication=True)

    async def publish(self, account: AccountSession, post: OutgoingPost, context: PublishContext) -> PublishResult:
        """Uploads images as blobs, then writes the post record under its fixed record key."""
        did = account.settings["did"]
        rkey = record_key(post)
        if context.state.get("rkey") == rkey:
            status, _ = await self._xrpc(
                account,
                "GET",
                "com.atproto.repo.getRecord",
                query={"repo": did, "collection": POST_COLLECTION, "rkey": rkey},
                action="look for the post",
                allow=(400, 404),
            )
            if status == 200:
                return self._result(account, rkey)
        if any(not item.content_type.startswith("image/") for item in post.media):
            raise PublishFailed("bluesky: the connector publishes images only", retryable=False)
        if len(post.media) > MAX_IMAGES:
            raise PublishFailed(f"bluesky: at most {MAX_IMAGES} images per post", retryable=False)
        text = post.text()
        record: dict[str, Any] = {
            "$type": POST_COLLECTION,
            "text": text,
            "createdAt": iso(post.created_at),
        }
        found = facets(text)
        if found:
            record["facets"] = found
        if post.media:
            images = []
            for item in post.media:
                if item.data is None:
                    raise PublishFailed("bluesky: media must be stored in toolhost to upload", retryable=False)
                _, uploaded = await self._xrpc(
                    account,
                    "POST",
                    "com.atproto.repo.uploadBlob",
                    body=item.data,
                    content_type=item.content_type,
                    action="upload an image",
                )
                images.append({"alt": "", "image": uploaded["blob"]})
            record["embed"] = {"$type": "app.bsky.embed.images", "images": images}
        labels = (post.platform_metadata.get("bluesky") or {}).get("content_labels") or []
        if labels:
            record["labels"] = {
                "$type": "com.atproto.label.defs#selfLabels",
                "values": [{"val": str(label)} for label in labels],
            }
        await context.save_state({**context.state, "rkey": rkey})
        await self._xrpc(
            account,
            "POST",
            "com.atproto.repo.createRecord",
            body=json.dumps({"repo": did, "collection": POST_COLLECTION, "rkey": rkey, "record": record}).encode(),
            action="create the post",
        )
        return self._result(account, rkey)

    def _result(self, account: AccountSession, rkey: str) -> PublishResult:
        did = account.settings["did"]
        handle = account.settings.get("handle") or did
        return PublishResult(
            external_post_id=f"at://{did}/{POST_COLLECTION}/{rkey}",
            external_url=f"{self.web}/profile/{handle}/post/{rkey}",
        )

    async def _call(self, account: AccountSession, method: str, nsid: str, **kwargs: Any) -> dict[str, Any]:
        try:
            return (await self._xrpc(account, method, nsid, **kwargs))[1]
        except PublishFailed as error:
            raise upstream(error, "bluesky") from error

    async def fetch_metrics(self, account: AccountSession, external_post_id: str) -> dict[str, int]:
        """Likes, reposts, replies and quotes of a post."""
        reply = await self._call(
            account, "GET", "app.bsky.feed.getPosts", query={"uris": external_post_id}, action="read the post"
        )
        posts = reply.get("posts") or []
        if not posts:
            raise UpstreamFailed("bluesky does not know this post", provider="bluesky")
        post = posts[0]
        return {
            "likes": int(post.get("likeCount", 0)),
            "shares": int(post.get("repostCount", 0)),
            "comments": int(post.get("replyCount", 0)),
            "quotes": int(post.get("quoteCount", 0)),
        }

    async def _thread(self, account: AccountSession, uri: str) -> dict[str, Any]:
        reply = await self._call(
            account,
            "GET",
            "app.bsky.feed.getPostThread",
            query={"uri": uri, "depth": "1"},
            action="read the thread",
        )
        return dict(reply.get("thread") or {})

    async def list_comments(self, account: AccountSession, external_post_id: str, *, limit: int) -> list[Comment]:
        """Direct replies to a post."""
        thread = await self._thread(account, external_post_id)
        comments = []
        for reply in (thread.get("replies") or [])[:limit]:
            post = reply.get("post") or {}
            comments.append(
                Comment(
                    id=str(post.get("uri")),
                    text=str((post.get("record") or {}).get("text", "")),
                    author=(post.get("author") or {}).get("handle"),
                    created_at=post.get("indexedAt"),
                    parent_id=external_post_id,
                )
            )
        return comments

    async def reply_to_comment(
        self, account: AccountSession, external_post_id: str, comment_id: str, text: str
    ) -> Comment:
        """Replies to a reply (root = the post, parent = the comment)."""
        root = (await self._thread(account, external_post_id)).get("post") or {}
        parent = (await self._thread(account, comment_id)).get("post") or {}
        return await self._reply(account, text, root=root, parent=parent)

    async def post_comment(self, account: AccountSession, external_post_id: str, text: str) -> Comment:
        """Replies to the post itself."""
        root = (await self._thread(account, external_post_id)).get("post") or {}
        return await self._reply(account, text, root=root, parent=root)

    async def _reply(
        self, account: AccountSession, text: str, *, root: dict[str, Any], parent: dict[str, Any]
    ) -> Comment:
        created_at = _now_iso()
        record: dict[str, Any] = {
            "$type": POST_COLLECTION,
            "text": text,
            "createdAt": created_at,
            "reply": {
                "root": {"uri": root.get("uri"), "cid": root.get("cid")},
                "parent": {"uri": parent.get("uri"), "cid": parent.get("cid")},
            },
        }
        created = await self._call(
            account,
            "POST",
            "com.atproto.repo.createRecord",
            body=json.dumps(
                {"repo": account.settings["did"], "collection": POST_COLLECTION, "record": record}
            ).encode(),
            action="reply",
        )
        return Comment(
            id=str(created.get("uri")),
            text=text,
            author=account.settings.get("handle"),
            created_at=created_at,
            parent_id=parent.get("uri"),
        )

    async def delete_comment(self, account: AccountSession, comment_id: str) -> None:
        """Deletes one of the account's own posts (a reply it made)."""
        prefix = f"at://{account.settings['did']}/{POST_COLLECTION}/"
        if not comment_id.startswith(prefix):
            raise ValidationFailed("bluesky can only delete the account's own replies")
        await self._call(
            account,
            "POST",
            "com.atproto.repo.deleteRecord",
            action="delete",
            body=json.dumps(
                {
                    "repo": account.settings["did"],
                    "collection": POST_COLLECTION,
                    "rkey": comment_id[len(prefix) :],
                }
            ).encode(),
        )


def _now_iso() -> str:
    return iso(datetime.now(UTC))
