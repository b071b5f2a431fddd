"""A local stand-in of TikTok's Login Kit and Content Posting API on 127.0.0.1: the requests, answers and error
cases of TikTok's public developer documentation that the `tiktok` connector relies on, each handler naming
the documentation section it follows.
"""

from __future__ import annotations

import asyncio
import itertools
import time
from dataclasses import dataclass, field
from typing import Any

from starlette.applications import Starlette
from starlette.requests import Request
from starlette.responses import JSONResponse, Response
from starlette.routing import Route


def answer(data: dict[str, Any], *, code: str = "ok", message: str = "", status: int = 200) -> JSONResponse:
    """ "Error Handling": every reply carries error {code, message, log_id}; code "ok" is success."""
    return JSONResponse(
        {"data": data, "error": {"code": code, "message": message, "log_id": "202511251849000000"}},
        status_code=status,
    )


@dataclass
class TikTokStandIn:
    """Records what it receives; switches let a test provoke each documented error case."""

    client_key: str = "tt-client-key"
    client_secret: str = "tt-client-secret"
    open_id: str = "723f24d7-e717-40f8-a2b6-cb8464cd23b4"
    base: str = ""
    redirect_uri: str = ""
    codes: set[str] = field(default_factory=set)
    access_tokens: dict[str, float] = field(default_factory=dict)
    refresh_tokens: set[str] = field(default_factory=set)
    token_requests: list[dict[str, str]] = field(default_factory=list)
    publications: dict[str, dict[str, Any]] = field(default_factory=dict)
    init_requests: int = 0
    posts: list[dict[str, Any]] = field(default_factory=list)
    # Switches
    rate_limited: bool = False
    fail_processing: str | None = None
    too_many_posts: bool = False
    accepted: asyncio.Event = field(default_factory=asyncio.Event)
    hang_after_accepting: bool = False
    release: asyncio.Event = field(default_factory=asyncio.Event)
    ids: itertools.count[int] = field(default_factory=lambda: itertools.count(7_300_000_000_000_000_001))

    # --- "Login Kit for Web" and "Manage User Access Tokens" ----------------------------------------------

    def approve(self, authorize_query: dict[str, str]) -> str:
        assert authorize_query["response_type"] == "code"
        assert authorize_query["client_key"] == self.client_key
        code = f"code-{next(self.ids)}"
        self.redirect_uri = authorize_query["redirect_uri"]
        self.codes.add(code)
        return code

    def issue(self) -> dict[str, Any]:
        """Access tokens live 24 hours, refresh tokens a year."""
        access, refresh = f"act.{next(self.ids)}", f"rft.{next(self.ids)}"
        self.access_tokens[access] = time.time() + 86_400
        self.refresh_tokens.add(refresh)
        return {
            "access_token": access,
            "expires_in": 86_400,
            "open_id": self.open_id,
            "refresh_expires_in": 31_536_000,
            "refresh_token": refresh,
            "scope": "user.info.basic,video.publish,video.upload",
            "token_type": "Bearer",
        }

    def revoke_everything(self) -> None:
        """The creator removed the app ("Manage app permissions")."""
        self.access_tokens.clear()
        self.refresh_tokens.clear()

    async def token(self, request: Request) -> Response:
        async with request.form() as form:
            fields = {name: str(value) for name, value in form.items()}
        self.token_requests.append(fields)
        refused = JSONResponse(
            {"error": "invalid_grant", "error_description": "Authorization code is expired.", "log_id": "1"},
            status_code=400,
        )
        if (fields.get("client_key"), fields.get("client_secret")) != (self.client_key, self.client_secret):
            return JSONResponse({"error": "invalid_client", "error_description": "", "log_id": "1"}, status_code=401)
        if fields.get("grant_type") == "authorization_code":
            if fields.get("code") not in self.codes or fields.get("redirect_uri") != self.redirect_uri:
                return refused
            self.codes.discard(fields["code"])
            return JSONResponse(self.issue())
        if fields.get("grant_type") == "refresh_token" and fields.get("refresh_token") in self.refresh_tokens:
            return JSONResponse(self.issue())
        return refused

    def _refused(self, request: Request) -> Response | None:
        token = request.headers.get("authorization", "").removeprefix("Bearer ")
        if self.access_tokens.get(token, 0) <= time.time():
            return answer({}, code="access_token_invalid", message="The access token is invalid.", status=401)
        if self.rate_limited:
            # "Rate Limits": 429 rate_limit_exceeded, no reset header.
            self.rate_limited = False
            return answer({}, code="rate_limit_exceeded", message="API rate limit was exceeded.", status=429)
        return None

    # --- "Get User Info" -----------------------------------------------------------------------------------

    async def user_info(self, request: Request) -> Response:
        refused = self._refused(request)
        if refused is not None:
            return refused
        assert "open_id" in request.query_params["fields"]
        return answer({"user": {"open_id": self.open_id, "display_name": "Alice Clips"}})

    # --- Content Posting API: "Query Creator Info", "Direct Post", "Upload", "Get Post Status" ------------------

    async def creator_info(self, request: Request) -> Response:
        refused = self._refused(request)
        if refused is not None:
            return refused
        return answer(
            {
                "creator_username": "aliceclips",
                "creator_nickname": "Alice Clips",
                "privacy_level_options": ["PUBLIC_TO_EVERYONE", "MUTUAL_FOLLOW_FRIENDS", "SELF_ONLY"],
                "comment_disabled": False,
                "duet_disabled": False,
                "stitch_disabled": False,
                "max_video_post_duration_sec": 600,
            }
        )

    async def init(self, request: Request) -> Response:
        refused = self._refused(request)
        if refused is not None:
            return refused
        self.init_requests += 1
        if self.too_many_posts:
            return answer(
                {}, code="spam_risk_too_many_posts", message="The daily post cap from the API is reached.", status=403
            )
        body = await request.json()
        source = body["source_info"]
        size, chunk, count = int(source["video_size"]), int(source["chunk_size"]), int(source["total_chunk_count"])
        if source["source"] != "FILE_UPLOAD" or count != max(size // chunk, 1):
            return answer({}, code="invalid_params", message="total_chunk_count is wrong", status=400)
        publish_id = f"v_pub_file~v2-1.{next(self.ids)}"
        inbox = request.url.path.startswith("/v2/post/publish/inbox/")
        self.publications[publish_id] = {
            "post_info": body.get("post_info"),
            "inbox": inbox,
            "size": size,
            "received": {},
            "status": "PROCESSING_UPLOAD",
            "polls": 0,
        }
        upload_url = f"{self.base}/upload/?upload_id={publish_id}&upload_token=tok"
        return answer({"publish_id": publish_id, "upload_url": upload_url})

    async def upload(self, request: Request) -> Response:
        """ "Media Transfer Guide": PUT with Content-Range; 206 until the last chunk, then 201."""
        publication = self.publications[request.query_params["upload_id"]]
        first, rest = request.headers["content-range"].removeprefix("bytes ").split("-")
        last, total = (int(value) for value in rest.split("/"))
        data = await request.body()
        assert len(data) == last - int(first) + 1 and total == publication["size"]
        publication["received"][int(first)] = data
        if sum(len(part) for part in publication["received"].values()) < total:
            return Response(status_code=206)
        publication["data"] = b"".join(publication["received"][offset] for offset in sorted(publication["received"]))
        publication["status"] = "PROCESSING_DOWNLOAD"
        if not publication["inbox"] and self.fail_processing is None:
            self.posts.append({"id": str(next(self.ids)), "publish_id": request.query_params["upload_id"]})
        self.accepted.set()
        if self.hang_after_accepting:
            await self.release.wait()
        return Response(status_code=201)

    async def status(self, request: Request) -> Response:
        refused = self._refused(request)
        if refused is not None:
            return refused
        publish_id = (await request.json())["publish_id"]
        publication = self.publications.get(publish_id)
        if publication is None:
            return answer({}, code="invalid_publish_id", message="publish_id does not exist", status=400)
        uploaded = sum(len(part) for part in publication["received"].values())
        if publication["status"] == "PROCESSING_UPLOAD":
            return answer({"status": "PROCESSING_UPLOAD", "uploaded_bytes": uploaded})
        publication["polls"] += 1
        if self.fail_processing is not None:
            return answer({"status": "FAILED", "fail_reason": self.fail_processing})
        if publication["polls"] < 2:
            return answer({"status": "PROCESSING_DOWNLOAD", "uploaded_bytes": uploaded})
        if publication["inbox"]:
            return answer({"status": "SEND_TO_USER_INBOX"})
        [post] = [post for post in self.posts if post["publish_id"] == publish_id]
        return answer({"status": "PUBLISH_COMPLETE", "publicaly_available_post_id": [int(post["id"])]})

    def app(self) -> Starlette:
        return Starlette(
            routes=[
                Route("/v2/oauth/token/", self.token, methods=["POST"]),
                Route("/v2/user/info/", self.user_info, methods=["GET"]),
                Route("/v2/post/publish/creator_info/query/", self.creator_info, methods=["POST"]),
                Route("/v2/post/publish/video/init/", self.init, methods=["POST"]),
                Route("/v2/post/publish/inbox/video/init/", self.init, methods=["POST"]),
                Route("/upload/", self.upload, methods=["PUT"]),
                Route("/v2/post/publish/status/fetch/", self.status, methods=["POST"]),
            ]
        )
