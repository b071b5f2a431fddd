"""Local stand-ins of the platforms' APIs on 127.0.0.1: each records and checks what it receives."""

from __future__ import annotations

import asyncio
import contextlib
import json
import socket
import uuid
from collections.abc import AsyncIterator
from dataclasses import dataclass, field
from typing import Any

import uvicorn
from starlette.applications import Starlette
from starlette.requests import Request
from starlette.responses import JSONResponse, Response
from starlette.routing import Route
from starlette.types import ASGIApp

from toolhost.providers.connectors import webhook


@contextlib.asynccontextmanager
async def serve(app: ASGIApp) -> AsyncIterator[str]:
    """Runs an ASGI app on a free 127.0.0.1 port; yields its base URL."""
    sock = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
    sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    sock.bind(("127.0.0.1", 0))
    port = sock.getsockname()[1]
    config = uvicorn.Config(app, log_level="error", lifespan="off", access_log=False)
    server = uvicorn.Server(config)
    task = asyncio.create_task(server.serve(sockets=[sock]))
    async with asyncio.timeout(10):
        while not server.started:
            await asyncio.sleep(0.01)
    try:
        yield f"http://127.0.0.1:{port}"
    finally:
        # uvicorn's own stop waits for its next tick and then a fixed pause (100-200 ms a stand-in); a stand-in
        # has no request in flight once its test is over, so it is stopped at once and its connections closed.
        task.cancel()
        with contextlib.suppress(asyncio.CancelledError):
            await task
        for listening in server.servers:
            listening.close()
        for connection in list(server.server_state.connections):
            connection.shutdown()
        for listening in server.servers:
            await listening.wait_closed()
        sock.close()


@dataclass
class WebhookReceiver:
    """Records every delivery, checks its signature, de-duplicates on Idempotency-Key."""

    secret: str | None = None
    fail_next: int = 0
    fail_status: int = 503
    deliveries: list[dict[str, Any]] = field(default_factory=list)
    published: dict[str, dict[str, Any]] = field(default_factory=dict)
    bad_signatures: int = 0
    delivered: asyncio.Event = field(default_factory=asyncio.Event)

    async def handle(self, request: Request) -> Response:
        body = await request.body()
        key = request.headers.get("idempotency-key", "")
        signature = request.headers.get(webhook.SIGNATURE_HEADER, "")
        if self.secret is not None and not webhook.verify(self.secret, body, signature):
            self.bad_signatures += 1
            return JSONResponse({"error": "bad signature"}, status_code=401)
        self.deliveries.append({"key": key, "body": json.loads(body), "headers": dict(request.headers)})
        self.delivered.set()
        if self.fail_next > 0:
            self.fail_next -= 1
            return JSONResponse({"error": "try later"}, status_code=self.fail_status)
        if key not in self.published:
            self.published[key] = json.loads(body)
        external_id = f"ext-{key[-12:]}"
        return JSONResponse({"external_post_id": external_id, "external_url": f"https://example.test/{external_id}"})

    def app(self) -> Starlette:
        return Starlette(routes=[Route("/hook", self.handle, methods=["POST"])])


