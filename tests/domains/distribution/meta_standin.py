"""Local stand-ins of Meta's APIs on 127.0.0.1: the Graph API as Instagram (with Facebook Login) and Facebook Pages
use it, and the Threads API. They serve the requests, answers and error cases of Meta's public documentation that
the `instagram`, `facebook` and `threads` connectors rely on, each handler naming the documentation section it
follows; switches let a test provoke each documented error case.
"""

from __future__ import annotations

import asyncio
import hashlib
import hmac
import itertools
import json
import time
from dataclasses import dataclass, field
from datetime import UTC, datetime, timedelta
from typing import Any

from starlette.applications import Starlette
from starlette.requests import Request
from starlette.responses import JSONResponse, Response
from starlette.routing import Route

LONG_LIVED_SECONDS = 5_183_944  # "Long-Lived Access Tokens": about 60 days


def meta_error(
    status: int,
    code: int,
    message: str,
    *,
    subcode: int | None = None,
    headers: dict[str, str] | None = None,
    transient: bool = False,
) -> JSONResponse:
    """Graph API "Handling Errors": the error object every Meta API answers with."""
    error: dict[str, Any] = {"message": message, "type": "OAuthException", "code": code, "fbtrace_id": "AbCdEf"}
    if subcode is not None:
        error["error_subcode"] = subcode
    if transient:
        error["is_transient"] = True
    return JSONResponse({"error": error}, status_code=status, headers=headers)


def timestamp(moment: datetime | None = None) -> str:
    """Meta's timestamps: ISO 8601 with a `+0000` offset."""
    return (moment or datetime.now(UTC)).strftime("%Y-%m-%dT%H:%M:%S+0000")


@dataclass
class RateLimit:
    """The next request is refused for a rate limit: the error code, and Meta's estimate in minutes (None: the
    answer carries only X-App-Usage, no estimate)."""

    code: int = 4
    minutes: int | None = None


