"""The native connectors on their stand-ins, for `bench/publish.py --mix`.

The stand-ins of tests/domains/distribution run in the bench process; the workers reach them through the
settings `environment()` returns. One account per connector is connected the way the connect page does it (the
stand-in approves the consent page, the connector trades the code) or, for the token connectors, with the
fields the connect page takes. Every post is captioned "Benchmark post <n>", so what each platform holds at the
end says which posts it has once, twice or not at all.
"""

from __future__ import annotations

import asyncio
import base64
import io
import re
import uuid
from collections import Counter
from collections.abc import Callable
from contextlib import AsyncExitStack
from dataclasses import dataclass
from typing import Any, Protocol
from urllib.parse import parse_qs, urlsplit

from PIL import Image
from starlette.applications import Starlette
from starlette.types import ASGIApp, Message, Receive, Scope, Send
from tests.domains.distribution.linkedin_standin import LinkedInStandIn
from tests.domains.distribution.meta_standin import GraphStandIn, ThreadsStandIn
from tests.domains.distribution.pinterest_standin import PinterestStandIn
from tests.domains.distribution.standins import BlueskyStandIn, MastodonStandIn, serve
from tests.domains.distribution.test_media_rules import mp4, png
from tests.domains.distribution.tiktok_standin import TikTokStandIn
from tests.domains.distribution.x_standin import XStandIn

from toolhost.domains.distribution import accounts as accounts_service
from toolhost.platform.context import Principal
from toolhost.platform.runtime import Platform
from toolhost.providers.connectors.oauth import OAuthConnector
from toolhost.providers.connectors.registry import SETTINGS_PREFIX, Connectors

CAPTION = re.compile(r"Benchmark post (\d+)")
REDIRECT_URI = "https://toolhost.bench/app/connect/oauth/callback"


def caption(index: int) -> str:
    """The caption of post `index`, found again on the platform side."""
    return f"Benchmark post {index}"


def jpeg() -> bytes:
    buffer = io.BytesIO()
    Image.new("RGB", (120, 120), (30, 90, 160)).save(buffer, format="JPEG")
    return buffer.getvalue()


