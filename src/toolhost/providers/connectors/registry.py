"""Which connectors exist, which platforms each serves, and building them from the settings."""

from __future__ import annotations

from typing import TYPE_CHECKING

from toolhost.providers.connectors.base import Connector
from toolhost.providers.connectors.bluesky import BlueskyConnector
from toolhost.providers.connectors.mastodon import MastodonConnector
from toolhost.providers.connectors.webhook import WebhookConnector
from toolhost.providers.connectors.youtube import YouTubeConnector
from toolhost.providers.fetch import Fetcher

if TYPE_CHECKING:
    from toolhost.config import Settings
from toolhost.platform.fields import PLATFORMS

# The platform each platform-specific connector serves; webhook serves every publishing platform.
NATIVE_PLATFORM = {"mastodon": "mastodon", "bluesky": "bluesky", "youtube": "youtube"}


class Connectors:
    """The configured connectors of one process, sharing one SSRF-safe fetcher."""

    def __init__(self, settings: Settings, fetcher: Fetcher | None = None) -> None:
        options = settings.distribution.connectors
        self.fetcher = fetcher or Fetcher(settings.fetch)
        built: dict[str, Connector] = {
            "webhook": WebhookConnector(
                self.fetcher,
                timeout=options.webhook_timeout,
                attempts=options.webhook_attempts,
                backoff=options.webhook_backoff,
            ),
            "mastodon": MastodonConnector(self.fetcher),
            "bluesky": BlueskyConnector(self.fetcher, service=options.bluesky_service, web=options.bluesky_web),
        }
        youtube = YouTubeConnector(
            self.fetcher,
            client_id=options.youtube_client_id,
            client_secret=options.youtube_client_secret,
            auth_url=options.youtube_auth_url,
            token_url=options.youtube_token_url,
            api_url=options.youtube_api_url,
            upload_url=options.youtube_upload_url,
        )
        if youtube.configured:
            built["youtube"] = youtube
        self._connectors = {name: connector for name, connector in built.items() if name in options.enabled}

    def get(self, name: str) -> Connector | None:
        """The connector of that name when configured."""
        return self._connectors.get(name)

    def names(self) -> list[str]:
        """Every configured connector."""
        return list(self._connectors)

    def for_platform(self, platform: str) -> list[str]:
        """The configured connectors that can publish to a platform (store platforms have none built in)."""
        names = [name for name, native in NATIVE_PLATFORM.items() if native == platform and name in self._connectors]
        if platform in PLATFORMS and "webhook" in self._connectors:
            names.append("webhook")
        return names