@dataclass
class MetaStandIn:
    """What the Meta stand-ins share: the app, its tokens, the switches, the objects made so far."""

    client_id: str = "meta-app-id"
    client_secret: str = "meta-app-secret"
    redirect_uri: str = ""
    codes: dict[str, str] = field(default_factory=dict)
    # token -> {"kind": ..., "expires": epoch seconds, "issued": epoch seconds}
    tokens: dict[str, dict[str, Any]] = field(default_factory=dict)
    token_requests: list[dict[str, str]] = field(default_factory=list)
    exchanges: int = 0
    objects: dict[str, dict[str, Any]] = field(default_factory=dict)
    publish_requests: int = 0
    # Switches
    rate_limit: RateLimit | None = None
    fail_processing: bool = False
    processing_polls: int = 2
    quota_total: int = 100
    accepted: asyncio.Event = field(default_factory=asyncio.Event)
    hang_after_accepting: bool = False
    release: asyncio.Event = field(default_factory=asyncio.Event)
    ids: itertools.count[int] = field(default_factory=lambda: itertools.count(17_900_000_000_000_001))
    checks_app_secret_proof: bool = True

    def new_id(self) -> str:
        return str(next(self.ids))

    def approve(self, authorize_query: dict[str, str]) -> str:
        """What the consent dialog does when the person agrees: a code for this app and redirect URI."""
        assert authorize_query["response_type"] == "code"
        assert authorize_query["client_id"] == self.client_id
        assert "code_challenge" not in authorize_query, "Meta's dialogs are not documented to take PKCE"
        code = f"code-{len(self.codes) + 1}"
        self.redirect_uri = authorize_query["redirect_uri"]
        self.codes[code] = authorize_query["scope"]
        return code

    def issue(self, kind: str, lifetime: float) -> str:
        token = f"{kind}-{self.new_id()}"
        self.tokens[token] = {"kind": kind, "expires": time.time() + lifetime, "issued": time.time()}
        return token

    def expire_everything(self) -> None:
        """Every token Meta issued stops working (the person changed their password or removed the app)."""
        for token in self.tokens.values():
            token["expires"] = 0

    async def params(self, request: Request) -> dict[str, str]:
        values = dict(request.query_params)
        if request.method == "POST":
            async with request.form() as form:
                values.update({name: str(value) for name, value in form.items()})
        return values

    def refused_token(self, values: dict[str, str], kinds: tuple[str, ...]) -> Response | None:
        """Graph API "Handling Errors", code 190: a token that is unknown, expired or of the wrong kind;
        "Securing Requests": a wrong appsecret_proof is refused too."""
        token = values.get("access_token", "")
        known = self.tokens.get(token)
        if known is None or known["expires"] <= time.time():
            return meta_error(400, 190, "Error validating access token: Session has expired.", subcode=463)
        if known["kind"] not in kinds:
            return meta_error(400, 190, f"This endpoint requires a {' or '.join(kinds)} access token.")
        if self.checks_app_secret_proof:
            proof = hmac.new(self.client_secret.encode(), token.encode(), hashlib.sha256).hexdigest()
            if values.get("appsecret_proof") != proof:
                return meta_error(400, 100, "Invalid appsecret_proof provided in the API argument")
        return None

    def limited(self, business_id: str) -> Response | None:
        """Graph API "Rate Limits": code 4 (app), 17 (user), 32 (Page) or 80002 (Instagram BUC) with X-App-Usage,
        and X-Business-Use-Case-Usage naming estimated_time_to_regain_access in minutes when Meta estimates it."""
        if self.rate_limit is None:
            return None
        limit, self.rate_limit = self.rate_limit, None
        headers = {"X-App-Usage": json.dumps({"call_count": 100, "total_cputime": 12, "total_time": 20})}
        if limit.minutes is not None:
            usage = {
                "type": "instagram",
                "call_count": 100,
                "total_cputime": 10,
                "total_time": 10,
                "estimated_time_to_regain_access": limit.minutes,
            }
            headers["X-Business-Use-Case-Usage"] = json.dumps({business_id: [usage]})
        return meta_error(400, limit.code, "Application request limit reached", headers=headers, transient=True)

    async def accept(self) -> None:
        """The platform has published; when a test says so, its answer never reaches the worker."""
        self.accepted.set()
        if self.hang_after_accepting:
            await self.release.wait()

    def container(self, values: dict[str, str], owner: str, *, video_polls: int) -> dict[str, Any]:
        """A media container: processed (IN_PROGRESS) for `processing_polls` status reads when it holds a video."""
        container_id = self.new_id()
        container: dict[str, Any] = {
            "type": "container",
            "owner": owner,
            "id": container_id,
            "values": values,
            "state": "IN_PROGRESS" if video_polls else "FINISHED",
            "polls_left": video_polls,
            "created": time.time(),
        }
        self.objects[container_id] = container
        return container

    def advance(self, container: dict[str, Any]) -> None:
        """One status read: a container being processed finishes (or fails, when a test says so)."""
        if container["state"] != "IN_PROGRESS":
            return
        container["polls_left"] -= 1
        if self.fail_processing:
            container["state"] = "ERROR"
        elif container["polls_left"] <= 0:
            container["state"] = "FINISHED"

    def published_since(self, owner: str, kind: str, since: str | None) -> list[dict[str, Any]]:
        oldest = int(since) if since else 0
        found = [
            item
            for item in self.objects.values()
            if item["type"] == kind and item.get("owner") == owner and item["created"] >= oldest
        ]
        return sorted(found, key=lambda item: item["created"], reverse=True)

    def backdate(self, item: dict[str, Any], hours: float) -> None:
        moment = datetime.now(UTC) - timedelta(hours=hours)
        item["created"] = moment.timestamp()
        item["timestamp"] = timestamp(moment)