@dataclass
class MastodonStandIn:
    """The Mastodon endpoints the connector uses; statuses honour Idempotency-Key like Mastodon does."""

    token: str = "mastodon-token-1"
    code: str = "mastodon-code-1"
    apps: list[dict[str, Any]] = field(default_factory=list)
    grants: list[dict[str, str]] = field(default_factory=list)
    media: dict[str, dict[str, Any]] = field(default_factory=dict)
    statuses: dict[str, dict[str, Any]] = field(default_factory=dict)
    by_key: dict[str, str] = field(default_factory=dict)
    requests: list[str] = field(default_factory=list)

    def _authorized(self, request: Request) -> bool:
        return request.headers.get("authorization") == f"Bearer {self.token}"

    async def verify(self, request: Request) -> Response:
        if not self._authorized(request):
            return JSONResponse({"error": "The access token is invalid"}, status_code=401)
        return JSONResponse({"id": "42", "username": "alice", "acct": "alice"})

    async def register_app(self, request: Request) -> Response:
        document = await request.json()
        app = {
            "client_id": f"client-{len(self.apps) + 1}",
            "client_secret": f"secret-{len(self.apps) + 1}",
            "redirect_uri": document["redirect_uris"],
            "scopes": document["scopes"],
        }
        self.apps.append(app)
        return JSONResponse({"id": str(len(self.apps)), "name": document["client_name"], **app})

    async def oauth_token(self, request: Request) -> Response:
        async with request.form() as form:
            fields = {name: str(value) for name, value in form.items()}
        self.grants.append(fields)
        app = next((app for app in self.apps if app["client_id"] == fields.get("client_id")), None)
        if app is None or app["client_secret"] != fields.get("client_secret"):
            return JSONResponse({"error": "invalid_client"}, status_code=401)
        if (
            fields.get("grant_type") != "authorization_code"
            or fields.get("code") != self.code
            or fields.get("redirect_uri") != app["redirect_uri"]
        ):
            return JSONResponse({"error": "invalid_grant"}, status_code=400)
        return JSONResponse({"access_token": self.token, "token_type": "Bearer", "scope": "read write"})

    async def upload(self, request: Request) -> Response:
        if not self._authorized(request):
            return JSONResponse({"error": "unauthorized"}, status_code=401)
        async with request.form() as form:
            upload = form["file"]
            assert not isinstance(upload, str)
            data = await upload.read()
            content_type = upload.content_type
        media_id = str(len(self.media) + 1)
        self.media[media_id] = {"type": content_type, "size": len(data), "head": data[:8]}
        return JSONResponse({"id": media_id, "type": "image", "url": f"https://files.test/{media_id}"})

    async def create_status(self, request: Request) -> Response:
        if not self._authorized(request):
            return JSONResponse({"error": "unauthorized"}, status_code=401)
        self.requests.append("status")
        key = request.headers.get("idempotency-key")
        if key and key in self.by_key:
            return JSONResponse(self.statuses[self.by_key[key]])
        document = await request.json()
        for media_id in document.get("media_ids", []):
            if media_id not in self.media:
                return JSONResponse({"error": "unknown media"}, status_code=422)
        status_id = str(100 + len(self.statuses))
        status = {
            "id": status_id,
            "url": f"https://mastodon.test/@alice/{status_id}",
            "content": document["status"],
            "media_ids": document.get("media_ids", []),
            "visibility": document.get("visibility", "public"),
            "in_reply_to_id": document.get("in_reply_to_id"),
            "favourites_count": 3,
            "reblogs_count": 2,
            "replies_count": 1,
            "account": {"acct": "alice"},
            "created_at": "2026-11-21T00:00:00Z",
        }
        self.statuses[status_id] = status
        if key:
            self.by_key[key] = status_id
        return JSONResponse(status)

    async def get_status(self, request: Request) -> Response:
        status = self.statuses.get(request.path_params["id"])
        return JSONResponse(status) if status else JSONResponse({"error": "not found"}, status_code=404)

    async def context(self, request: Request) -> Response:
        parent = request.path_params["id"]
        return JSONResponse(
            {
                "ancestors": [],
                "descendants": [status for status in self.statuses.values() if status["in_reply_to_id"] == parent],
            }
        )

    async def delete_status(self, request: Request) -> Response:
        if not self._authorized(request):
            return JSONResponse({"error": "unauthorized"}, status_code=401)
        return JSONResponse(self.statuses.pop(request.path_params["id"], {}))

    def app(self) -> Starlette:
        return Starlette(
            routes=[
                Route("/api/v1/apps", self.register_app, methods=["POST"]),
                Route("/oauth/token", self.oauth_token, methods=["POST"]),
                Route("/api/v1/accounts/verify_credentials", self.verify),
                Route("/api/v2/media", self.upload, methods=["POST"]),
                Route("/api/v1/statuses", self.create_status, methods=["POST"]),
                Route("/api/v1/statuses/{id}", self.get_status, methods=["GET"]),
                Route("/api/v1/statuses/{id}", self.delete_status, methods=["DELETE"]),
                Route("/api/v1/statuses/{id}/context", self.context),
            ]
        )


