"""A local stand-in of LinkedIn's OAuth 2.0 and Community Management APIs on 127.0.0.1: the requests, answers
and error cases of LinkedIn's public documentation (Microsoft Learn, "LinkedIn Marketing > Community
Management") that the `linkedin` connector relies on, each handler naming the documentation section it follows.
"""

from __future__ import annotations

import asyncio
import itertools
import time
from dataclasses import dataclass, field
from typing import Any
from urllib.parse import unquote

from starlette.applications import Starlette
from starlette.requests import Request
from starlette.responses import JSONResponse, Response
from starlette.routing import Route

VERSION = "202510"


def error(status: int, message: str, code: str | None = None) -> JSONResponse:
    """ "Error Handling": {"message", "status"} and, for token errors, a "code"."""
    body: dict[str, Any] = {"message": message, "status": status}
    if code is not None:
        body["code"] = code
    return JSONResponse(body, status_code=status)


def duplicate(urn: str) -> JSONResponse:
    """Content that repeats the author's recent post: LinkedIn's documentation does not show this answer; it is the
    one developers report (github.com/Arisamiga/Linkedin-RSS/issues/5), naming the earlier post. How long LinkedIn
    remembers a post is not documented either; an hour here."""
    return JSONResponse(
        {
            "errorDetailType": "com.linkedin.common.error.BadRequest",
            "message": "com.linkedin.content.common.exception.BadRequestResponseException: "
            f"Content is a duplicate of {urn}",
            "errorDetails": {
                "inputErrors": [{"description": "Duplicate post is detected", "input": {}, "code": "DUPLICATE_POST"}]
            },
            "status": 422,
        },
        status_code=422,
    )