@dataclass
class GraphStandIn(MetaStandIn):
    """Graph API: Facebook Login's token endpoints, a Page, and the Instagram professional account linked to it."""

    user_id: str = "10150000000000001"
    page_id: str = "1200000000000001"
    page_name: str = "Brand Page"
    ig_user_id: str = "17841400000000001"
    ig_username: str = "brand"
    pages_granted: int = 1

    # --- Facebook Login: "Manually Build a Login Flow", "Long-Lived Access Tokens" -------------------------

    async def token(self, request: Request) -> Response:
        values = await self.params(request)
        self.token_requests.append(values)
        if values.get("client_id") != self.client_id or values.get("client_secret") != self.client_secret:
            return meta_error(400, 1, "Error validating client secret.")
        if request.method == "POST":
            # Exchanging code for an access token: client_id, redirect_uri, client_secret, code.
            if self.codes.pop(values.get("code", ""), None) is None or values.get("redirect_uri") != self.redirect_uri:
                return meta_error(400, 100, "Invalid verification code format.")
            return JSONResponse({"access_token": self.issue("short", 3600), "token_type": "bearer", "expires_in": 3600})
        # GET oauth/access_token?grant_type=fb_exchange_token: a valid user token for a long-lived one.
        if values.get("grant_type") != "fb_exchange_token":
            return meta_error(400, 100, "Unsupported grant_type")
        known = self.tokens.get(values.get("fb_exchange_token", ""))
        if known is None or known["expires"] <= time.time() or known["kind"] not in ("short", "user"):
            return meta_error(400, 190, "Error validating access token: Session has expired.", subcode=463)
        self.exchanges += 1
        long_lived = self.issue("user", LONG_LIVED_SECONDS)
        return JSONResponse({"access_token": long_lived, "token_type": "bearer", "expires_in": LONG_LIVED_SECONDS})

    async def accounts(self, request: Request) -> Response:
        """Graph API reference "User Accounts": the Pages granted, with a Page token that does not expire when
        the user token is long-lived ("Get a long-lived Page access token")."""
        values = await self.params(request)
        refused = self.refused_token(values, ("user",))
        if refused is not None:
            return refused
        pages = []
        for number in range(self.pages_granted):
            page_token = self.issue("page", 10**9)
            page = {
                "id": self.page_id if number == 0 else f"{self.page_id}{number}",
                "name": self.page_name if number == 0 else f"Other Page {number}",
                "access_token": page_token,
                "tasks": ["ANALYZE", "ADVERTISE", "MODERATE", "CREATE_CONTENT", "MANAGE"],
                "instagram_business_account": {"id": self.ig_user_id, "username": self.ig_username},
            }
            pages.append(page)
        return JSONResponse({"data": pages, "paging": {"cursors": {"before": "b", "after": "a"}}})

    # --- one route for nodes and one for edges, dispatched by what the node is ---------------------------

    async def node(self, request: Request) -> Response:
        values = await self.params(request)
        node = request.path_params["node"]
        item = self.objects.get(node)
        kinds = ("page",) if item is not None and item.get("owner") == self.page_id else ("user",)
        refused = self.refused_token(values, kinds) or self.limited(self.ig_user_id)
        if refused is not None:
            return refused
        if item is None:
            return meta_error(400, 100, f"Unsupported get request. Object with ID '{node}' does not exist")
        if item["type"] == "container":
            # Reference "IG Container": status_code EXPIRED, ERROR, FINISHED, IN_PROGRESS or PUBLISHED; status
            # holds the error when status_code is ERROR.
            self.advance(item)
            answer = {"id": node, "status_code": item["state"]}
            if item["state"] == "ERROR":
                answer["status"] = "Error: Media upload has failed with error code 2207026"
            return JSONResponse(answer)
        if item["type"] == "comment":
            if request.method == "DELETE":
                del self.objects[node]
                return JSONResponse({"success": True})
            item["hidden"] = values.get("hide", values.get("is_hidden")) == "true"
            return JSONResponse({"success": True})
        if item["type"] == "ig_media":
            return JSONResponse({"id": node, "permalink": item["permalink"]})
        return JSONResponse(self.post_fields(item))

    async def edge(self, request: Request) -> Response:
        values = await self.params(request)
        node, edge = request.path_params["node"], request.path_params["edge"]
        page_edge = node == self.page_id or self.objects.get(node, {}).get("owner") == self.page_id
        refused = self.refused_token(values, ("page",) if page_edge else ("user",))
        refused = refused or self.limited(self.page_id if page_edge else self.ig_user_id)
        if refused is not None:
            return refused
        handler = {
            (self.ig_user_id, "media", "POST"): self.create_container,
            (self.ig_user_id, "media", "GET"): self.list_media,
            (self.ig_user_id, "media_publish", "POST"): self.media_publish,
            (self.ig_user_id, "content_publishing_limit", "GET"): self.publishing_limit,
            (self.page_id, "feed", "POST"): self.feed,
            (self.page_id, "photos", "POST"): self.photos,
            (self.page_id, "videos", "POST"): self.videos,
            (self.page_id, "posts", "GET"): self.list_posts,
            (self.page_id, "videos", "GET"): self.list_posts,
        }.get((node, edge, request.method))
        if handler is not None:
            return await handler(values, edge)
        item = self.objects.get(node)
        if item is None:
            return meta_error(400, 100, f"Object with ID '{node}' does not exist")
        if edge == "insights":
            return self.insights(item, values)
        if edge in ("comments", "replies") and request.method == "POST":
            return self.add_comment(item, values)
        if edge == "comments":
            return self.list_comments(item)
        return meta_error(400, 100, f"Unknown path components: /{edge}")

    # --- Instagram: "Content Publishing", reference "IG User Media", "IG User Media Publish" ---------------

    async def create_container(self, values: dict[str, str], edge: str) -> Response:
        """POST /{ig-user-id}/media: image_url (JPEG), or media_type REELS or VIDEO (carousel item) with
        video_url, or media_type CAROUSEL with 2 to 10 children containers of this account."""
        media_type = values.get("media_type", "IMAGE")
        if media_type == "CAROUSEL":
            children = [child for child in values.get("children", "").split(",") if child]
            if not 2 <= len(children) <= 10:
                return meta_error(400, 100, "The carousel must have between 2 and 10 children", subcode=2207026)
            for child in children:
                item = self.objects.get(child)
                if item is None or item["state"] != "FINISHED" or item["values"].get("is_carousel_item") != "true":
                    return meta_error(400, 9007, "Media ID is not available", subcode=2207027)
        elif media_type in ("REELS", "VIDEO"):
            if not values.get("video_url"):
                return meta_error(400, 100, "The parameter video_url is required")
        elif not values.get("image_url"):
            return meta_error(400, 100, "The parameter image_url is required")
        polls = self.processing_polls if media_type in ("REELS", "VIDEO") else 0
        container = self.container(values, self.ig_user_id, video_polls=polls)
        return JSONResponse({"id": container["id"]})

    async def media_publish(self, values: dict[str, str], edge: str) -> Response:
        """POST /{ig-user-id}/media_publish with creation_id: a FINISHED container becomes the account's media;
        one still processing is "Media ID is not available" (Error Codes 9007/2207027). A container already
        PUBLISHED is refused too: the documentation names no answer for it, and publishing it twice must not
        make a second post."""
        self.publish_requests += 1
        container = self.objects.get(values.get("creation_id", ""))
        if container is None or container["state"] != "FINISHED":
            return meta_error(400, 9007, "Media ID is not available", subcode=2207027)
        published_24h = len(self.published_since(self.ig_user_id, "ig_media", str(int(time.time()) - 86400)))
        if published_24h >= self.quota_total:
            return meta_error(400, 9, "Application request limit reached", subcode=2207042)
        container["state"] = "PUBLISHED"
        media_id = self.new_id()
        self.objects[media_id] = {
            "type": "ig_media",
            "owner": self.ig_user_id,
            "id": media_id,
            "caption": container["values"].get("caption", ""),
            "media_type": container["values"].get("media_type", "IMAGE"),
            "children": [child for child in container["values"].get("children", "").split(",") if child],
            "container": container["id"],
            "permalink": f"https://www.instagram.com/p/C{media_id[-6:]}/",
            "created": time.time(),
            "timestamp": timestamp(),
        }
        await self.accept()
        return JSONResponse({"id": media_id})

    def own_media(self) -> list[dict[str, Any]]:
        return self.published_since(self.ig_user_id, "ig_media", None)

    async def list_media(self, values: dict[str, str], edge: str) -> Response:
        """GET /{ig-user-id}/media: the account's media, newest first, with the fields asked for."""
        wanted = values.get("fields", "id").split(",")
        data = [{name: media[name] for name in wanted if name in media} for media in self.own_media()]
        return JSONResponse({"data": data[: int(values.get("limit", "25"))]})

    async def publishing_limit(self, values: dict[str, str], edge: str) -> Response:
        """Reference "IG User Content Publishing Limit": quota_usage of config.quota_total in 24 hours."""
        used = len(self.published_since(self.ig_user_id, "ig_media", str(int(time.time()) - 86400)))
        return JSONResponse(
            {"data": [{"quota_usage": used, "config": {"quota_total": self.quota_total, "quota_duration": 86400}}]}
        )

    # --- Facebook Pages: Pages API "Posts", reference "Page Photos", Video API "Publishing" ------------------

    def page_post(self, message: str, *, kind: str = "page_post", attached: list[str] | None = None) -> dict[str, Any]:
        number = self.new_id()
        post_id = number if kind == "video" else f"{self.page_id}_{number}"
        post = {
            "type": kind,
            "owner": self.page_id,
            "id": post_id,
            "message" if kind != "video" else "description": message,
            "attached": attached or [],
            "created": time.time(),
            "created_time": timestamp(),
            "permalink_url": f"https://www.facebook.com/{self.page_id}/posts/{number}",
            "comments": [],
        }
        self.objects[post_id] = post
        return post

    def duplicate(self, message: str) -> Response | None:
        """Graph API "Error Codes" 506: a Page's post repeating one it made in the last day."""
        recent = self.published_since(self.page_id, "page_post", str(int(time.time()) - 86400))
        if message and any(post["message"] == message for post in recent):
            return meta_error(400, 506, "Duplicate status message")
        return None

    async def feed(self, values: dict[str, str], edge: str) -> Response:
        """POST /{page-id}/feed: message, and attached_media[n]={"media_fbid": <unpublished photo of the Page>}."""
        self.publish_requests += 1
        message = values.get("message", "")
        refused = self.duplicate(message)
        if refused is not None:
            return refused
        attached = []
        for name, value in sorted(values.items()):
            if name.startswith("attached_media["):
                photo = self.objects.get(str(json.loads(value)["media_fbid"]))
                if photo is None or photo["type"] != "photo" or photo["published"]:
                    return meta_error(400, 100, "attached_media must name unpublished photos of this Page")
                photo["published"] = True
                attached.append(photo["id"])
        post = self.page_post(message, attached=attached)
        await self.accept()
        return JSONResponse({"id": post["id"]})

    async def photos(self, values: dict[str, str], edge: str) -> Response:
        """POST /{page-id}/photos with url (and message): a photo post, or with published=false a photo that
        only a later post shows."""
        if not values.get("url"):
            return meta_error(400, 324, "Requires upload file")
        photo_id = self.new_id()
        published = values.get("published", "true") != "false"
        self.objects[photo_id] = {"type": "photo", "owner": self.page_id, "id": photo_id, "published": published}
        if not published:
            return JSONResponse({"id": photo_id})
        self.publish_requests += 1
        refused = self.duplicate(values.get("message", ""))
        if refused is not None:
            return refused
        post = self.page_post(values.get("message", ""), attached=[photo_id])
        await self.accept()
        return JSONResponse({"id": photo_id, "post_id": post["id"]})

    async def videos(self, values: dict[str, str], edge: str) -> Response:
        """POST /{page-id}/videos with file_url and description (non-resumable upload)."""
        if not values.get("file_url"):
            return meta_error(400, 100, "Requires file_url or source")
        self.publish_requests += 1
        video = self.page_post(values.get("description", ""), kind="video")
        await self.accept()
        return JSONResponse({"id": video["id"]})

    def own_posts(self) -> list[dict[str, Any]]:
        return self.published_since(self.page_id, "page_post", None) + self.published_since(self.page_id, "video", None)

    async def list_posts(self, values: dict[str, str], edge: str) -> Response:
        """GET /{page-id}/posts (reference "Page Posts") or /videos ("Page Videos"), newest first, from `since`."""
        kind = "video" if edge == "videos" else "page_post"
        wanted = values.get("fields", "id").split(",")
        found = self.published_since(self.page_id, kind, values.get("since"))
        data = [{name: post[name] for name in wanted if name in post} for post in found]
        return JSONResponse({"data": data[: int(values.get("limit", "25"))]})

    def post_fields(self, post: dict[str, Any]) -> dict[str, Any]:
        """Reference "Post": permalink_url, shares, and summaries of reactions and comments."""
        return {
            "id": post["id"],
            "permalink_url": post.get("permalink_url"),
            "shares": {"count": 2},
            "reactions": {"data": [], "summary": {"total_count": 7}},
            "comments": {"data": [], "summary": {"total_count": len(post.get("comments", []))}},
        }

    # --- insights and comments -------------------------------------------------------------------------

    def insights(self, item: dict[str, Any], values: dict[str, str]) -> Response:
        """Reference "IG Media Insights" and Pages API "Page Post Insights": one lifetime value per metric."""
        known = {"views": 340, "reach": 210, "likes": 25, "comments": len(item.get("comments", [])), "shares": 4}
        known |= {"saved": 9, "post_impressions": 321}
        data = []
        for name in values.get("metric", "").split(","):
            if name not in known:
                return meta_error(400, 100, f"(#100) metric[0] must be one of the following values: {name}")
            data.append({"name": name, "period": "lifetime", "values": [{"value": known[name]}], "id": name})
        return JSONResponse({"data": data})

    def add_comment(self, parent: dict[str, Any], values: dict[str, str]) -> Response:
        """Reference "IG Media Comments" / "IG Comment Replies" and "Object Comments": message makes a comment."""
        comment = self.comment(parent, values.get("message", ""), author="brand")
        return JSONResponse({"id": comment["id"]})

    def comment(self, parent: dict[str, Any], text: str, *, author: str) -> dict[str, Any]:
        comment_id = self.new_id()
        root = parent if parent["type"] != "comment" else self.objects[parent["root"]]
        comment = {
            "type": "comment",
            "owner": root.get("owner"),
            "id": comment_id,
            "text": text,
            "author": author,
            "parent": parent["id"],
            "root": root["id"],
            "hidden": False,
            "created": time.time(),
            "timestamp": timestamp(),
        }
        self.objects[comment_id] = comment
        root.setdefault("comments", []).append(comment_id)
        return comment

    def list_comments(self, item: dict[str, Any]) -> Response:
        comments = [self.objects[comment] for comment in item.get("comments", []) if comment in self.objects]
        if item["type"] == "ig_media":
            top = [comment for comment in comments if comment["parent"] == item["id"]]
            data = [
                {
                    "id": comment["id"],
                    "text": comment["text"],
                    "username": comment["author"],
                    "timestamp": comment["timestamp"],
                    "replies": {
                        "data": [
                            {"id": reply["id"], "text": reply["text"], "username": reply["author"]}
                            | {"timestamp": reply["timestamp"]}
                            for reply in comments
                            if reply["parent"] == comment["id"]
                        ]
                    },
                }
                for comment in top
            ]
        else:
            data = [
                {
                    "id": comment["id"],
                    "message": comment["text"],
                    "from": {"name": comment["author"], "id": "42"},
                    "created_time": comment["timestamp"],
                }
                | ({"parent": {"id": comment["parent"]}} if comment["parent"] != item["id"] else {})
                for comment in comments
            ]
        return JSONResponse({"data": data})

    def app(self) -> Starlette:
        return Starlette(
            routes=[
                Route("/v25.0/oauth/access_token", self.token, methods=["GET", "POST"]),
                Route("/v25.0/me/accounts", self.accounts, methods=["GET"]),
                Route("/v25.0/{node}", self.node, methods=["GET", "POST", "DELETE"]),
                Route("/v25.0/{node}/{edge}", self.edge, methods=["GET", "POST"]),
            ]
        )