@dataclass
class BlueskyStandIn:
    """A PDS: sessions (with expiry), blobs and post records keyed by rkey."""

    handle: str = "alice.test"
    password: str = "app-pass-1234"
    did: str = "did:plc:alice"
    access: str = "access-1"
    refresh: str = "refresh-1"
    expire_access: bool = False
    blobs: list[dict[str, Any]] = field(default_factory=list)
    records: dict[str, dict[str, Any]] = field(default_factory=dict)
    creates: int = 0
    others: list[dict[str, Any]] = field(default_factory=list)
    deletes: list[str] = field(default_factory=list)

    async def create_session(self, request: Request) -> Response:
        document = await request.json()
        if document.get("identifier") not in (self.handle, self.did) or document.get("password") != self.password:
            return JSONResponse({"error": "AuthenticationRequired"}, status_code=401)
        return JSONResponse(
            {"did": self.did, "handle": self.handle, "accessJwt": self.access, "refreshJwt": self.refresh}
        )

    async def refresh_session(self, request: Request) -> Response:
        if request.headers.get("authorization") != f"Bearer {self.refresh}":
            return JSONResponse({"error": "ExpiredToken"}, status_code=400)
        self.access, self.refresh = f"access-{uuid.uuid4().hex[:6]}", f"refresh-{uuid.uuid4().hex[:6]}"
        self.expire_access = False
        return JSONResponse(
            {"did": self.did, "handle": self.handle, "accessJwt": self.access, "refreshJwt": self.refresh}
        )

    def _authorized(self, request: Request) -> Response | None:
        if self.expire_access or request.headers.get("authorization") != f"Bearer {self.access}":
            return JSONResponse({"error": "ExpiredToken", "message": "Token has expired"}, status_code=400)
        return None

    async def upload_blob(self, request: Request) -> Response:
        if (refused := self._authorized(request)) is not None:
            return refused
        data = await request.body()
        blob = {
            "$type": "blob",
            "ref": {"$link": f"bafk{len(self.blobs)}"},
            "mimeType": request.headers.get("content-type"),
            "size": len(data),
        }
        self.blobs.append(blob)
        return JSONResponse({"blob": blob})

    async def create_record(self, request: Request) -> Response:
        if (refused := self._authorized(request)) is not None:
            return refused
        document = await request.json()
        rkey = document.get("rkey") or uuid.uuid4().hex[:13]
        if rkey in self.records:
            return JSONResponse({"error": "InvalidRequest", "message": "Record already exists"}, status_code=400)
        self.creates += 1
        self.records[rkey] = document["record"]
        return JSONResponse({"uri": f"at://{self.did}/app.bsky.feed.post/{rkey}", "cid": f"cid{rkey}"})

    async def get_record(self, request: Request) -> Response:
        rkey = request.query_params.get("rkey", "")
        if rkey not in self.records:
            return JSONResponse({"error": "RecordNotFound"}, status_code=400)
        return JSONResponse({"uri": f"at://{self.did}/app.bsky.feed.post/{rkey}", "value": self.records[rkey]})

    def _view(self, uri: str, record: dict[str, Any], handle: str) -> dict[str, Any]:
        return {
            "uri": uri,
            "cid": f"cid-{uri.rsplit('/', 1)[-1]}",
            "record": record,
            "author": {"handle": handle},
            "indexedAt": record.get("createdAt"),
        }

    def _posts(self) -> list[dict[str, Any]]:
        own = [
            self._view(f"at://{self.did}/app.bsky.feed.post/{rkey}", record, self.handle)
            for rkey, record in self.records.items()
        ]
        return own + self.others

    async def get_post_thread(self, request: Request) -> Response:
        if (refused := self._authorized(request)) is not None:
            return refused
        uri = request.query_params.get("uri", "")
        posts = self._posts()
        post = next((post for post in posts if post["uri"] == uri), None)
        if post is None:
            return JSONResponse({"error": "NotFound", "message": "Post not found"}, status_code=400)
        replies = [
            {"post": reply}
            for reply in posts
            if ((reply["record"].get("reply") or {}).get("parent") or {}).get("uri") == uri
        ]
        return JSONResponse({"thread": {"post": post, "replies": replies}})

    async def delete_record(self, request: Request) -> Response:
        if (refused := self._authorized(request)) is not None:
            return refused
        document = await request.json()
        if document.get("repo") != self.did or document.get("collection") != "app.bsky.feed.post":
            return JSONResponse({"error": "InvalidRequest"}, status_code=400)
        self.deletes.append(document["rkey"])
        self.records.pop(document["rkey"], None)
        return JSONResponse({})

    async def get_posts(self, request: Request) -> Response:
        uri = request.query_params.get("uris", "")
        return JSONResponse(
            {"posts": [{"uri": uri, "likeCount": 7, "repostCount": 2, "replyCount": 1, "quoteCount": 0}]}
        )

    def app(self) -> Starlette:
        return Starlette(
            routes=[
                Route("/xrpc/com.atproto.server.createSession", self.create_session, methods=["POST"]),
                Route("/xrpc/com.atproto.server.refreshSession", self.refresh_session, methods=["POST"]),
                Route("/xrpc/com.atproto.repo.uploadBlob", self.upload_blob, methods=["POST"]),
                Route("/xrpc/com.atproto.repo.createRecord", self.create_record, methods=["POST"]),
                Route("/xrpc/com.atproto.repo.getRecord", self.get_record),
                Route("/xrpc/app.bsky.feed.getPosts", self.get_posts),
                Route("/xrpc/app.bsky.feed.getPostThread", self.get_post_thread),
                Route("/xrpc/com.atproto.repo.deleteRecord", self.delete_record, methods=["POST"]),
            ]
        )


