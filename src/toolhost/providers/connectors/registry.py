"""Which connectors exist, which platforms each serves, and building them from the settings.

Every known connector is built; those the operator enabled and configured serve accounts. An enabled connector
whose app settings are missing serves nothing and answers a validation_error naming those settings.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING, Literal

from toolhost.platform.results import ValidationFailed
from toolhost.providers.connectors.base import (
    COMMENTS_DELETE,
    COMMENTS_LIST,
    COMMENTS_MODERATE,
    COMMENTS_POST,
    COMMENTS_REPLY,
    METRICS,
    PUBLISH,
    Connector,
)
from toolhost.providers.connectors.bluesky import BlueskyConnector
from toolhost.providers.connectors.facebook import SCOPES as FACEBOOK_SCOPES
from toolhost.providers.connectors.facebook import FacebookConnector
from toolhost.providers.connectors.instagram import SCOPES as INSTAGRAM_SCOPES
from toolhost.providers.connectors.instagram import InstagramConnector
from toolhost.providers.connectors.linkedin import MEMBER_SCOPES as LINKEDIN_MEMBER_SCOPES
from toolhost.providers.connectors.linkedin import ORGANIZATION_SCOPES as LINKEDIN_ORGANIZATION_SCOPES
from toolhost.providers.connectors.linkedin import LinkedInConnector
from toolhost.providers.connectors.mastodon import MastodonConnector
from toolhost.providers.connectors.oauth import OAuthApp
from toolhost.providers.connectors.pinterest import SCOPES as PINTEREST_SCOPES
from toolhost.providers.connectors.pinterest import PinterestConnector
from toolhost.providers.connectors.threads import SCOPES as THREADS_SCOPES
from toolhost.providers.connectors.threads import ThreadsConnector
from toolhost.providers.connectors.tiktok import SCOPES as TIKTOK_SCOPES
from toolhost.providers.connectors.tiktok import TikTokConnector
from toolhost.providers.connectors.webhook import WebhookConnector
from toolhost.providers.connectors.x import SCOPES as X_SCOPES
from toolhost.providers.connectors.x import XConnector
from toolhost.providers.connectors.youtube import YouTubeConnector
from toolhost.providers.fetch import Fetcher

if TYPE_CHECKING:
    from pydantic import SecretStr

    from toolhost.config import ConnectorSettings, Settings

SETTINGS_PREFIX = "TOOLHOST_DISTRIBUTION__CONNECTORS__"
COMMENT_CAPABILITIES = (COMMENTS_LIST, COMMENTS_REPLY, COMMENTS_POST, COMMENTS_MODERATE, COMMENTS_DELETE)


@dataclass(frozen=True, slots=True)
class ConnectorInfo:
    """What `toolhost connectors list` shows of one connector."""

    name: str
    platforms: tuple[str, ...]
    enabled: bool
    publish: bool
    media_kinds: tuple[str, ...]
    comments: tuple[str, ...]
    # "pull" (asked of the platform), "push" (sent by a webhook receiver) or "none"
    analytics: str
    settings: tuple[str, ...]
    missing_settings: tuple[str, ...]

    @property
    def ready(self) -> bool:
        """Enabled with every setting it needs."""
        return self.enabled and not self.missing_settings


def app_from_settings(
    options: ConnectorSettings,
    app: str,
    scopes: tuple[str, ...],
    *,
    id_setting: str = "client_id",
    pkce: bool = True,
    client_auth: Literal["client_secret_basic", "client_secret_post"] = "client_secret_basic",
    scope_separator: str = " ",
) -> OAuthApp:
    """The operator's app on one platform, from the `<app>_<id_setting>`, `<app>_client_secret`,
    `<app>_authorize_url` and `<app>_token_url` settings; one name gives both the fields and the environment
    variables a missing id or secret is reported by, so the two cannot drift apart."""
    client_secret: SecretStr | None = getattr(options, f"{app}_client_secret")
    return OAuthApp(
        client_id=getattr(options, f"{app}_{id_setting}"),
        client_secret=client_secret.get_secret_value() if client_secret else None,
        authorize_url=getattr(options, f"{app}_authorize_url"),
        token_url=getattr(options, f"{app}_token_url"),
        scopes=scopes,
        setting_names=(f"{SETTINGS_PREFIX}{app}_{id_setting}".upper(), f"{SETTINGS_PREFIX}{app}_client_secret".upper()),
        pkce=pkce,
        client_auth=client_auth,
        scope_separator=scope_separator,
    )


def build_all(settings: Settings, fetcher: Fetcher) -> dict[str, Connector]:
    """Every connector toolhost has, configured from the settings (enabled or not)."""
    options = settings.distribution.connectors
    return {
        "webhook": WebhookConnector(
            fetcher, timeout=options.webhook_timeout, attempts=options.webhook_attempts, backoff=options.webhook_backoff
        ),
        "mastodon": MastodonConnector(fetcher),
        "bluesky": BlueskyConnector(fetcher, service=options.bluesky_service, web=options.bluesky_web),
        "youtube": YouTubeConnector(
            fetcher,
            client_id=options.youtube_client_id,
            client_secret=options.youtube_client_secret,
            auth_url=options.youtube_auth_url,
            token_url=options.youtube_token_url,
            api_url=options.youtube_api_url,
            upload_url=options.youtube_upload_url,
        ),
        "x": XConnector(
            fetcher,
            app=app_from_settings(options, "x", X_SCOPES),
            api_url=options.x_api_url,
            rate_limit_wait=options.rate_limit_wait,
            media_processing_polls=options.media_processing_polls,
        ),
        # Facebook Login: one Meta app serves Instagram and Facebook Pages; its token endpoint takes the client
        # secret as a form field, and the Facebook Login dialog is not documented to take PKCE.
        "instagram": InstagramConnector(
            fetcher,
            app=app_from_settings(options, "meta", INSTAGRAM_SCOPES, pkce=False, client_auth="client_secret_post"),
            api_url=options.meta_graph_url,
            rate_limit_wait=options.rate_limit_wait,
            media_processing_polls=options.media_processing_polls,
            media_processing_seconds=options.media_processing_seconds,
        ),
        "facebook": FacebookConnector(
            fetcher,
            app=app_from_settings(options, "meta", FACEBOOK_SCOPES, pkce=False, client_auth="client_secret_post"),
            api_url=options.meta_graph_url,
            rate_limit_wait=options.rate_limit_wait,
            media_processing_polls=options.media_processing_polls,
            media_processing_seconds=options.media_processing_seconds,
        ),
        # Threads API "Get Started": the Threads App ID and secret of the same Meta app's Threads use case; the
        # authorization window lists scopes with commas.
        "threads": ThreadsConnector(
            fetcher,
            app=app_from_settings(
                options, "threads", THREADS_SCOPES, pkce=False, client_auth="client_secret_post", scope_separator=","
            ),
            api_url=options.threads_api_url,
            rate_limit_wait=options.rate_limit_wait,
            media_processing_polls=options.media_processing_polls,
            media_processing_seconds=options.media_processing_seconds,
        ),
        "linkedin": LinkedInConnector(
            fetcher,
            # "Authorization Code Flow": LinkedIn takes PKCE only from some apps (native clients); the flow rests
            # on the state the connect page checks, and the secret travels in the form body.
            app=app_from_settings(
                options,
                "linkedin",
                LINKEDIN_MEMBER_SCOPES + (LINKEDIN_ORGANIZATION_SCOPES if options.linkedin_organizations else ()),
                pkce=False,
                client_auth="client_secret_post",
            ),
            api_url=options.linkedin_api_url,
            version=options.linkedin_version,
            organizations=options.linkedin_organizations,
            rate_limit_wait=options.rate_limit_wait,
            media_processing_polls=options.media_processing_polls,
        ),
        "tiktok": TikTokConnector(
            fetcher,
            # "Login Kit for Web": web apps send no PKCE challenge; the connector writes its own requests.
            app=app_from_settings(
                options, "tiktok", TIKTOK_SCOPES, id_setting="client_key", pkce=False, client_auth="client_secret_post"
            ),
            api_url=options.tiktok_api_url,
            media_processing_polls=options.media_processing_polls,
        ),
        "pinterest": PinterestConnector(
            fetcher,
            # "Set up authentication and authorization": the authorization page takes comma-separated scopes and
            # documents no PKCE; the token endpoint takes the app id and secret as HTTP Basic.
            app=app_from_settings(options, "pinterest", PINTEREST_SCOPES, pkce=False, scope_separator=","),
            api_url=options.pinterest_api_url,
            rate_limit_wait=options.rate_limit_wait,
            media_processing_polls=options.media_processing_polls,
        ),
    }


class Connectors:
    """The configured connectors of one process, sharing one SSRF-safe fetcher."""

    def __init__(self, settings: Settings, fetcher: Fetcher | None = None) -> None:
        self.fetcher = fetcher or Fetcher(settings.fetch)
        enabled = settings.distribution.connectors.enabled
        self._all = build_all(settings, self.fetcher)
        self._enabled = {name: connector for name, connector in self._all.items() if name in enabled}
        self._connectors = {
            name: connector for name, connector in self._enabled.items() if not connector.missing_settings()
        }

    def get(self, name: str) -> Connector | None:
        """The connector of that name when enabled and configured."""
        return self._connectors.get(name)

    def names(self) -> list[str]:
        """Every enabled and configured connector."""
        return list(self._connectors)

    def for_platform(self, platform: str) -> list[str]:
        """The configured connectors that can publish to a platform, the platform's own before webhook."""
        return sorted(
            (name for name, connector in self._connectors.items() if platform in connector.platforms),
            key=lambda name: name == "webhook",
        )

    def unconfigured_for(self, platform: str) -> dict[str, list[str]]:
        """Enabled connectors of a platform that lack app settings, each with the settings it lacks."""
        return {
            name: connector.missing_settings()
            for name, connector in self._enabled.items()
            if platform in connector.platforms and connector.missing_settings()
        }

    @classmethod
    def for_worker(cls, settings: Settings) -> Connectors:
        """A worker's connectors: their fetcher keeps its connections to the platforms' APIs for reuse."""
        return cls(settings, Fetcher(settings.fetch, keep_alive=True))

    async def aclose(self) -> None:
        """Closes the fetcher's kept connections."""
        await self.fetcher.aclose()

    def require(self, name: str, platform: str) -> Connector:
        """The connector that will serve an account; a validation_error names the settings it still needs."""
        connector = self._connectors.get(name)
        if connector is not None and platform in connector.platforms:
            return connector
        unconfigured = self._enabled.get(name)
        if unconfigured is not None and platform in unconfigured.platforms:
            missing = unconfigured.missing_settings()
            raise ValidationFailed(
                f"the {name} connector needs its app settings: {', '.join(missing)} are not set",
                recover_with="ask the operator to register the app with the platform and set these settings",
                connector=name,
                missing_settings=missing,
            )
        raise ValidationFailed(
            f"connector {name!r} is not configured for {platform}",
            configured=self.for_platform(platform),
            field_errors=[{"path": "connector", "message": "not configured for this platform"}],
        )

    def describe(self) -> list[ConnectorInfo]:
        """Every connector toolhost has: its platforms, what it supports and the settings it needs."""
        return [
            ConnectorInfo(
                name=name,
                platforms=connector.platforms,
                enabled=name in self._enabled,
                publish=PUBLISH in connector.capabilities,
                media_kinds=connector.media_kinds,
                comments=tuple(
                    capability.removeprefix("comments.")
                    for capability in COMMENT_CAPABILITIES
                    if capability in connector.capabilities
                ),
                analytics=("push" if connector.pushed else "pull") if METRICS in connector.capabilities else "none",
                settings=tuple(connector.required_settings()),
                missing_settings=tuple(connector.missing_settings()),
            )
            for name, connector in self._all.items()
        ]
