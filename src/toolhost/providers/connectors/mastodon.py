"""The `mastodon` connector: the Mastodon REST API of the account's instance (statuses with media).

Publication sends Mastodon's own `Idempotency-Key` header, so a retry of the same status within the
instance's idempotency window returns the first status instead of creating a second. Uploaded media
ids are saved before the status is created, so a retry does not upload them again.
"""

from __future__ import annotations

import asyncio
import html
import json
import re
from typing import Any, ClassVar
from urllib.parse import quote, urlencode, urlsplit

from toolhost.platform.results import ValidationFailed
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
    multipart,
    raise_for_status,
    upstream,
)

MEDIA_PROCESSING_POLLS = 30
MEDIA_PROCESSING_DELAY = 1.0
TAG = re.compile(r"<[^>]+>")
SCOPES = "read write"


def instance_root(url: str) -> str:
    """The instance's root URL (scheme and host), from whatever the operator typed."""
    url = url.strip()
    if "://" not in url:
        url = "https://" + url
    parts = urlsplit(url)
    if parts.scheme not in ("http", "https") or not parts.hostname:
        raise ValidationFailed(
            "the Mastodon instance URL is not valid",
            field_errors=[{"path": "instance_url", "message": "not a URL"}],
        )
    return f"{parts.scheme}://{parts.netloc}"


def plain_text(content: str) -> str:
    """A status's HTML content as plain text."""
    return html.unescape(TAG.sub(" ", content.replace("<br>", "\n").replace("</p><p>", "\n\n"))).strip()