def answering_late(app: Starlette, seconds: float) -> ASGIApp:
    """The stand-in with its answers to POST requests held back `seconds` after it acted on them: the window in
    which a killed worker loses the answer of a post the platform has made."""

    async def delayed(scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http" or scope["method"] != "POST":
            await app(scope, receive, send)
            return

        async def send_late(message: Message) -> None:
            if message["type"] == "http.response.start":
                await asyncio.sleep(seconds)
            await send(message)

        await app(scope, receive, send_late)

    return delayed


class ConsentPage(Protocol):
    """A stand-in's consent page: the person approves, a code comes back."""

    def approve(self, authorize_query: dict[str, str]) -> str: ...


@dataclass(frozen=True, slots=True)
class Target:
    """One platform of the mix: the connector that publishes there, what its posts carry, and what it holds."""

    platform: str
    connector: str
    media: str | None
    extra: dict[str, Any]
    held: Callable[[], list[str]]


class ConnectorMix:
    """The stand-ins, the accounts connected to them, and the count of each post on the platform side."""

    def __init__(self, webhook_captions: Callable[[], list[str]], *, answer_delay: float) -> None:
        self.answer_delay = answer_delay
        self.x = XStandIn()
        self.linkedin = LinkedInStandIn(refuse_reading_posts=True)  # a member without r_member_social
        self.graph = GraphStandIn(quota_total=1_000_000)
        self.threads = ThreadsStandIn(quota_total=1_000_000)
        self.tiktok = TikTokStandIn()
        self.pinterest = PinterestStandIn()
        self.bluesky = BlueskyStandIn()
        self.mastodon = MastodonStandIn()
        self.bases: dict[str, str] = {}
        self.targets = [
            Target("twitter", "x", None, {}, lambda: [tweet["sent"] for tweet in self.x.tweets.values()]),
            Target(
                "linkedin",
                "linkedin",
                None,
                {},
                lambda: [post["commentary"] for post in self.linkedin.posts.values()],
            ),
            Target("facebook", "facebook", None, {}, lambda: [post["message"] for post in self.graph.own_posts()]),
            Target("instagram", "instagram", "jpeg", {}, lambda: [item["caption"] for item in self.graph.own_media()]),
            Target("threads", "threads", None, {}, lambda: [post["text"] for post in self.threads.own_posts()]),
            Target(
                "tiktok",
                "tiktok",
                "mp4",
                {"platform_metadata": {"tiktok": {"privacy_status": "SELF_ONLY"}}},
                lambda: [
                    str(self.tiktok.publications[post["publish_id"]]["post_info"]["title"])
                    for post in self.tiktok.posts
                ],
            ),
            Target(
                "pinterest",
                "pinterest",
                "png",
                {},
                lambda: [pin["description"] for pin in self.pinterest.pins.values()],
            ),
            Target(
                "bluesky", "bluesky", None, {}, lambda: [record["text"] for record in self.bluesky.records.values()]
            ),
            Target(
                "mastodon",
                "mastodon",
                None,
                {},
                lambda: [status["content"] for status in self.mastodon.statuses.values()],
            ),
            # A receiver that de-duplicates on Idempotency-Key publishes once per key.
            Target("youtube", "webhook", "mp4", {"title": "Benchmark"}, webhook_captions),
        ]

    async def start(self, stack: AsyncExitStack) -> None:
        """Serves every stand-in on 127.0.0.1 until the stack closes."""
        for name, stand_in in (
            ("x", self.x),
            ("linkedin", self.linkedin),
            ("graph", self.graph),
            ("threads", self.threads),
            ("tiktok", self.tiktok),
            ("pinterest", self.pinterest),
            ("bluesky", self.bluesky),
            ("mastodon", self.mastodon),
        ):
            base = await stack.enter_async_context(serve(answering_late(stand_in.app(), self.answer_delay)))
            self.bases[name] = base
            if hasattr(stand_in, "base"):
                stand_in.base = base

    def environment(self) -> dict[str, str]:
        """The connector settings that point every worker at the stand-ins."""
        base = self.bases
        values = {
            "X_CLIENT_ID": self.x.client_id,
            "X_CLIENT_SECRET": self.x.client_secret,
            "X_TOKEN_URL": f"{base['x']}/2/oauth2/token",
            "X_API_URL": f"{base['x']}/2",
            "LINKEDIN_CLIENT_ID": self.linkedin.client_id,
            "LINKEDIN_CLIENT_SECRET": self.linkedin.client_secret,
            "LINKEDIN_TOKEN_URL": f"{base['linkedin']}/oauth/v2/accessToken",
            "LINKEDIN_API_URL": base["linkedin"],
            "META_CLIENT_ID": self.graph.client_id,
            "META_CLIENT_SECRET": self.graph.client_secret,
            "META_TOKEN_URL": f"{base['graph']}/v25.0/oauth/access_token",
            "META_GRAPH_URL": f"{base['graph']}/v25.0",
            "THREADS_CLIENT_ID": self.threads.client_id,
            "THREADS_CLIENT_SECRET": self.threads.client_secret,
            "THREADS_TOKEN_URL": f"{base['threads']}/oauth/access_token",
            "THREADS_API_URL": f"{base['threads']}/v1.0",
            "TIKTOK_CLIENT_KEY": self.tiktok.client_key,
            "TIKTOK_CLIENT_SECRET": self.tiktok.client_secret,
            "TIKTOK_TOKEN_URL": f"{base['tiktok']}/v2/oauth/token/",
            "TIKTOK_API_URL": base["tiktok"],
            "PINTEREST_CLIENT_ID": self.pinterest.client_id,
            "PINTEREST_CLIENT_SECRET": self.pinterest.client_secret,
            "PINTEREST_TOKEN_URL": f"{base['pinterest']}/v5/oauth/token",
            "PINTEREST_API_URL": f"{base['pinterest']}/v5",
            "MEDIA_PROCESSING_SECONDS": "0",
        }
        return {f"{SETTINGS_PREFIX}{name}": value for name, value in values.items()}

    async def connect(self, platform: Platform, project_id: uuid.UUID, webhook_url: str) -> None:
        """One account per target, stored as the connect page stores it."""
        settings = platform.settings
        connectors = Connectors(settings)
        approvers: dict[str, ConsentPage] = {
            "x": self.x,
            "linkedin": self.linkedin,
            "facebook": self.graph,
            "instagram": self.graph,
            "threads": self.threads,
            "tiktok": self.tiktok,
            "pinterest": self.pinterest,
        }
        fields = {
            "bluesky": {
                "handle": self.bluesky.handle,
                "app_password": self.bluesky.password,
                "service": self.bases["bluesky"],
            },
            "mastodon": {"instance_url": self.bases["mastodon"], "access_token": self.mastodon.token},
            "webhook": {"url": webhook_url},
        }
        for target in self.targets:
            connector = connectors.require(target.connector, target.platform)
            if isinstance(connector, OAuthConnector):
                authorization = connector.authorization(redirect_uri=REDIRECT_URI, state=uuid.uuid4().hex)
                query = {name: values[0] for name, values in parse_qs(urlsplit(authorization.url).query).items()}
                code = approvers[target.connector].approve(query)
                result = await connector.complete(
                    platform=target.platform,
                    code=code,
                    redirect_uri=REDIRECT_URI,
                    code_verifier=authorization.code_verifier,
                )
            else:
                result = await connector.connect(platform=target.platform, fields=fields[target.connector])
            async with platform.session_factory() as session, session.begin():
                await accounts_service.store(
                    session=session,
                    settings=settings,
                    project_id=project_id,
                    platform=target.platform,
                    connector_name=target.connector,
                    result=result,
                )

    async def upload_media(self, platform: Platform, principal: Principal) -> dict[str, str]:
        """The media the targets carry, stored once through upload_media: kind -> r2_key."""
        files = {
            "png": (png(100, 150), "image/png"),
            "jpeg": (jpeg(), "image/jpeg"),
            "mp4": (mp4(360, 640, 4), "video/mp4"),
        }
        keys = {}
        for kind, (data, content_type) in files.items():
            execution = await platform.execute(
                "upload_media",
                {"file_data": base64.b64encode(data).decode(), "content_type": content_type},
                principal,
                transport="cli",
            )
            if execution.result["isError"]:
                raise SystemExit(f"upload_media failed: {execution.result['structuredContent']}")
            keys[kind] = str(execution.result["structuredContent"]["r2_key"])
        return keys

    def post(self, index: int, media: dict[str, str]) -> tuple[str, dict[str, Any]]:
        """Post `index`'s platform and its schedule_post arguments beyond caption and time."""
        target = self.targets[index % len(self.targets)]
        arguments: dict[str, Any] = {"platforms": [target.platform], **target.extra}
        if target.media is not None:
            arguments["r2_key"] = media[target.media]
        return target.connector, arguments

    def held(self) -> dict[str, Counter[int]]:
        """connector -> how many times each post index is on its platform."""
        return {
            target.connector: Counter(
                int(found.group(1)) for text in target.held() if (found := CAPTION.search(text)) is not None
            )
            for target in self.targets
        }