@dataclass
class LinkedInStandIn:
    """Records what it receives; switches let a test provoke each documented error case."""

    client_id: str = "li-client-id"
    client_secret: str = "li-client-secret"
    member_id: str = "yrZCpj2Z12"
    name: str = "Alice Example"
    administered: list[str] = field(default_factory=lambda: ["urn:li:organization:2414183"])
    base: str = ""
    redirect_uri: str = ""
    codes: dict[str, str] = field(default_factory=dict)
    access_tokens: dict[str, float] = field(default_factory=dict)
    # "Refresh Tokens with OAuth 2.0": only approved partners' apps receive refresh tokens.
    issue_refresh_tokens: bool = False
    refresh_tokens: set[str] = field(default_factory=set)
    token_requests: list[dict[str, str]] = field(default_factory=list)
    headers_seen: list[dict[str, str]] = field(default_factory=list)
    posts: dict[str, dict[str, Any]] = field(default_factory=dict)
    create_requests: int = 0
    images: dict[str, dict[str, Any]] = field(default_factory=dict)
    videos: dict[str, dict[str, Any]] = field(default_factory=dict)
    # Switches
    rate_limit_retry_after: int | None = None
    fail_processing: bool = False
    refuse_reading_posts: bool = False
    accepted: asyncio.Event = field(default_factory=asyncio.Event)
    hang_after_accepting: bool = False
    release: asyncio.Event = field(default_factory=asyncio.Event)
    ids: itertools.count[int] = field(default_factory=lambda: itertools.count(7_100_000_000_000_000_001))

    # --- "Authorization Code Flow (3-legged OAuth)" ------------------------------------------------------

    def approve(self, authorize_query: dict[str, str]) -> str:
        """What LinkedIn's consent page does when the member agrees: a code for this app and redirect URI."""
        assert authorize_query["response_type"] == "code"
        assert authorize_query["client_id"] == self.client_id
        code = f"code-{len(self.codes) + 1}"
        self.redirect_uri = authorize_query["redirect_uri"]
        self.codes[code] = authorize_query["scope"]
        return code

    def issue(self) -> dict[str, Any]:
        """A token reply: access tokens live 60 days; a refresh token only for apps LinkedIn enabled it for."""
        access = f"access-{next(self.ids)}"
        self.access_tokens[access] = time.time() + 5_184_000
        reply: dict[str, Any] = {"access_token": access, "expires_in": 5_184_000, "scope": "openid,profile"}
        if self.issue_refresh_tokens:
            refresh = f"refresh-{next(self.ids)}"
            self.refresh_tokens.add(refresh)
            reply |= {"refresh_token": refresh, "refresh_token_expires_in": 31_536_000}
        return reply

    def revoke_everything(self) -> None:
        """The member removed the app in their LinkedIn settings ("Permitted services")."""
        self.access_tokens.clear()
        self.refresh_tokens.clear()

    async def token(self, request: Request) -> Response:
        # The app authenticates with client_id and client_secret in the form body (no HTTP Basic).
        async with request.form() as form:
            fields = {name: str(value) for name, value in form.items()}
        self.token_requests.append(fields)
        if (fields.get("client_id"), fields.get("client_secret")) != (self.client_id, self.client_secret):
            return JSONResponse({"error": "invalid_client"}, status_code=401)
        if fields.get("grant_type") == "authorization_code":
            scope = self.codes.pop(fields.get("code", ""), None)
            if scope is None or fields.get("redirect_uri") != self.redirect_uri:
                return JSONResponse({"error": "invalid_request"}, status_code=400)
            return JSONResponse(self.issue())
        if fields.get("grant_type") == "refresh_token":
            if fields.get("refresh_token") not in self.refresh_tokens:
                return JSONResponse({"error": "invalid_request"}, status_code=400)
            return JSONResponse(self.issue())
        return JSONResponse({"error": "unsupported_grant_type"}, status_code=400)

    def _refused(self, request: Request, *, rest: bool = True) -> Response | None:
        """A revoked or expired token (401, "Error Handling"), a missing version header ("Versioning"), or a
        throttle ("Rate Limits": 429; daily quotas reset at midnight UTC)."""
        token = request.headers.get("authorization", "").removeprefix("Bearer ")
        if self.access_tokens.get(token, 0) <= time.time():
            return error(401, "The token used in the request has been revoked by the user", "REVOKED_ACCESS_TOKEN")
        if rest:
            self.headers_seen.append(dict(request.headers))
            if request.headers.get("linkedin-version") != VERSION:
                return error(426, "Requested version is not active")
            if request.headers.get("x-restli-protocol-version") != "2.0.0":
                return error(400, "The X-Restli-Protocol-Version header is required")
        if self.rate_limit_retry_after is not None:
            retry_after, self.rate_limit_retry_after = self.rate_limit_retry_after, None
            return JSONResponse(
                {
                    "message": "Resource level throttle APPLICATION DAY limit for calls to this resource is reached.",
                    "status": 429,
                },
                status_code=429,
                headers={"Retry-After": str(retry_after)},
            )
        return None

    # --- "Sign In with LinkedIn using OpenID Connect" and "Organization Access Control by Role" -------------

    async def userinfo(self, request: Request) -> Response:
        refused = self._refused(request, rest=False)
        if refused is not None:
            return refused
        return JSONResponse({"sub": self.member_id, "name": self.name, "given_name": "Alice", "locale": "en-US"})

    async def organization_acls(self, request: Request) -> Response:
        refused = self._refused(request)
        if refused is not None:
            return refused
        query = request.query_params
        assert (query["q"], query["role"], query["state"]) == ("roleAssignee", "ADMINISTRATOR", "APPROVED")
        elements = [
            {
                "roleAssignee": f"urn:li:person:{self.member_id}",
                "state": "APPROVED",
                "role": "ADMINISTRATOR",
                "organization": urn,
            }
            for urn in self.administered
        ]
        return JSONResponse({"paging": {"count": 10, "start": 0}, "elements": elements})

    # --- "Posts API": Create a Post, Find Posts by Authors ---------------------------------------------------

    def add_post(self, author: str, commentary: str, *, created_at: float | None = None) -> dict[str, Any]:
        urn = f"urn:li:share:{next(self.ids)}"
        moment = int((created_at or time.time()) * 1000)
        post = {
            "id": urn,
            "author": author,
            "commentary": commentary,
            "createdAt": moment,
            "publishedAt": moment,
            "lastModifiedAt": moment,
            "lifecycleState": "PUBLISHED",
            "visibility": "PUBLIC",
            "reactions": {"LIKE": 4, "PRAISE": 2},
            "comments": 3,
        }
        self.posts[urn] = post
        return post

    async def create_post(self, request: Request) -> Response:
        refused = self._refused(request)
        if refused is not None:
            return refused
        self.create_requests += 1
        body = await request.json()
        author = str(body.get("author", ""))
        if author not in (f"urn:li:person:{self.member_id}", *self.administered):
            return error(403, f"Not enough permissions to post as {author}")
        for name in ("commentary", "visibility", "distribution", "lifecycleState"):
            if name not in body:
                return error(422, f"/{name} is a required field")
        text = str(body["commentary"])
        recent = (time.time() - 3600) * 1000
        for post in self.posts.values():
            if post["author"] == author and post["commentary"] == text and post["createdAt"] > recent:
                return duplicate(post["id"])
        content = body.get("content") or {}
        media = [content["media"]["id"]] if "media" in content else []
        media += [image["id"] for image in (content.get("multiImage") or {}).get("images") or []]
        for urn in media:
            stored = self.images.get(urn) or self.videos.get(urn)
            if stored is None or stored["status"] != "AVAILABLE":
                return error(400, f"Media {urn} is not available")
        if "multiImage" in content and not 2 <= len(media) <= 20:
            return error(422, "MultiImage takes 2 to 20 images")
        post = self.add_post(author, text)
        post["content"] = content
        self.accepted.set()
        if self.hang_after_accepting:
            # The post is out, but its answer never reaches the worker (which is killed meanwhile).
            await self.release.wait()
        return Response(status_code=201, headers={"x-restli-id": post["id"], "x-linkedin-id": post["id"]})

    async def find_posts(self, request: Request) -> Response:
        refused = self._refused(request)
        if refused is not None:
            return refused
        query = request.query_params
        assert query["q"] == "author"
        if self.refuse_reading_posts:
            # r_member_social is granted only to approved partners.
            return error(403, "Not enough permissions to access: partnerApiPostsExternal.FINDER-author.20251001")
        author = unquote(query["author"])
        count, start = int(query.get("count", "10")), int(query.get("start", "0"))
        assert count <= 100
        key = "createdAt" if query.get("sortBy") == "CREATED" else "lastModifiedAt"
        found = sorted((post for post in self.posts.values() if post["author"] == author), key=lambda p: -p[key])
        page = [
            {name: post[name] for name in ("id", "author", "commentary", "createdAt", "publishedAt", "lifecycleState")}
            for post in found[start : start + count]
        ]
        return JSONResponse({"paging": {"start": start, "count": count, "total": len(found)}, "elements": page})

    # --- "Images API": initializeUpload, upload -------------------------------------------------------------

    async def initialize_image(self, request: Request) -> Response:
        refused = self._refused(request)
        if refused is not None:
            return refused
        assert request.query_params["action"] == "initializeUpload"
        owner = (await request.json())["initializeUploadRequest"]["owner"]
        urn = f"urn:li:image:C4E10AQ{next(self.ids)}"
        self.images[urn] = {"owner": owner, "status": "WAITING_UPLOAD", "data": b""}
        return JSONResponse(
            {
                "value": {
                    "uploadUrlExpiresAt": int(time.time() * 1000) + 86_400_000,
                    "uploadUrl": f"{self.base}/dms-uploads/image/{urn}",
                    "image": urn,
                }
            }
        )

    async def upload_image(self, request: Request) -> Response:
        refused = self._refused(request, rest=False)
        if refused is not None:
            return refused
        image = self.images[request.path_params["urn"]]
        image["data"], image["status"] = await request.body(), "AVAILABLE"
        return Response(status_code=201)

    # --- "Videos API": initializeUpload, part uploads, finalizeUpload, get status ---------------------------

    async def videos_action(self, request: Request) -> Response:
        refused = self._refused(request)
        if refused is not None:
            return refused
        body = await request.json()
        if request.query_params["action"] == "initializeUpload":
            spec = body["initializeUploadRequest"]
            size = int(spec["fileSizeBytes"])
            urn = f"urn:li:video:C5F10AQ{next(self.ids)}"
            part = 4_194_304
            instructions = [
                {
                    "uploadUrl": f"{self.base}/dms-uploads/video/{urn}/{index}",
                    "firstByte": first,
                    "lastByte": min(first + part, size) - 1,
                }
                for index, first in enumerate(range(0, size, part))
            ]
            self.videos[urn] = {
                "owner": spec["owner"],
                "size": size,
                "status": "WAITING_UPLOAD",
                "parts": {},
                "polls": 0,
            }
            return JSONResponse(
                {
                    "value": {
                        "uploadUrlsExpireAt": int(time.time() * 1000) + 86_400_000,
                        "video": urn,
                        "uploadInstructions": instructions,
                        "uploadToken": "",
                    }
                }
            )
        assert request.query_params["action"] == "finalizeUpload"
        spec = body["finalizeUploadRequest"]
        video = self.videos[spec["video"]]
        parts = [video["parts"][index] for index in sorted(video["parts"])]
        if [etag for etag, _ in parts] != spec["uploadedPartIds"]:
            return error(400, "uploadedPartIds do not match the uploaded parts")
        video["data"] = b"".join(data for _, data in parts)
        if len(video["data"]) != video["size"]:
            return error(400, "the parts do not add up to fileSizeBytes")
        video["status"] = "PROCESSING"
        return Response(status_code=200)

    async def upload_video_part(self, request: Request) -> Response:
        # Pre-signed part URLs: no bearer token needed.
        video = self.videos[request.path_params["urn"]]
        index = int(request.path_params["index"])
        etag = f"/ambry-video/signedUrl/part-{index}-{next(self.ids)}"
        video["parts"][index] = (etag, await request.body())
        return Response(status_code=200, headers={"ETag": etag})

    async def get_video(self, request: Request) -> Response:
        refused = self._refused(request)
        if refused is not None:
            return refused
        video = self.videos[unquote(request.path_params["urn"])]
        video["polls"] += 1
        if self.fail_processing:
            video["status"] = "PROCESSING_FAILED"
            return JSONResponse(
                {
                    "id": request.path_params["urn"],
                    "status": "PROCESSING_FAILED",
                    "processingFailureReason": "Video codec is not supported",
                }
            )
        if video["polls"] >= 2:
            video["status"] = "AVAILABLE"
        return JSONResponse({"id": request.path_params["urn"], "status": video["status"]})

    # --- "Social Metadata API" -------------------------------------------------------------------------------

    async def social_metadata(self, request: Request) -> Response:
        refused = self._refused(request)
        if refused is not None:
            return refused
        post = self.posts.get(unquote(request.path_params["urn"]))
        if post is None:
            return error(404, "Not found")
        return JSONResponse(
            {
                "entity": post["id"],
                "reactionSummaries": {
                    kind: {"reactionType": kind, "count": count} for kind, count in post["reactions"].items()
                },
                "commentSummary": {"count": post["comments"], "topLevelCount": post["comments"]},
                "commentsState": "OPEN",
            }
        )

    def app(self) -> Starlette:
        return Starlette(
            routes=[
                Route("/oauth/v2/accessToken", self.token, methods=["POST"]),
                Route("/v2/userinfo", self.userinfo, methods=["GET"]),
                Route("/rest/organizationAcls", self.organization_acls, methods=["GET"]),
                Route("/rest/posts", self.create_post, methods=["POST"]),
                Route("/rest/posts", self.find_posts, methods=["GET"]),
                Route("/rest/images", self.initialize_image, methods=["POST"]),
                Route("/dms-uploads/image/{urn}", self.upload_image, methods=["PUT"]),
                Route("/rest/videos", self.videos_action, methods=["POST"]),
                Route("/dms-uploads/video/{urn}/{index}", self.upload_video_part, methods=["PUT"]),
                Route("/rest/videos/{urn}", self.get_video, methods=["GET"]),
                Route("/rest/socialMetadata/{urn}", self.social_metadata, methods=["GET"]),
            ]
        )
