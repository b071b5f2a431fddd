"""A local stand-in of the X API v2 on 127.0.0.1: the requests, answers and error cases of X's public API
documentation that the `x` connector relies on, each handler naming the documentation section it follows.
"""

from __future__ import annotations

import asyncio
import base64
import hashlib
import itertools
import time
from dataclasses import dataclass, field
from datetime import UTC, datetime, timedelta
from typing import Any

from starlette.applications import Starlette
from starlette.requests import Request
from starlette.responses import JSONResponse, Response
from starlette.routing import Route

from toolhost.platform.dates import iso, parse_iso


def problem(status: int, title: str, detail: str) -> JSONResponse:
    """ "Response codes and errors": v2 errors are RFC 7807 problem details."""
    return JSONResponse({"title": title, "detail": detail, "type": "about:blank", "status": status}, status_code=status)


@dataclass
class XStandIn:
    """Records what it receives; switches let a test provoke each documented error case."""

    client_id: str = "x-client-id"
    client_secret: str = "x-client-secret"
    user_id: str = "2244994945"
    username: str = "alice"
    redirect_uri: str = ""
    # Grants the person approved on the consent page: code -> (code_challenge, scopes).
    codes: dict[str, tuple[str, str]] = field(default_factory=dict)
    access_tokens: dict[str, float] = field(default_factory=dict)
    refresh_tokens: set[str] = field(default_factory=set)
    refreshes: int = 0
    token_requests: list[dict[str, str]] = field(default_factory=list)
    tweets: dict[str, dict[str, Any]] = field(default_factory=dict)
    create_requests: int = 0
    media: dict[str, dict[str, Any]] = field(default_factory=dict)
    # Switches
    rate_limit_reset: int | None = None
    fail_processing: bool = False
    accepted: asyncio.Event = field(default_factory=asyncio.Event)
    hang_after_accepting: bool = False
    release: asyncio.Event = field(default_factory=asyncio.Event)
    ids: itertools.count[int] = field(default_factory=lambda: itertools.count(1_790_000_000_000_000_001))

    # --- "OAuth 2.0 Authorization Code Flow with PKCE" ------------------------------------------------------

    def approve(self, authorize_query: dict[str, str]) -> str:
        """What X's consent page does when the person agrees: a code bound to the challenge and scopes."""
        assert authorize_query["response_type"] == "code"
        assert authorize_query["client_id"] == self.client_id
        assert authorize_query["code_challenge_method"] == "S256"
        code = f"code-{len(self.codes) + 1}"
        self.redirect_uri = authorize_query["redirect_uri"]
        self.codes[code] = (authorize_query["code_challenge"], authorize_query["scope"])
        return code

    def issue(self, *, lifetime: int = 7200) -> dict[str, Any]:
        """A token pair as the token endpoint answers it (access tokens live two hours)."""
        access, refresh = f"access-{next(self.ids)}", f"refresh-{next(self.ids)}"
        self.access_tokens[access] = time.time() + lifetime
        self.refresh_tokens.add(refresh)
        return {
            "token_type": "bearer",
            "expires_in": lifetime,
            "access_token": access,
            "refresh_token": refresh,
            "scope": "tweet.read tweet.write users.read offline.access media.write",
        }

    def revoke_everything(self) -> None:
        """The person removed the app's access in their X settings."""
        self.access_tokens.clear()
        self.refresh_tokens.clear()

    async def token(self, request: Request) -> Response:
        # A confidential client authenticates with HTTP Basic (client id : client secret).
        expected = base64.b64encode(f"{self.client_id}:{self.client_secret}".encode()).decode()
        if request.headers.get("authorization") != f"Basic {expected}":
            return JSONResponse({"error": "unauthorized_client"}, status_code=401)
        async with request.form() as form:
            fields = {name: str(value) for name, value in form.items()}
        self.token_requests.append(fields)
        if fields.get("grant_type") == "authorization_code":
            grant = self.codes.pop(fields.get("code", ""), None)
            verifier = fields.get("code_verifier", "")
            challenge = base64.urlsafe_b64encode(hashlib.sha256(verifier.encode()).digest()).rstrip(b"=").decode()
            if grant is None or grant[0] != challenge or fields.get("redirect_uri") != self.redirect_uri:
                return JSONResponse({"error": "invalid_request"}, status_code=400)
            return JSONResponse(self.issue())
        if fields.get("grant_type") == "refresh_token":
            # Refresh tokens rotate: the one used is spent.
            if fields.get("refresh_token") not in self.refresh_tokens:
                return JSONResponse(
                    {"error": "invalid_request", "error_description": "Value passed for the token was invalid."},
                    status_code=400,
                )
            self.refresh_tokens.discard(fields["refresh_token"])
            self.refreshes += 1
            return JSONResponse(self.issue())
        return JSONResponse({"error": "unsupported_grant_type"}, status_code=400)

    def _authorized(self, request: Request) -> bool:
        token = request.headers.get("authorization", "").removeprefix("Bearer ")
        return self.access_tokens.get(token, 0) > time.time()

    def _unauthorized(self) -> Response:
        return problem(401, "Unauthorized", "Unauthorized")

    def _rate_limited(self) -> Response | None:
        """ "Rate limits": 429 Too Many Requests with x-rate-limit-reset in epoch seconds."""
        if self.rate_limit_reset is None:
            return None
        reset, self.rate_limit_reset = self.rate_limit_reset, None
        return JSONResponse(
            {"title": "Too Many Requests", "detail": "Too Many Requests", "type": "about:blank", "status": 429},
            status_code=429,
            headers={"x-rate-limit-limit": "100", "x-rate-limit-remaining": "0", "x-rate-limit-reset": str(reset)},
        )

    # --- Users "User lookup" ----------------------------------------------------------------------------

    async def me(self, request: Request) -> Response:
        if not self._authorized(request):
            return self._unauthorized()
        return JSONResponse({"data": {"id": self.user_id, "name": "Alice", "username": self.username}})

    # --- Posts "Create or Edit Post", "Delete Post", "Post lookup" --------------------------------------

    def add_tweet(
        self,
        text: str,
        *,
        created_at: datetime | None = None,
        reply_to: str | None = None,
        author_id: str | None = None,
        media_ids: list[str] | None = None,
    ) -> dict[str, Any]:
        tweet_id = str(next(self.ids))
        root = self.tweets[reply_to]["conversation_id"] if reply_to in self.tweets else tweet_id
        tweet = {
            "id": tweet_id,
            "sent": text,
            # X wraps links in t.co and escapes &, < and > in the text it returns.
            "text": text.replace("&", "&amp;").replace("<", "&lt;").replace(">", "&gt;"),
            "created_at": iso(created_at or datetime.now(UTC)),
            "author_id": author_id or self.user_id,
            "conversation_id": root,
            "media_ids": media_ids or [],
            "public_metrics": {
                "retweet_count": 2,
                "reply_count": 0,
                "like_count": 5,
                "quote_count": 1,
                "bookmark_count": 3,
                "impression_count": 120,
            },
        }
        if reply_to is not None:
            tweet["referenced_tweets"] = [{"type": "replied_to", "id": reply_to}]
            if reply_to in self.tweets:
                self.tweets[reply_to]["public_metrics"]["reply_count"] += 1
        self.tweets[tweet_id] = tweet
        return tweet

    def own_tweets(self) -> list[dict[str, Any]]:
        return [tweet for tweet in self.tweets.values() if tweet["author_id"] == self.user_id]

    async def create(self, request: Request) -> Response:
        if not self._authorized(request):
            return self._unauthorized()
        limited = self._rate_limited()
        if limited is not None:
            return limited
        self.create_requests += 1
        body = await request.json()
        text = str(body.get("text", ""))
        recent = datetime.now(UTC) - timedelta(hours=24)
        if any(tweet["sent"] == text and parse_iso(tweet["created_at"]) > recent for tweet in self.own_tweets()):
            return problem(403, "Forbidden", "You are not allowed to create a Tweet with duplicate content.")
        media_ids = list((body.get("media") or {}).get("media_ids") or [])
        for media_id in media_ids:
            media = self.media.get(media_id)
            if media is None or media["state"] != "succeeded":
                return problem(400, "Invalid Request", f"Your media IDs are invalid: {media_id}")
        reply_to = (body.get("reply") or {}).get("in_reply_to_tweet_id")
        if reply_to is not None and reply_to not in self.tweets:
            return problem(400, "Invalid Request", "The post you are replying to does not exist.")
        tweet = self.add_tweet(text, reply_to=reply_to, media_ids=media_ids)
        self.accepted.set()
        if self.hang_after_accepting:
            # The post is out, but its answer never reaches the worker (which is killed meanwhile).
            await self.release.wait()
        return JSONResponse({"data": {"id": tweet["id"], "text": tweet["text"]}}, status_code=201)

    async def lookup(self, request: Request) -> Response:
        if not self._authorized(request):
            return self._unauthorized()
        tweet = self.tweets.get(request.path_params["id"])
        if tweet is None:
            return JSONResponse({"errors": [{"title": "Not Found Error", "detail": "Could not find tweet"}]})
        data = {"id": tweet["id"], "text": tweet["text"]}
        if "public_metrics" in request.query_params.get("tweet.fields", ""):
            data["public_metrics"] = tweet["public_metrics"]
        return JSONResponse({"data": data})

    async def delete(self, request: Request) -> Response:
        if not self._authorized(request):
            return self._unauthorized()
        tweet = self.tweets.get(request.path_params["id"])
        if tweet is None or tweet["author_id"] != self.user_id:
            return problem(403, "Forbidden", "You are not allowed to delete this Tweet.")
        del self.tweets[tweet["id"]]
        return JSONResponse({"data": {"deleted": True}})

    # --- Posts "User Post timeline" and "Recent search" -------------------------------------------------

    def _view(self, tweet: dict[str, Any], fields: str) -> dict[str, Any]:
        view = {"id": tweet["id"], "text": tweet["text"]}
        for name in ("created_at", "author_id", "conversation_id", "referenced_tweets"):
            if name in fields and name in tweet:
                view[name] = tweet[name]
        return view

    async def timeline(self, request: Request) -> Response:
        if not self._authorized(request):
            return self._unauthorized()
        if request.path_params["id"] != self.user_id:
            return problem(403, "Forbidden", "not this account")
        query = request.query_params
        start = parse_iso(query["start_time"]) if "start_time" in query else None
        size = int(query.get("max_results", "10"))
        assert 5 <= size <= 100
        tweets = sorted(
            (tweet for tweet in self.own_tweets() if start is None or parse_iso(tweet["created_at"]) >= start),
            key=lambda tweet: int(tweet["id"]),
            reverse=True,
        )
        offset = int(query.get("pagination_token", "0"))
        page = tweets[offset : offset + size]
        meta: dict[str, Any] = {"result_count": len(page)}
        if offset + size < len(tweets):
            meta["next_token"] = str(offset + size)
        fields = query.get("tweet.fields", "")
        return JSONResponse(
            {"data": [self._view(tweet, fields) for tweet in page], "meta": meta} if page else {"meta": meta}
        )

    async def search(self, request: Request) -> Response:
        if not self._authorized(request):
            return self._unauthorized()
        query = request.query_params["query"]
        conversation = query.split("conversation_id:", 1)[1].split()[0]
        fields = request.query_params.get("tweet.fields", "")
        found = [
            self._view(tweet, fields)
            for tweet in self.tweets.values()
            if tweet["conversation_id"] == conversation and tweet["id"] != conversation
        ]
        users = [{"id": tweet["author_id"], "username": f"user{tweet['author_id']}"} for tweet in self.tweets.values()]
        return JSONResponse({"data": found, "includes": {"users": users}, "meta": {"result_count": len(found)}})

    # --- Media "Chunked media upload": initialize, append, finalize, status ----------------------------

    async def initialize(self, request: Request) -> Response:
        if not self._authorized(request):
            return self._unauthorized()
        body = await request.json()
        media_id = str(next(self.ids))
        self.media[media_id] = {
            "media_type": body["media_type"],
            "category": body["media_category"],
            "total_bytes": int(body["total_bytes"]),
            "chunks": {},
            "state": "uploading",
            "polls": 0,
        }
        return JSONResponse({"data": {"id": media_id, "media_key": f"3_{media_id}", "expires_after_secs": 86399}})

    async def append(self, request: Request) -> Response:
        if not self._authorized(request):
            return self._unauthorized()
        media = self.media.get(request.path_params["id"])
        if media is None:
            return problem(400, "Invalid Request", "unknown media id")
        async with request.form() as form:
            chunk = form["media"]
            assert not isinstance(chunk, str)
            media["chunks"][int(str(form["segment_index"]))] = await chunk.read()
        return JSONResponse({"data": {"expires_at": int(time.time()) + 86399}})

    async def finalize(self, request: Request) -> Response:
        if not self._authorized(request):
            return self._unauthorized()
        media_id = request.path_params["id"]
        media = self.media.get(media_id)
        if media is None:
            return problem(400, "Invalid Request", "unknown media id")
        data = b"".join(media["chunks"][index] for index in sorted(media["chunks"]))
        if len(data) != media["total_bytes"]:
            return problem(400, "Invalid Request", "the segments do not add up to total_bytes")
        media["data"] = data
        reply: dict[str, Any] = {
            "id": media_id,
            "media_key": f"3_{media_id}",
            "size": len(data),
            "expires_after_secs": 86399,
        }
        if media["category"] == "tweet_image":
            media["state"] = "succeeded"
        else:
            # Videos and GIFs are processed asynchronously: poll STATUS until succeeded or failed.
            media["state"] = "pending"
            reply["processing_info"] = {"state": "pending", "check_after_secs": 0}
        return JSONResponse({"data": reply})

    async def status(self, request: Request) -> Response:
        if not self._authorized(request):
            return self._unauthorized()
        assert request.query_params["command"] == "STATUS"
        media_id = request.query_params["media_id"]
        media = self.media[media_id]
        media["polls"] += 1
        if self.fail_processing:
            media["state"] = "failed"
            info: dict[str, Any] = {
                "state": "failed",
                "progress_percent": 12,
                "error": {"code": 1, "name": "InvalidMedia", "message": "Unsupported video format"},
            }
        elif media["polls"] == 1:
            media["state"] = "in_progress"
            info = {"state": "in_progress", "check_after_secs": 0, "progress_percent": 50}
        else:
            media["state"] = "succeeded"
            info = {"state": "succeeded", "progress_percent": 100}
        return JSONResponse({"data": {"id": media_id, "media_key": f"7_{media_id}", "processing_info": info}})

    def app(self) -> Starlette:
        return Starlette(
            routes=[
                Route("/2/oauth2/token", self.token, methods=["POST"]),
                Route("/2/users/me", self.me, methods=["GET"]),
                Route("/2/users/{id}/tweets", self.timeline, methods=["GET"]),
                Route("/2/tweets", self.create, methods=["POST"]),
                Route("/2/tweets/search/recent", self.search, methods=["GET"]),
                Route("/2/tweets/{id}", self.lookup, methods=["GET"]),
                Route("/2/tweets/{id}", self.delete, methods=["DELETE"]),
                Route("/2/media/upload/initialize", self.initialize, methods=["POST"]),
                Route("/2/media/upload/{id}/append", self.append, methods=["POST"]),
                Route("/2/media/upload/{id}/finalize", self.finalize, methods=["POST"]),
                Route("/2/media/upload", self.status, methods=["GET"]),
            ]
        )
