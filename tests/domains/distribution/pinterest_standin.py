"""A local stand-in of Pinterest's OAuth 2.0 and API v5 on 127.0.0.1: the requests, answers and error cases of
Pinterest's public developer documentation (developers.pinterest.com: the API v5 reference, "Set up
authentication and authorization", "Rate limits") that the `pinterest` connector relies on, each handler naming
the documentation section it follows.
"""

from __future__ import annotations

import asyncio
import base64
import itertools
import time
from dataclasses import dataclass, field
from datetime import UTC, date, datetime, timedelta
from typing import Any

from starlette.applications import Starlette
from starlette.datastructures import UploadFile
from starlette.requests import Request
from starlette.responses import JSONResponse, Response
from starlette.routing import Route

from toolhost.platform.dates import iso


def error(status: int, code: int, message: str) -> JSONResponse:
    """API v5 reference, Error: {"code", "message"}."""
    return JSONResponse({"code": code, "message": message}, status_code=status)


@dataclass
class PinterestStandIn:
    """Records what it receives; switches let a test provoke each documented error case."""

    client_id: str = "1500000"
    client_secret: str = "pinterest-app-secret"
    username: str = "alicepins"
    user_id: str = "2783136121146311751"
    boards: list[dict[str, str]] = field(default_factory=lambda: [{"id": "549755885175", "name": "Recipes"}])
    base: str = ""
    redirect_uri: str = ""
    codes: dict[str, str] = field(default_factory=dict)
    access_tokens: dict[str, float] = field(default_factory=dict)
    refresh_tokens: set[str] = field(default_factory=set)
    token_requests: list[dict[str, str]] = field(default_factory=list)
    pins: dict[str, dict[str, Any]] = field(default_factory=dict)
    create_requests: int = 0
    media: dict[str, dict[str, Any]] = field(default_factory=dict)
    analytics_queries: list[dict[str, str]] = field(default_factory=list)
    # Switches
    retry_after: int | None = None
    spam: bool = False
    fail_processing: bool = False
    # While set to an unset event, a question about a processing video waits for it (processing_asked is set).
    hold_processing: asyncio.Event | None = None
    processing_asked: asyncio.Event = field(default_factory=asyncio.Event)
    accepted: asyncio.Event = field(default_factory=asyncio.Event)
    hang_after_accepting: bool = False
    release: asyncio.Event = field(default_factory=asyncio.Event)
    ids: itertools.count[int] = field(default_factory=lambda: itertools.count(1_024_000_000_000_000_001))

    # --- "Set up authentication and authorization", "Generate OAuth access token" --------------------------

    def approve(self, authorize_query: dict[str, str]) -> str:
        """What Pinterest's consent page does when the person agrees: a code for this app and redirect URI."""
        assert authorize_query["response_type"] == "code"
        assert authorize_query["client_id"] == self.client_id
        code = f"code-{len(self.codes) + 1}"
        self.redirect_uri = authorize_query["redirect_uri"]
        self.codes[code] = authorize_query["scope"]
        return code

    def issue(self, *, lifetime: int = 2_592_000) -> dict[str, Any]:
        """A token reply: access tokens live 30 days, the continuous refresh token 60 (renewed by each refresh)."""
        access, refresh = f"pina_{next(self.ids)}", f"pinr_{next(self.ids)}"
        self.access_tokens[access] = time.time() + lifetime
        self.refresh_tokens.add(refresh)
        return {
            "access_token": access,
            "token_type": "bearer",
            "expires_in": lifetime,
            "scope": "boards:read,boards:write,pins:read,pins:write,user_accounts:read",
            "refresh_token": refresh,
            "refresh_token_expires_in": 5_184_000,
            "refresh_token_expires_at": int(time.time()) + 5_184_000,
        }

    def revoke_everything(self) -> None:
        """The person disconnected the app in their Pinterest settings."""
        self.access_tokens.clear()
        self.refresh_tokens.clear()

    async def token(self, request: Request) -> Response:
        # "Generate OAuth access token": HTTP Basic with the app id and secret; a form body.
        expected = base64.b64encode(f"{self.client_id}:{self.client_secret}".encode()).decode()
        if request.headers.get("authorization") != f"Basic {expected}":
            return error(401, 2, "Authentication failed.")
        async with request.form() as form:
            fields = {name: str(value) for name, value in form.items()}
        self.token_requests.append(fields)
        if fields.get("grant_type") == "authorization_code":
            scope = self.codes.pop(fields.get("code", ""), None)
            if scope is None or fields.get("redirect_uri") != self.redirect_uri:
                return error(400, 1, "Invalid authorization code or redirect_uri.")
            return JSONResponse({**self.issue(), "response_type": "authorization_code"})
        if fields.get("grant_type") == "refresh_token":
            # The continuous refresh token: each refresh answers a new one and spends the one used.
            if fields.get("refresh_token") not in self.refresh_tokens:
                return error(400, 1, "Invalid refresh token.")
            self.refresh_tokens.discard(fields["refresh_token"])
            return JSONResponse({**self.issue(), "response_type": "refresh_token"})
        return error(400, 1, "Unsupported grant_type.")

    def _refused(self, request: Request) -> Response | None:
        """A revoked or expired token (401, code 2 "Authentication failed."), or a limit ("Rate limits": 429)."""
        token = request.headers.get("authorization", "").removeprefix("Bearer ")
        if self.access_tokens.get(token, 0) <= time.time():
            return error(401, 2, "Authentication failed.")
        if self.retry_after is not None:
            retry_after, self.retry_after = self.retry_after, None
            return JSONResponse(
                {"code": 8, "message": "You have exceeded your rate limit. Try again later."},
                status_code=429,
                headers={"Retry-After": str(retry_after)},
            )
        return None

    # --- "Get user account", "List boards" ----------------------------------------------------------------

    async def user_account(self, request: Request) -> Response:
        refused = self._refused(request)
        if refused is not None:
            return refused
        return JSONResponse(
            {"account_type": "BUSINESS", "id": self.user_id, "username": self.username, "board_count": len(self.boards)}
        )

    async def list_boards(self, request: Request) -> Response:
        refused = self._refused(request)
        if refused is not None:
            return refused
        assert int(request.query_params.get("page_size", "25")) <= 250
        items = [{**board, "privacy": "PUBLIC", "owner": {"username": self.username}} for board in self.boards]
        return JSONResponse({"items": items, "bookmark": None})

    # --- "Create Pin", "List Pins on board" ---------------------------------------------------------------

    def add_pin(self, board_id: str, *, title: str | None, description: str, created_at: datetime) -> dict[str, Any]:
        pin_id = str(next(self.ids))
        pin = {
            "id": pin_id,
            "board_id": board_id,
            "title": title,
            "description": description,
            "created_at": iso(created_at),
            "analytics": {"IMPRESSION": 240, "SAVE": 20, "TOTAL_COMMENTS": 2, "TOTAL_REACTIONS": 12},
        }
        self.pins[pin_id] = pin
        return pin

    async def create_pin(self, request: Request) -> Response:
        refused = self._refused(request)
        if refused is not None:
            return refused
        self.create_requests += 1
        body = await request.json()
        if body.get("board_id") not in {board["id"] for board in self.boards}:
            return error(404, 40, "Board not found.")
        if self.spam:
            # api-quickstart's api_common: a 429 whose message names spam is Pinterest's spam protection.
            return error(429, 8, "Your request was identified as spam and blocked.")
        source = body.get("media_source") or {}
        kind = source.get("source_type")
        if kind == "image_base64":
            images = [source]
        elif kind == "multiple_image_base64":
            images = list(source.get("items") or [])
            if not 2 <= len(images) <= 5:
                return error(400, 1, "Carousel Pins take 2 to 5 images.")
        elif kind == "video_id":
            upload = self.media.get(str(source.get("media_id")))
            if upload is None or upload["status"] != "succeeded":
                return error(400, 1, "The video has not finished processing.")
            images = []
        else:
            return error(400, 1, "Invalid media_source.")
        for image in images:
            if image.get("content_type") not in ("image/jpeg", "image/png"):
                return error(400, 1, "Invalid image content_type.")
            base64.b64decode(image["data"], validate=True)
        for name, limit in (("title", 100), ("description", 800), ("alt_text", 500), ("link", 2048)):
            if len(str(body.get(name) or "")) > limit:
                return error(400, 1, f"{name} is longer than {limit} characters.")
        pin = self.add_pin(
            body["board_id"],
            title=body.get("title"),
            description=body.get("description") or "",
            created_at=datetime.now(UTC),
        )
        pin.update(
            {
                "link": body.get("link"),
                "alt_text": body.get("alt_text"),
                "media_source": source,
                "images": [base64.b64decode(image["data"]) for image in images],
            }
        )
        self.accepted.set()
        if self.hang_after_accepting:
            # The Pin exists, but its answer never reaches the worker (which is killed meanwhile).
            await self.release.wait()
        answer = {name: pin[name] for name in ("id", "board_id", "title", "description", "created_at", "link")}
        return JSONResponse(answer, status_code=201)

    async def board_pins(self, request: Request) -> Response:
        refused = self._refused(request)
        if refused is not None:
            return refused
        board_id = request.path_params["board_id"]
        if board_id not in {board["id"] for board in self.boards}:
            return error(404, 40, "Board not found.")
        size = int(request.query_params.get("page_size", "25"))
        assert size <= 250
        start = int(request.query_params.get("bookmark") or 0)
        found = sorted(
            (pin for pin in self.pins.values() if pin["board_id"] == board_id),
            key=lambda pin: str(pin["created_at"]),
            reverse=True,
        )
        page = [
            {name: pin[name] for name in ("id", "board_id", "title", "description", "created_at")}
            for pin in found[start : start + size]
        ]
        bookmark = str(start + size) if start + size < len(found) else None
        return JSONResponse({"items": page, "bookmark": bookmark})

    # --- "Register media upload", the upload form, "Get media upload details" ----------------------------------

    async def register_media(self, request: Request) -> Response:
        refused = self._refused(request)
        if refused is not None:
            return refused
        if (await request.json()).get("media_type") != "video":
            return error(400, 1, "media_type must be video.")
        media_id = str(next(self.ids))
        key = f"uploads/aa/bb/{media_id}:video"
        self.media[media_id] = {"status": "registered", "key": key, "polls": 0, "data": b""}
        parameters = {
            "x-amz-date": "20260127T185143Z",
            "x-amz-signature": "fcd6309a6aaee213348666a72abed8b4",
            "x-amz-security-token": "IQoJb3JpZ2luX2VjEJr",
            "x-amz-algorithm": "AWS4-HMAC-SHA256",
            "key": key,
            "policy": "eyJleHBpcmF0aW9uIjoiMj",
            "x-amz-credential": "ASIA6QZJ64OPIKV7FRVX/20260127/us-east-1/s3/aws4_request",
            "Content-Type": "multipart/form-data",
        }
        return JSONResponse(
            {
                "media_id": media_id,
                "media_type": "video",
                "upload_url": f"{self.base}/media-upload/",
                "upload_parameters": parameters,
            },
            status_code=201,
        )

    async def upload_form(self, request: Request) -> Response:
        """The upload URL: a storage form POST carrying every upload parameter, then the file; 204 when stored."""
        async with request.form() as form:
            key = str(form.get("key"))
            upload = next((item for item in self.media.values() if item["key"] == key), None)
            file = form.get("file")
            if upload is None or not isinstance(file, UploadFile) or not form.get("policy"):
                return Response(status_code=403)
            upload["data"] = await file.read()
        upload["status"] = "processing"
        return Response(status_code=204)

    async def media_details(self, request: Request) -> Response:
        refused = self._refused(request)
        if refused is not None:
            return refused
        upload = self.media.get(request.path_params["media_id"])
        if upload is None:
            return error(404, 404, "Media not found.")
        if upload["status"] == "processing" and self.hold_processing is not None:
            self.processing_asked.set()
            await self.hold_processing.wait()
        if upload["status"] == "processing":
            upload["polls"] += 1
            if self.fail_processing:
                upload["status"] = "failed"
            elif upload["polls"] >= 2:
                upload["status"] = "succeeded"
        return JSONResponse(
            {"media_id": request.path_params["media_id"], "media_type": "video", "status": upload["status"]}
        )

    # --- "Get Pin analytics" ----------------------------------------------------------------------------------

    async def pin_analytics(self, request: Request) -> Response:
        refused = self._refused(request)
        if refused is not None:
            return refused
        query = dict(request.query_params)
        self.analytics_queries.append(query)
        pin = self.pins.get(request.path_params["pin_id"])
        if pin is None:
            return error(404, 404, "Pin not found.")
        start, end = date.fromisoformat(query["start_date"]), date.fromisoformat(query["end_date"])
        if start < datetime.now(UTC).date() - timedelta(days=90) or end < start:
            return error(400, 400, "Invalid pins analytics parameters.")
        wanted = query["metric_types"].split(",")
        lifetime = {name: pin["analytics"][name] for name in ("TOTAL_COMMENTS", "TOTAL_REACTIONS") if name in wanted}
        summary = {name: pin["analytics"][name] for name in ("IMPRESSION", "SAVE") if name in wanted}
        return JSONResponse({"all": {"daily_metrics": [], "lifetime_metrics": lifetime, "summary_metrics": summary}})

    def app(self) -> Starlette:
        return Starlette(
            routes=[
                Route("/v5/oauth/token", self.token, methods=["POST"]),
                Route("/v5/user_account", self.user_account, methods=["GET"]),
                Route("/v5/boards", self.list_boards, methods=["GET"]),
                Route("/v5/boards/{board_id}/pins", self.board_pins, methods=["GET"]),
                Route("/v5/pins", self.create_pin, methods=["POST"]),
                Route("/v5/pins/{pin_id}/analytics", self.pin_analytics, methods=["GET"]),
                Route("/v5/media", self.register_media, methods=["POST"]),
                Route("/v5/media/{media_id}", self.media_details, methods=["GET"]),
                Route("/media-upload/", self.upload_form, methods=["POST"]),
            ]
        )