class MastodonConnector(Connector):
    """Statuses, media, counters and replies on any Mastodon-API instance."""

    name: ClassVar[str] = "mastodon"
    platforms: ClassVar[tuple[str, ...]] = ("mastodon",)
    media_kinds: ClassVar[tuple[str, ...]] = ("image", "gif", "video")
    capabilities: ClassVar[frozenset[str]] = frozenset(
        {PUBLISH, METRICS, COMMENTS_LIST, COMMENTS_REPLY, COMMENTS_POST, COMMENTS_DELETE}
    )
    connect_fields: ClassVar[dict[str, str]] = {
        "instance_url": "Instance URL",
        "access_token": "Access token",
    }
    secret_fields: ClassVar[frozenset[str]] = frozenset({"access_token"})

    async def connect(self, *, platform: str, fields: dict[str, str]) -> ConnectResult:
        """Verifies an access token against the instance and reads the account's name."""
        root = instance_root(fields.get("instance_url") or "")
        token = (fields.get("access_token") or "").strip()
        if not token:
            raise ValidationFailed(
                "a Mastodon connection needs an access token",
                field_errors=[{"path": "access_token", "message": "required"}],
            )
        try:
            response = await self.send("GET", f"{root}/api/v1/accounts/verify_credentials", headers=bearer(token))
            raise_for_status("mastodon", response, "verify the access token")
            account = json_body("mastodon", response)
        except PublishFailed as error:
            raise upstream(error, "mastodon") from error
        return ConnectResult(
            username=f"@{account.get('acct') or account.get('username')}@{urlsplit(root).hostname}",
            settings={"instance_url": root, "account_id": str(account.get("id", ""))},
            secrets={"access_token": token},
        )

    async def register_app(self, *, instance_url: str, redirect_uri: str) -> dict[str, str]:
        """Registers toolhost as an OAuth application on the instance (first step of the OAuth flow)."""
        root = instance_root(instance_url)
        body = json.dumps({"client_name": "toolhost", "redirect_uris": redirect_uri, "scopes": SCOPES}).encode()
        try:
            response = await self.send(
                "POST", f"{root}/api/v1/apps", content=body, headers={"Content-Type": "application/json"}
            )
            raise_for_status("mastodon", response, "register the application")
            app = json_body("mastodon", response)
        except PublishFailed as error:
            raise upstream(error, "mastodon") from error
        return {
            "instance_url": root,
            "client_id": str(app["client_id"]),
            "client_secret": str(app["client_secret"]),
        }

    def authorize_url(self, *, app: dict[str, str], redirect_uri: str, state: str) -> str:
        """Where the person authorizes toolhost on the instance."""
        query = urlencode(
            {
                "client_id": app["client_id"],
                "redirect_uri": redirect_uri,
                "response_type": "code",
                "scope": SCOPES,
                "state": state,
            }
        )
        return f"{app['instance_url']}/oauth/authorize?{query}"

    async def exchange_code(self, *, app: dict[str, str], redirect_uri: str, code: str) -> ConnectResult:
        """Trades the authorization code for an access token, then verifies it."""
        body = urlencode(
            {
                "grant_type": "authorization_code",
                "code": code,
                "client_id": app["client_id"],
                "client_secret": app["client_secret"],
                "redirect_uri": redirect_uri,
                "scope": SCOPES,
            }
        ).encode()
        try:
            response = await self.send(
                "POST",
                f"{app['instance_url']}/oauth/token",
                content=body,
                headers={"Content-Type": "application/x-www-form-urlencoded"},
            )
            raise_for_status("mastodon", response, "exchange the authorization code")
            token = json_body("mastodon", response)
        except PublishFailed as error:
            raise upstream(error, "mastodon") from error
        return await self.connect(
            platform="mastodon",
            fields={"instance_url": app["instance_url"], "access_token": str(token["access_token"])},
        )

    async def publish(self, account: AccountSession, post: OutgoingPost, context: PublishContext) -> PublishResult:
        """Uploads the media (once), then creates the status under the post's idempotency key."""
        root = account.settings["instance_url"]
        auth = bearer(account.secrets["access_token"])
        media_ids: list[str] = list(context.state.get("media_ids", []))
        if not media_ids and post.media:
            for index, item in enumerate(post.media):
                if item.data is None:
                    raise PublishFailed("mastodon: media must be stored in toolhost to upload", retryable=False)
                body, content_type = multipart(
                    {}, [("file", item.file_name or f"media-{index}", item.content_type, item.data)]
                )
                response = await self.send(
                    "POST",
                    f"{root}/api/v2/media",
                    content=body,
                    headers={**auth, "Content-Type": content_type},
                    timeout=120,
                )
                raise_for_status("mastodon", response, "upload media")
                media = json_body("mastodon", response)
                if response.status == 202:
                    await self._wait_for_processing(root, auth, str(media["id"]))
                media_ids.append(str(media["id"]))
            await context.save_state({**context.state, "media_ids": media_ids})
        options: dict[str, Any] = post.platform_metadata.get("mastodon") or {}
        status: dict[str, Any] = {"status": post.text(), "media_ids": media_ids}
        for name in ("visibility", "spoiler_text", "sensitive", "language"):
            if options.get(name) not in (None, ""):
                status[name] = options[name]
        response = await self.send(
            "POST",
            f"{root}/api/v1/statuses",
            content=json.dumps(status).encode(),
            headers={**auth, "Content-Type": "application/json", "Idempotency-Key": post.idempotency_key},
        )
        raise_for_status("mastodon", response, "create the status")
        created = json_body("mastodon", response)
        return PublishResult(external_post_id=str(created.get("id") or "") or None, external_url=created.get("url"))

    async def _wait_for_processing(self, root: str, auth: dict[str, str], media_id: str) -> None:
        for _ in range(MEDIA_PROCESSING_POLLS):
            await asyncio.sleep(MEDIA_PROCESSING_DELAY)
            response = await self.send("GET", f"{root}/api/v1/media/{quote(media_id)}", headers=auth)
            if response.status == 200:
                return
            if response.status != 206:
                raise_for_status("mastodon", response, "check media processing")
        raise PublishFailed("mastodon: the instance is still processing the media", retryable=True)

    async def fetch_metrics(self, account: AccountSession, external_post_id: str) -> dict[str, int]:
        """Favourites, boosts and replies of a status."""
        status = await self._get(account, f"/api/v1/statuses/{quote(external_post_id)}")
        return {
            "likes": int(status.get("favourites_count", 0)),
            "shares": int(status.get("reblogs_count", 0)),
            "comments": int(status.get("replies_count", 0)),
        }

    async def list_comments(self, account: AccountSession, external_post_id: str, *, limit: int) -> list[Comment]:
        """Replies below a status (its context's descendants)."""
        context = await self._get(account, f"/api/v1/statuses/{quote(external_post_id)}/context")
        return [_comment(status) for status in context.get("descendants", [])[:limit]]

    async def reply_to_comment(
        self, account: AccountSession, external_post_id: str, comment_id: str, text: str
    ) -> Comment:
        """Replies to a reply."""
        return await self._status(account, text, in_reply_to=comment_id)

    async def post_comment(self, account: AccountSession, external_post_id: str, text: str) -> Comment:
        """Replies to the status itself."""
        return await self._status(account, text, in_reply_to=external_post_id)

    async def delete_comment(self, account: AccountSession, comment_id: str) -> None:
        """Deletes one of the account's own statuses."""
        try:
            response = await self.send(
                "DELETE",
                f"{account.settings['instance_url']}/api/v1/statuses/{quote(comment_id)}",
                headers=bearer(account.secrets["access_token"]),
            )
            raise_for_status("mastodon", response, "delete the status")
        except PublishFailed as error:
            raise upstream(error, "mastodon") from error

    async def _status(self, account: AccountSession, text: str, *, in_reply_to: str) -> Comment:
        try:
            response = await self.send(
                "POST",
                f"{account.settings['instance_url']}/api/v1/statuses",
                content=json.dumps({"status": text, "in_reply_to_id": in_reply_to}).encode(),
                headers={**bearer(account.secrets["access_token"]), "Content-Type": "application/json"},
            )
            raise_for_status("mastodon", response, "reply")
            return _comment(json_body("mastodon", response))
        except PublishFailed as error:
            raise upstream(error, "mastodon") from error

    async def _get(self, account: AccountSession, path: str) -> dict[str, Any]:
        try:
            response = await self.send(
                "GET",
                account.settings["instance_url"] + path,
                headers=bearer(account.secrets["access_token"]),
            )
            raise_for_status("mastodon", response, "read")
            return json_body("mastodon", response)
        except PublishFailed as error:
            raise upstream(error, "mastodon") from error


def _comment(status: dict[str, Any]) -> Comment:
    author = status.get("account") or {}
    return Comment(
        id=str(status.get("id")),
        text=plain_text(str(status.get("content", ""))),
        author=author.get("acct"),
        created_at=status.get("created_at"),
        parent_id=status.get("in_reply_to_id"),
    )