@dataclass
class ThreadsStandIn(MetaStandIn):
    """The Threads API (graph.threads.net): its token endpoints, containers, publishing, replies and insights."""

    client_id: str = "threads-app-id"
    client_secret: str = "threads-app-secret"
    user_id: str = "7001000000000001"
    username: str = "brand"
    refreshes: int = 0
    checks_app_secret_proof: bool = False

    # --- "Get Access Tokens and Permissions", "Long-Lived Tokens" ---------------------------------------

    async def token(self, request: Request) -> Response:
        """POST /oauth/access_token: client_id, client_secret, code, grant_type, redirect_uri -> a one-hour token
        and the user id."""
        values = await self.params(request)
        self.token_requests.append(values)
        if values.get("client_id") != self.client_id or values.get("client_secret") != self.client_secret:
            return meta_error(400, 1, "Error validating client secret.")
        if values.get("grant_type") != "authorization_code" or values.get("redirect_uri") != self.redirect_uri:
            return meta_error(400, 100, "Invalid parameter")
        if self.codes.pop(values.get("code", ""), None) is None:
            return meta_error(400, 100, "Invalid verification code format.")
        return JSONResponse({"access_token": self.issue("short", 3600), "user_id": int(self.user_id)})

    async def exchange(self, request: Request) -> Response:
        """GET /access_token?grant_type=th_exchange_token&client_secret&access_token: 60 days."""
        values = await self.params(request)
        known = self.tokens.get(values.get("access_token", ""))
        if values.get("grant_type") != "th_exchange_token" or values.get("client_secret") != self.client_secret:
            return meta_error(400, 100, "Invalid parameter")
        if known is None or known["kind"] != "short" or known["expires"] <= time.time():
            return meta_error(400, 190, "Error validating access token", subcode=463)
        self.exchanges += 1
        token = self.issue("user", LONG_LIVED_SECONDS)
        return JSONResponse({"access_token": token, "token_type": "bearer", "expires_in": LONG_LIVED_SECONDS})

    async def refresh(self, request: Request) -> Response:
        """GET /refresh_access_token?grant_type=th_refresh_token: a long-lived token at least 24 hours old and
        not expired gets a new one valid for 60 days."""
        values = await self.params(request)
        known = self.tokens.get(values.get("access_token", ""))
        if values.get("grant_type") != "th_refresh_token":
            return meta_error(400, 100, "Invalid parameter")
        if known is None or known["kind"] != "user" or known["expires"] <= time.time():
            return meta_error(400, 190, "Error validating access token", subcode=463)
        if known["issued"] > time.time() - 86400:
            return meta_error(400, 100, "The access token must be at least 24 hours old to be refreshed")
        self.refreshes += 1
        token = self.issue("user", LONG_LIVED_SECONDS)
        return JSONResponse({"access_token": token, "token_type": "bearer", "expires_in": LONG_LIVED_SECONDS})

    # --- "Profiles", "Posts", "Reply Management", "Insights" -------------------------------------------

    async def node(self, request: Request) -> Response:
        values = await self.params(request)
        refused = self.refused_token(values, ("user",)) or self.limited(self.user_id)
        if refused is not None:
            return refused
        node = request.path_params["node"]
        if node == "me":
            return JSONResponse({"id": self.user_id, "username": self.username})
        item = self.objects.get(node)
        if item is None:
            return meta_error(400, 100, f"Object with ID '{node}' does not exist")
        if item["type"] == "container":
            # "Troubleshooting": GET /{container-id}?fields=status,error_message.
            self.advance(item)
            answer = {"id": node, "status": item["state"]}
            if item["state"] == "ERROR":
                answer["error_message"] = "FAILED_PROCESSING_VIDEO"
            return JSONResponse(answer)
        return JSONResponse({"id": node, "permalink": item["permalink"]})

    async def edge(self, request: Request) -> Response:
        values = await self.params(request)
        refused = self.refused_token(values, ("user",)) or self.limited(self.user_id)
        if refused is not None:
            return refused
        node, edge = request.path_params["node"], request.path_params["edge"]
        if node == self.user_id:
            if edge == "threads" and request.method == "POST":
                return self.create_container(values)
            if edge == "threads_publish":
                return await self.publish(values)
            if edge in ("threads", "replies"):
                return self.list_posts(values, replies=edge == "replies")
            if edge == "threads_publishing_limit":
                used = len(self.published_since(self.user_id, "thread", str(int(time.time()) - 86400)))
                config = {"quota_total": self.quota_total, "quota_duration": 86400}
                return JSONResponse({"data": [{"quota_usage": used, "config": config}]})
        item = self.objects.get(node)
        if item is None:
            return meta_error(400, 100, f"Object with ID '{node}' does not exist")
        if edge == "insights":
            metrics = {"views": 500, "likes": 30, "replies": len(self.conversation(item)), "reposts": 3, "quotes": 1}
            data = [
                {"name": name, "period": "lifetime", "values": [{"value": metrics[name]}]}
                for name in values.get("metric", "").split(",")
                if name in metrics
            ]
            return JSONResponse({"data": data})
        if edge == "conversation":
            return JSONResponse({"data": [self.view(reply) for reply in self.conversation(item)]})
        if edge == "manage_reply":
            item["hidden"] = values.get("hide") == "true"
            return JSONResponse({"success": True})
        return meta_error(400, 100, f"Unknown path components: /{edge}")

    def create_container(self, values: dict[str, str]) -> Response:
        """POST /{threads-user-id}/threads: media_type TEXT, IMAGE (image_url), VIDEO (video_url) or CAROUSEL
        (2 to 20 children), optional reply_to_id; text at most 500 characters."""
        media_type = values.get("media_type", "")
        if media_type not in ("TEXT", "IMAGE", "VIDEO", "CAROUSEL"):
            return meta_error(400, 100, "Invalid media_type")
        if len(values.get("text", "")) > 500:
            return meta_error(400, 100, "The text is over 500 characters")
        if values.get("reply_to_id") and values["reply_to_id"] not in self.objects:
            return meta_error(400, 100, "The post to reply to does not exist")
        if media_type == "CAROUSEL":
            children = [child for child in values.get("children", "").split(",") if child]
            if not 2 <= len(children) <= 20:
                return meta_error(400, 100, "A carousel has 2 to 20 items")
        if media_type in ("IMAGE", "VIDEO") and not values.get(f"{media_type.lower()}_url"):
            return meta_error(400, 100, f"{media_type.lower()}_url is required")
        container = self.container(
            values, self.user_id, video_polls=self.processing_polls if media_type == "VIDEO" else 0
        )
        return JSONResponse({"id": container["id"]})

    async def publish(self, values: dict[str, str]) -> Response:
        """POST /{threads-user-id}/threads_publish with creation_id: a FINISHED container becomes a post (or a
        reply). A container already PUBLISHED is refused (no second post); the documentation names no answer."""
        self.publish_requests += 1
        container = self.objects.get(values.get("creation_id", ""))
        if container is None or container["state"] != "FINISHED":
            return meta_error(400, 24, "The requested resource does not exist", subcode=4279009)
        container["state"] = "PUBLISHED"
        media_id = self.new_id()
        reply_to = container["values"].get("reply_to_id")
        self.objects[media_id] = {
            "type": "thread",
            "owner": self.user_id,
            "id": media_id,
            "text": container["values"].get("text", ""),
            "media_type": container["values"].get("media_type"),
            "children": [child for child in container["values"].get("children", "").split(",") if child],
            "replied_to": reply_to,
            "root": self.objects[reply_to].get("root") or reply_to if reply_to else None,
            "username": self.username,
            "permalink": f"https://www.threads.net/@{self.username}/post/{media_id[-8:]}",
            "created": time.time(),
            "timestamp": timestamp(),
            "hidden": False,
        }
        await self.accept()
        return JSONResponse({"id": media_id})

    def add_reply(self, parent_id: str, text: str, *, username: str) -> dict[str, Any]:
        """A reply someone else published below a post."""
        reply_id = self.new_id()
        parent = self.objects[parent_id]
        self.objects[reply_id] = {
            "type": "thread",
            "owner": f"user-{username}",
            "id": reply_id,
            "text": text,
            "replied_to": parent_id,
            "root": parent.get("root") or parent_id,
            "username": username,
            "permalink": "",
            "created": time.time(),
            "timestamp": timestamp(),
            "hidden": False,
        }
        return self.objects[reply_id]

    def own_posts(self) -> list[dict[str, Any]]:
        return self.published_since(self.user_id, "thread", None)

    def conversation(self, root: dict[str, Any]) -> list[dict[str, Any]]:
        return sorted(
            (item for item in self.objects.values() if item["type"] == "thread" and item.get("root") == root["id"]),
            key=lambda item: item["created"],
        )

    def view(self, item: dict[str, Any]) -> dict[str, Any]:
        view = {key: item[key] for key in ("id", "text", "username", "timestamp")}
        if item.get("replied_to"):
            view["replied_to"] = {"id": item["replied_to"]}
        return view

    def list_posts(self, values: dict[str, str], *, replies: bool) -> Response:
        """ "Retrieve Threads" (GET /{threads-user-id}/threads) and "Reply Management" (GET .../replies): the
        account's posts or its replies, newest first, from `since`."""
        found = [
            self.view(item)
            for item in self.published_since(self.user_id, "thread", values.get("since"))
            if bool(item.get("replied_to")) == replies
        ]
        return JSONResponse({"data": found[: int(values.get("limit", "25"))]})

    def app(self) -> Starlette:
        return Starlette(
            routes=[
                Route("/oauth/access_token", self.token, methods=["POST"]),
                Route("/access_token", self.exchange, methods=["GET"]),
                Route("/refresh_access_token", self.refresh, methods=["GET"]),
                Route("/v1.0/{node}", self.node, methods=["GET", "POST"]),
                Route("/v1.0/{node}/{edge}", self.edge, methods=["GET", "POST"]),
            ]
        )