@dataclass
class YouTubeStandIn:
    """Google's token endpoint and the YouTube Data API's resumable upload."""

    client_id: str = "client-1"
    client_secret: str = "client-secret-1"
    refresh_token: str = "refresh-yt"
    access_token: str = "yt-access-0"
    refreshes: int = 0
    sessions: dict[str, dict[str, Any]] = field(default_factory=dict)
    videos: dict[str, dict[str, Any]] = field(default_factory=dict)
    drop_first_upload: bool = False
    base_url: str = ""
    comments: dict[str, dict[str, Any]] = field(default_factory=dict)

    async def token(self, request: Request) -> Response:
        async with request.form() as form:
            fields = dict(form)
        if fields.get("client_id") != self.client_id or fields.get("client_secret") != self.client_secret:
            return JSONResponse({"error": "invalid_client"}, status_code=401)
        if fields.get("grant_type") == "refresh_token" and fields.get("refresh_token") == self.refresh_token:
            self.refreshes += 1
            self.access_token = f"yt-access-{self.refreshes}"
            return JSONResponse({"access_token": self.access_token, "expires_in": 3600, "token_type": "Bearer"})
        if fields.get("grant_type") == "authorization_code" and fields.get("code") == "good-code":
            self.refreshes += 1
            self.access_token = f"yt-access-{self.refreshes}"
            return JSONResponse(
                {"access_token": self.access_token, "refresh_token": self.refresh_token, "expires_in": 3600}
            )
        return JSONResponse({"error": "invalid_grant"}, status_code=400)

    def _authorized(self, request: Request) -> bool:
        return request.headers.get("authorization") == f"Bearer {self.access_token}"

    async def channels(self, request: Request) -> Response:
        if not self._authorized(request):
            return JSONResponse({"error": "unauthorized"}, status_code=401)
        return JSONResponse({"items": [{"id": "UC123", "snippet": {"title": "Alice Channel"}}]})

    async def start_upload(self, request: Request) -> Response:
        if not self._authorized(request):
            return JSONResponse({"error": "unauthorized"}, status_code=401)
        assert request.query_params.get("uploadType") == "resumable"
        metadata = await request.json()
        session_id = uuid.uuid4().hex[:10]
        self.sessions[session_id] = {
            "metadata": metadata,
            "received": b"",
            "size": int(request.headers["x-upload-content-length"]),
            "type": request.headers["x-upload-content-type"],
        }
        return Response(status_code=200, headers={"Location": f"{self.base_url}/upload/session/{session_id}"})

    async def put_upload(self, request: Request) -> Response:
        if not self._authorized(request):
            return JSONResponse({"error": "unauthorized"}, status_code=401)
        session = self.sessions.get(request.path_params["id"])
        if session is None:
            return JSONResponse({"error": "gone"}, status_code=404)
        data = await request.body()
        content_range = request.headers.get("content-range", "")
        if content_range.startswith("bytes */"):
            if session.get("video_id"):
                return JSONResponse(self.videos[session["video_id"]], status_code=200)
            received = len(session["received"])
            headers = {"Range": f"bytes=0-{received - 1}"} if received else {}
            return Response(status_code=308, headers=headers)
        if self.drop_first_upload:
            # The connection dies after half the bytes arrived: the client sees a 503.
            self.drop_first_upload = False
            session["received"] += data[: len(data) // 2]
            return JSONResponse({"error": "backend error"}, status_code=503)
        session["received"] += data
        if len(session["received"]) < session["size"]:
            return Response(status_code=308, headers={"Range": f"bytes=0-{len(session['received']) - 1}"})
        video_id = f"vid{len(self.videos) + 1}"
        session["video_id"] = video_id
        self.videos[video_id] = {
            "id": video_id,
            "snippet": session["metadata"]["snippet"],
            "status": session["metadata"]["status"],
            "size": len(session["received"]),
            "head": session["received"][:12].hex(),
        }
        return JSONResponse(self.videos[video_id], status_code=200)

    async def statistics(self, request: Request) -> Response:
        if not self._authorized(request):
            return JSONResponse({"error": "unauthorized"}, status_code=401)
        return JSONResponse(
            {
                "items": [
                    {
                        "id": request.query_params.get("id"),
                        "statistics": {"viewCount": "120", "likeCount": "9", "commentCount": "4"},
                    }
                ]
            }
        )

    def add_comment(self, *, text: str, author: str, video_id: str | None, parent_id: str | None) -> dict[str, Any]:
        comment_id = f"Ug{len(self.comments) + 1}"
        self.comments[comment_id] = {
            "id": comment_id,
            "videoId": video_id,
            "parentId": parent_id,
            "text": text,
            "author": author,
            "moderationStatus": "published",
        }
        return self.comments[comment_id]

    def _thread(self, comment: dict[str, Any]) -> dict[str, Any]:
        return {
            "id": f"thread-{comment['id']}",
            "snippet": {
                "videoId": comment["videoId"],
                "topLevelComment": {
                    "id": comment["id"],
                    "snippet": {
                        "textOriginal": comment["text"],
                        "authorDisplayName": comment["author"],
                        "publishedAt": "2026-11-21T00:00:00Z",
                    },
                },
            },
        }

    async def comment_threads(self, request: Request) -> Response:
        if not self._authorized(request):
            return JSONResponse({"error": "unauthorized"}, status_code=401)
        if request.method == "GET":
            video_id = request.query_params.get("videoId")
            limit = int(request.query_params.get("maxResults", "20"))
            threads = [
                self._thread(comment)
                for comment in self.comments.values()
                if comment["videoId"] == video_id and comment["parentId"] is None
            ]
            return JSONResponse({"items": threads[:limit]})
        snippet = (await request.json())["snippet"]
        top = self.add_comment(
            text=snippet["topLevelComment"]["snippet"]["textOriginal"],
            author="Alice Channel",
            video_id=snippet["videoId"],
            parent_id=None,
        )
        return JSONResponse(self._thread(top))

    async def reply(self, request: Request) -> Response:
        if not self._authorized(request):
            return JSONResponse({"error": "unauthorized"}, status_code=401)
        if request.method == "DELETE":
            if self.comments.pop(request.query_params.get("id", ""), None) is None:
                return JSONResponse({"error": "commentNotFound"}, status_code=404)
            return Response(status_code=204)
        snippet = (await request.json())["snippet"]
        parent = self.comments.get(snippet["parentId"])
        if parent is None:
            return JSONResponse({"error": "parentCommentNotFound"}, status_code=404)
        created = self.add_comment(
            text=snippet["textOriginal"], author="Alice Channel", video_id=None, parent_id=parent["id"]
        )
        return JSONResponse({"id": created["id"], "snippet": {"parentId": parent["id"]}})

    async def moderate(self, request: Request) -> Response:
        if not self._authorized(request):
            return JSONResponse({"error": "unauthorized"}, status_code=401)
        comment = self.comments.get(request.query_params.get("id", ""))
        status = request.query_params.get("moderationStatus")
        if comment is None or status not in ("heldForReview", "published", "rejected"):
            return JSONResponse({"error": "invalid"}, status_code=400)
        comment["moderationStatus"] = status
        return Response(status_code=204)

    def app(self) -> Starlette:
        return Starlette(
            routes=[
                Route("/token", self.token, methods=["POST"]),
                Route("/youtube/v3/commentThreads", self.comment_threads, methods=["GET", "POST"]),
                Route("/youtube/v3/comments", self.reply, methods=["POST", "DELETE"]),
                Route("/youtube/v3/comments/setModerationStatus", self.moderate, methods=["POST"]),
                Route("/youtube/v3/channels", self.channels),
                Route("/youtube/v3/videos", self.statistics),
                Route("/upload/youtube/v3/videos", self.start_upload, methods=["POST"]),
                Route("/upload/session/{id}", self.put_upload, methods=["PUT"]),
            ]
        )
