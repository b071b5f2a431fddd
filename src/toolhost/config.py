"""Settings: one object, built once from the environment (prefix TOOLHOST_) and passed in.

Kept as one module past 500 lines on purpose: it is the list of every setting an operator can give, each group
with its fields documented and checked, and the one place an operator or a reader looks for them.
"""

from __future__ import annotations

import ipaddress
from pathlib import Path
from typing import Any, Literal

from pydantic import BaseModel, Field, PrivateAttr, SecretStr, field_validator, model_validator
from pydantic_settings import BaseSettings, SettingsConfigDict
from sqlalchemy.engine import make_url

from toolhost.keyring import Keyring, KeyringError

DATABASE_FILE = "toolhost.db"
# What an operator writes -> the async driver toolhost runs it on; the drivers toolhost ships are the only ones.
ASYNC_DRIVERS = {
    "sqlite": "sqlite+aiosqlite",
    "sqlite+aiosqlite": "sqlite+aiosqlite",
    "postgresql": "postgresql+asyncpg",
    "postgres": "postgresql+asyncpg",
    "postgresql+asyncpg": "postgresql+asyncpg",
}
DATABASE_URL_EXAMPLES = "sqlite:///path/to/toolhost.db or postgresql://user:password@host:5432/database"

Tier = Literal["trial", "pro", "team", "agency"]


class BootstrapSettings(BaseModel):
    """What the first start creates on an empty database."""

    tier: Tier = Field(default="agency", description="Tier of the account created on first start.")
    account_name: str = Field(default="default", description="Name of the bootstrapped account.")
    project_name: str = Field(default="default", description="Name of the bootstrapped project.")


class RateLimitSettings(BaseModel):
    """The layers of CATALOG.md §1.10; every number is per window."""

    enabled: bool = Field(default=True, description="Turns every layer off (benchmarks only).")
    anonymous_per_minute: int = Field(default=60, description="Per client IP, requests without a credential.")
    trial_per_minute: int = Field(default=15, description="Per account of tier trial.")
    account_per_minute: int = Field(default=100, description="Per account of the other tiers.")
    category_per_minute: dict[str, int] = Field(
        default={"generation": 15, "posting": 30, "upload": 20, "read": 60},
        description="Per account per tool category.",
    )
    tool_per_minute: dict[str, int] = Field(
        default={"generate_video": 5, "generate_image": 10, "schedule_post": 10, "extract_brand": 5},
        description="Per account per tool.",
    )
    account_per_hour: int = Field(default=500, description="Per account per hour (polling tools count 0.2).")
    in_flight_per_account: dict[str, int] = Field(
        default={"wait_for_connection": 3},
        description="Calls of a tool one account may have running at once.",
    )
    sign_in_per_email: int = Field(
        default=10, description="Sign-in attempts per email address per 15 minutes, whether the address exists or not."
    )
    sign_in_per_ip: int = Field(default=30, description="Sign-in attempts per client IP per 15 minutes.")


class SignInSettings(BaseModel):
    """People signing in to the web pages (and, through them, authorizing MCP clients)."""

    session_hours: float = Field(
        default=12, gt=0, description="How long a sign-in lasts; then the pages send the person to sign in again."
    )


class OAuthSettings(BaseModel):
    """The authorization server remote MCP clients register with and get people's consent from."""

    redirect_uri_allow: list[str] = Field(
        default=[],
        description="Redirect URI prefixes a client may register beyond https and loopback http "
        "(e.g. `cursor://anysphere.cursor-retrieval/`, `http://intranet.example:8080/`).",
    )
    refresh_token_days: int = Field(
        default=30, gt=0, description="How long an unused refresh token lasts; each use replaces it with a new one."
    )


class CreditCost(BaseModel):
    """An operator's override of a tool's cost: base + per × units."""

    base: int = 0
    per: int = 0
    unit: str | None = None


class CreditSettings(BaseModel):
    """Allocations, key counts, cost overrides and per-run budgets (CATALOG.md §1.9)."""

    allocations: dict[str, int] = Field(
        default={"trial": 300, "pro": 1500, "team": 3500, "agency": 10000},
        description="Credits per period by tier (trial: one-time).",
    )
    key_limits: dict[str, int] = Field(
        default={"trial": 1, "pro": 2, "team": 5, "agency": 20},
        description="How many active API keys an account of each tier may hold.",
    )
    trial_days: int = Field(default=14, description="Days until a trial ends.")
    costs: dict[str, CreditCost] = Field(default={}, description="Per-tool cost overrides.")
    max_credits_per_run: int | None = Field(default=None, description="Per-run credit budget; unset = unlimited.")
    max_assets_per_run: int | None = Field(default=None, description="Per-run asset budget; unset = unlimited.")
    hold_seconds: int = Field(
        default=120,
        ge=1,
        description=(
            "Lifetime of a call's credit hold without renewal; the process running the call renews it every "
            "third of this, so only a hold whose process died expires, and the worker then returns it."
        ),
    )


class PolicySettings(BaseModel):
    """The input policy of CATALOG.md §1.8."""

    input: Literal["block", "off"] = Field(default="block", description="Block suspicious arguments or not.")


class FetchSettings(BaseModel):
    """The SSRF-safe fetcher's operator allowlist (CATALOG.md §1.14)."""

    allow: list[str] = Field(default=[], description="Hosts or CIDRs exempt from the private-address refusal.")
    allow_http: bool = Field(default=False, description="Plain http to allowlisted hosts only.")
    connect_timeout: float = Field(default=10.0, description="Seconds to connect.")
    total_timeout: float = Field(default=30.0, description="Seconds for the whole request.")
    max_page_bytes: int = Field(default=10 * 1024 * 1024, description="Largest page body read.")
    max_redirects: int = Field(default=5, description="Redirects followed, each re-checked.")
    ca_bundle: Path | None = Field(
        default=None,
        description="Extra PEM CA bundle trusted for https (intranets with their own CA; tests).",
    )


class JobSettings(BaseModel):
    """The durable job queue and its worker."""

    run_in_process: bool = Field(default=True, description="`serve` runs a worker loop in-process.")
    lease_seconds: int = Field(default=60, description="How long a claim holds before another worker may take it.")
    poll_interval: float = Field(default=0.5, description="Seconds between claims when the queue is empty.")
    maintenance_interval: float = Field(
        default=5.0,
        gt=0,
        description="Seconds between runs of the worker's other pollers (expired credit holds, autopilot "
        "schedules, media retention) when they found nothing to do.",
    )
    per_account_concurrency: int = Field(default=4, description="Jobs of one account running at once.")
    timeouts: dict[str, float] = Field(
        default={
            "image": 120,
            "voiceover": 120,
            "video": 900,
            "demo_render": 3600,
            "template_render": 3600,
            "hyperframes_render": 3600,
            "recipe_run": 3600,
        },
        description="Seconds a job of each type may run before it fails with failure_reason timeout (refunded).",
    )
    max_attempts: int = Field(
        default=3, description="Runs of a job (lost leases included) before it fails with worker_lost."
    )


class MediaSettings(BaseModel):
    """The media store (CATALOG.md §1.13)."""

    root: Path = Field(default=Path("./media"), description="Local filesystem root of the media store.")
    url_ttl_seconds: int = Field(default=3600, description="Lifetime of a signed media URL.")
    retention_days: int = Field(default=90, description="Days unreferenced job outputs and uploads are kept.")
    retention_sweep_seconds: float = Field(
        default=3600, description="Seconds between one worker's sweeps for media past its retention."
    )
    orphan_grace_seconds: float = Field(
        default=86400,
        ge=0,
        description="Age a stored file no row names must reach before the sweep deletes it: a job's output is "
        "written just before its row commits with the job, and must not be swept in between.",
    )
    max_fetch_bytes: int = Field(default=100 * 1024 * 1024, description="Largest media fetched by URL.")
    max_upload_bytes: int = Field(default=10 * 1024 * 1024, description="Largest decoded base64 upload.")
    store: Literal["local", "s3"] = Field(
        default="local", description="Where media lives: `local` (under `root`) or `s3` (a bucket)."
    )
    s3_bucket: str | None = Field(default=None, description="Bucket of the s3 store; required when store=s3.")
    s3_endpoint_url: str | None = Field(
        default=None, description="Endpoint of an S3-compatible service (R2, MinIO, ...); unset = AWS S3."
    )
    s3_region: str = Field(default="us-east-1", description="Region the s3 store signs its requests for.")
    s3_access_key_id: str | None = Field(
        default=None, description="Access key of the s3 store; unset = boto3's credential chain (env, role)."
    )
    s3_secret_access_key: SecretStr | None = Field(default=None, description="Secret key of the s3 store.")
    s3_addressing_style: Literal["auto", "path", "virtual"] = Field(
        default="auto", description="Bucket addressing: path-style suits most S3-compatible services."
    )

    @model_validator(mode="after")
    def s3_needs_a_bucket(self) -> MediaSettings:
        """An s3 store without a bucket fails at start, not at the first upload."""
        if self.store == "s3" and not self.s3_bucket:
            raise ValueError("media.store is s3 but media.s3_bucket is not set")
        return self


class ConnectorSettings(BaseModel):
    """Publishing connectors (CATALOG.md §1.12): which are offered, and where their APIs live."""

    enabled: list[str] = Field(
        default=[
            "webhook",
            "mastodon",
            "bluesky",
            "youtube",
            "x",
            "instagram",
            "facebook",
            "threads",
            "linkedin",
            "tiktok",
            "pinterest",
        ],
        description="Connectors offered on the connect page; youtube, x, instagram, facebook, threads, linkedin, "
        "tiktok and pinterest also need their app's client id (TikTok: client key) and secret.",
    )
    webhook_timeout: float = Field(default=10.0, description="Seconds one webhook delivery may take.")
    webhook_attempts: int = Field(default=3, description="Deliveries tried within one publish attempt.")
    webhook_backoff: float = Field(default=0.5, description="Seconds before the 2nd delivery; doubles after.")
    bluesky_service: str = Field(default="https://bsky.social", description="Default Bluesky PDS (XRPC root).")
    bluesky_web: str = Field(default="https://bsky.app", description="Web root used to build post URLs.")
    youtube_client_id: str | None = Field(default=None, description="Operator's Google OAuth client id.")
    youtube_client_secret: str | None = Field(default=None, description="Operator's Google OAuth client secret.")
    youtube_auth_url: str = Field(
        default="https://accounts.google.com/o/oauth2/v2/auth", description="Google OAuth authorize endpoint."
    )
    youtube_token_url: str = Field(default="https://oauth2.googleapis.com/token", description="Google token endpoint.")
    youtube_api_url: str = Field(default="https://www.googleapis.com/youtube/v3", description="YouTube Data API root.")
    youtube_upload_url: str = Field(
        default="https://www.googleapis.com/upload/youtube/v3", description="YouTube upload API root."
    )
    youtube_analytics_url: str = Field(
        default="https://youtubeanalytics.googleapis.com/v2", description="YouTube Analytics API root."
    )
    x_client_id: str | None = Field(default=None, description="OAuth 2.0 Client ID of the operator's X app.")
    x_client_secret: SecretStr | None = Field(
        default=None, description="OAuth 2.0 Client Secret of the operator's X app (a confidential client)."
    )
    x_authorize_url: str = Field(
        default="https://x.com/i/oauth2/authorize", description="X's OAuth 2.0 authorization page."
    )
    x_token_url: str = Field(default="https://api.x.com/2/oauth2/token", description="X's OAuth 2.0 token endpoint.")
    x_api_url: str = Field(default="https://api.x.com/2", description="X API v2 root.")
    meta_client_id: str | None = Field(
        default=None, description="App ID of the operator's Meta app with Facebook Login (instagram and facebook)."
    )
    meta_client_secret: SecretStr | None = Field(default=None, description="App Secret of that Meta app.")
    meta_authorize_url: str = Field(
        default="https://www.facebook.com/v25.0/dialog/oauth", description="Facebook Login's authorization dialog."
    )
    meta_token_url: str = Field(
        default="https://graph.facebook.com/v25.0/oauth/access_token", description="Facebook Login's token endpoint."
    )
    meta_graph_url: str = Field(
        default="https://graph.facebook.com/v25.0", description="Graph API root (Instagram and Facebook Pages)."
    )
    threads_client_id: str | None = Field(
        default=None, description="Threads App ID of the operator's Meta app with the Threads use case."
    )
    threads_client_secret: SecretStr | None = Field(default=None, description="Threads App Secret of that app.")
    threads_authorize_url: str = Field(
        default="https://threads.net/oauth/authorize", description="Threads' authorization window."
    )
    threads_token_url: str = Field(
        default="https://graph.threads.net/oauth/access_token", description="Threads' token endpoint."
    )
    threads_api_url: str = Field(default="https://graph.threads.net/v1.0", description="Threads API root.")
    linkedin_client_id: str | None = Field(default=None, description="Client ID of the operator's LinkedIn app.")
    linkedin_client_secret: SecretStr | None = Field(
        default=None, description="Primary Client Secret of the operator's LinkedIn app."
    )
    linkedin_authorize_url: str = Field(
        default="https://www.linkedin.com/oauth/v2/authorization",
        description="LinkedIn's OAuth 2.0 authorization page.",
    )
    linkedin_token_url: str = Field(
        default="https://www.linkedin.com/oauth/v2/accessToken", description="LinkedIn's OAuth 2.0 token endpoint."
    )
    linkedin_api_url: str = Field(default="https://api.linkedin.com", description="LinkedIn API root (/v2, /rest).")
    linkedin_version: str = Field(
        default="202510",
        description="The LinkedIn-Version header (YYYYMM); LinkedIn serves each version for at least a year.",
    )
    tiktok_client_key: str | None = Field(default=None, description="Client key of the operator's TikTok app.")
    tiktok_client_secret: SecretStr | None = Field(default=None, description="Client secret of the TikTok app.")
    tiktok_authorize_url: str = Field(
        default="https://www.tiktok.com/v2/auth/authorize/", description="TikTok's Login Kit authorization page."
    )
    tiktok_token_url: str = Field(
        default="https://open.tiktokapis.com/v2/oauth/token/", description="TikTok's OAuth 2.0 token endpoint."
    )
    tiktok_api_url: str = Field(default="https://open.tiktokapis.com", description="TikTok Open API root (/v2).")
    pinterest_client_id: str | None = Field(default=None, description="App ID of the operator's Pinterest app.")
    pinterest_client_secret: SecretStr | None = Field(default=None, description="App secret key of that app.")
    pinterest_authorize_url: str = Field(
        default="https://www.pinterest.com/oauth/", description="Pinterest's OAuth 2.0 authorization page."
    )
    pinterest_token_url: str = Field(
        default="https://api.pinterest.com/v5/oauth/token", description="Pinterest's OAuth 2.0 token endpoint."
    )
    pinterest_api_url: str = Field(default="https://api.pinterest.com/v5", description="Pinterest API v5 root.")
    linkedin_organizations: bool = Field(
        default=False,
        description="The LinkedIn app has the Community Management API: members may also post as the organisations "
        "they administer (asks for w_organization_social, r_organization_social, r_organization_admin).",
    )
    rate_limit_wait: float = Field(
        default=30.0,
        description="Seconds a publication waits in place for a platform's rate limit to reset; longer waits "
        "return the post to the schedule until the reset.",
    )
    media_processing_polls: int = Field(
        default=60, description="Times a connector asks whether uploaded media finished processing."
    )
    media_processing_seconds: float = Field(
        default=30.0,
        description="Seconds between a connector's questions whether a media container (Instagram, Threads) "
        "finished processing.",
    )


class DistributionSettings(BaseModel):
    """Scheduling and publishing (CATALOG.md §10)."""

    attribution_text: str = Field(default="Created with toolhost", description="Appended when attribution=true.")
    retry_delays: list[int] = Field(
        default=[60, 300, 900],
        description="Seconds before each retry of a failed publication; then `failed`.",
    )
    max_lease_losses: int = Field(
        default=5, description="Claims lost to dead workers before a post fails with worker_lost."
    )
    claim_batch: int = Field(default=50, description="Due posts one worker claims per transaction.")
    publish_concurrency: int = Field(default=16, description="Publications one worker runs at once.")
    connect_link_seconds: int = Field(default=120, description="How long a connect link may wait to be opened.")
    connect_page_seconds: int = Field(default=900, description="How long an opened connect page stays valid.")
    connectors: ConnectorSettings = ConnectorSettings()


class ProviderSettings(BaseModel):
    """Outside capabilities; every kind has a working built-in default."""

    text_default: str = Field(default="builtin", description="Default text model name.")
    openai_base_url: str | None = Field(default=None, description="OpenAI-compatible chat endpoint base URL.")
    openai_api_key: str | None = Field(default=None, description="Key for the chat endpoint.")
    openai_model: str | None = Field(default=None, description="Model name at the chat endpoint.")
    model_aliases: dict[str, str] = Field(default={}, description="Old model name -> configured model name.")
    openai_timeout: float | None = Field(
        default=None,
        description="Caps every chat call's timeout in seconds; unset = each tool's catalogued timeout.",
    )
    openai_max_retries: int = Field(default=2, description="Retries of a chat call answered 429 or 5xx.")
    openai_retry_backoff: float = Field(
        default=1.0,
        description="Seconds before the first retry; doubles each time (a Retry-After header wins).",
    )


class VoiceSettings(BaseModel):
    """The builtin voice model (espeak-ng) of generate_voiceover and generate_video's narration."""

    espeak_binary: str = Field(
        default="espeak-ng",
        description="The espeak-ng executable: a name looked up on PATH or a path; absent = no builtin voice.",
    )
    voices: dict[str, str] = Field(
        default={
            "rachel": "en-us+f3",
            "daniel": "en-gb+m3",
            "adam": "en-us+m1",
            "gigi": "en-us+f4",
            "charlotte": "en-gb+f2",
        },
        description="Catalogue voice name -> espeak-ng voice (language+variant).",
    )
    synthesis_timeout: float = Field(default=60.0, description="Seconds one espeak-ng run may take.")
    wait_seconds: float = Field(
        default=45.0, description="How long generate_voiceover waits for its job before answering pending."
    )
    poll_seconds: float = Field(default=0.5, description="Seconds between generate_voiceover's looks at its job.")


class VideoSettings(BaseModel):
    """The video module (CATALOG.md §4): render_demo_video's wait and render_hyperframes' headless Chromium."""

    wait_seconds: float = Field(
        default=60.0, description="How long render_demo_video waits for its job before answering pending."
    )
    poll_seconds: float = Field(default=0.5, description="Seconds between render_demo_video's looks at its job.")
    chromium_binary: str = Field(
        default="/usr/bin/chromium",
        description="Headless Chromium for render_hyperframes: a path or a name on PATH; absent = no HTML renders.",
    )
    page_ready_seconds: float = Field(
        default=15.0, description="How long a hyperframes page may take after load to expose window.__hf."
    )
    max_subresource_bytes: int = Field(default=20_000_000, description="Largest subresource a composition may load.")
    max_render_fetch_bytes: int = Field(
        default=100_000_000, description="Total bytes of subresources one hyperframes render may load."
    )


class QualitySettings(BaseModel):
    """The quality score of CATALOG.md §9 and the trend cache of the ideation tools."""

    brand_keyword: str | None = Field(
        default=None,
        description="Brand keyword quality_check looks for when neither a project brand nor an argument gives one.",
    )
    trends_cache_seconds: int = Field(default=3600, description="How long fetch_trends reuses a fetched result.")


class SkillSettings(BaseModel):
    """The skills of CATALOG.md §16."""

    tier_minimum: dict[str, Tier] = Field(
        default={},
        description="Skill slug or workflow id -> the lowest tier that may read it (unlisted skills: trial).",
    )


class MetricsSettings(BaseModel):
    """Who may read /metrics (Prometheus format)."""

    token: SecretStr | None = Field(
        default=None,
        description="The bearer token a scraper sends (`Authorization: Bearer <token>`) to read /metrics; "
        "unset: /metrics is refused to everyone, loopback included.",
    )


class Settings(BaseSettings):
    """Every setting of toolhost; read from TOOLHOST_* variables (nested with __)."""

    # Errors never echo a value: a database URL or a secret would land in a log.
    model_config = SettingsConfigDict(
        env_prefix="TOOLHOST_", env_nested_delimiter="__", extra="ignore", hide_input_in_errors=True
    )

    environment: Literal["development", "production", "test"] = Field(
        default="development", description="Where this install runs (development, production, test)."
    )
    host: str = Field(default="127.0.0.1", description="Address `serve` listens on.")
    port: int = Field(default=8000, description="Port `serve` listens on.")
    public_url: str = Field(
        default="",
        description="The server root as callers see it (signed media URLs, connect links, OpenAPI servers); "
        "unset: http://<host>:<port> of `serve`, with 127.0.0.1 for a wildcard host.",
    )
    public_api_url: str | None = Field(default=None, description="A second root the brand tools are listed on.")
    secret_key: str = Field(
        default="",
        description="One long random secret the keys are derived from, instead of a key file (at least 32 "
        "characters; the published 'change-me' is refused). Unset: random keys in `secret_file`.",
    )
    secret_file: Path | None = Field(
        default=None,
        description="The key file: the generations of signing, media-URL and encryption keys, owner-only, written "
        "by the first start and by `toolhost secrets rotate`. Unset: beside an SQLite database "
        "(toolhost.db -> toolhost.secret); with PostgreSQL set it (a path every process shares) or `secret_key`.",
    )
    database_url: str = Field(
        default="",
        description=f"{DATABASE_URL_EXAMPLES} (run on their async drivers, aiosqlite and asyncpg); unset: the "
        "toolhost.db of the current directory or of the nearest directory above it, else ./toolhost.db.",
    )
    redis_url: str | None = Field(default=None, description="Redis for shared rate limits when scaled out.")
    log_level: str = Field(
        default="INFO", description="Logging level of toolhost's loggers; WARNING and above drop the call lines."
    )

    bootstrap: BootstrapSettings = BootstrapSettings()
    ratelimit: RateLimitSettings = RateLimitSettings()
    signin: SignInSettings = SignInSettings()
    oauth: OAuthSettings = OAuthSettings()
    credits: CreditSettings = CreditSettings()
    policy: PolicySettings = PolicySettings()
    fetch: FetchSettings = FetchSettings()
    jobs: JobSettings = JobSettings()
    media: MediaSettings = MediaSettings()
    providers: ProviderSettings = ProviderSettings()
    distribution: DistributionSettings = DistributionSettings()
    quality: QualitySettings = QualitySettings()
    skills: SkillSettings = SkillSettings()
    voice: VoiceSettings = VoiceSettings()
    video: VideoSettings = VideoSettings()
    metrics: MetricsSettings = MetricsSettings()

    _keyring: Keyring = PrivateAttr()

    @field_validator("database_url")
    @classmethod
    def with_async_driver(cls, value: str) -> str:
        """sqlite:// and postgresql:// URLs run on the async drivers; any other database is refused at start."""
        return async_database_url(value) if value else value

    @model_validator(mode="after")
    def locate_database(self) -> Settings:
        """The database found from the current directory when unset (its key file is kept beside it)."""
        if not self.database_url:
            self.database_url = sqlite_url(find_database(Path.cwd()) or Path.cwd() / DATABASE_FILE)
        return self

    @model_validator(mode="after")
    def default_public_url(self) -> Settings:
        """Setting only the port (or host) moves the links the service hands out with it."""
        if not self.public_url:
            self.public_url = f"http://{_reachable_host(self.host)}:{self.port}"
        return self

    @model_validator(mode="after")
    def load_secret_keys(self) -> Settings:
        """The keys, at start: no install signs with a published or a missing key."""
        try:
            self._keyring = Keyring.load(secret=self.secret_key, path=self.key_file, create=self.key_file is not None)
        except KeyringError as error:
            raise ValueError(str(error)) from None
        return self

    @property
    def key_file(self) -> Path | None:
        """Where the key file is or will be: `secret_file`, else beside an SQLite database file."""
        if self.secret_file is not None:
            return self.secret_file
        database = sqlite_database_file(self.database_url)
        return database.with_suffix(".secret") if database is not None else None

    @property
    def keyring(self) -> Keyring:
        """The signing, media-URL and encryption keys (toolhost.keyring)."""
        return self._keyring

    @property
    def api_root(self) -> str:
        """`public_url` without a trailing slash."""
        return self.public_url.rstrip("/")

    @property
    def served_over_https(self) -> bool:
        """Whether callers reach the server over TLS: its cookies are then Secure."""
        return self.public_url.lower().startswith("https://")


def async_database_url(url: str) -> str:
    """The URL on toolhost's async driver (sqlite:///x.db -> sqlite+aiosqlite:///x.db); ValueError for others.

    The error names the scheme only: a URL may carry a password.
    """
    scheme, separator, rest = url.strip().partition("://")
    driver = ASYNC_DRIVERS.get(scheme.lower()) if separator else None
    if driver is None:
        shown = f"{scheme}://" if separator else "this value"
        raise ValueError(f"{shown} is not a database toolhost runs on; write {DATABASE_URL_EXAMPLES}")
    return f"{driver}://{rest}"


def sqlite_url(path: Path) -> str:
    """The async URL of an SQLite file."""
    return f"sqlite+aiosqlite:///{path}"


def find_database(start: Path) -> Path | None:
    """The toolhost.db in `start` or in the nearest directory above it (as git finds its repository)."""
    for directory in (start, *start.parents):
        candidate = directory / DATABASE_FILE
        if candidate.is_file():
            return candidate
    return None


class DatabaseSetting(BaseSettings):
    """TOOLHOST_DATABASE_URL alone, read before the other settings, which may make a secret file beside it.

    An operator command asks here first whether the database exists, so it refuses to run without one
    instead of leaving an empty database or a secret behind in the current directory.
    """

    model_config = SettingsConfigDict(env_prefix="TOOLHOST_", extra="ignore", hide_input_in_errors=True)

    database_url: str = ""

    @field_validator("database_url")
    @classmethod
    def with_async_driver(cls, value: str) -> str:
        """The same check as Settings makes."""
        return async_database_url(value) if value else value


def _reachable_host(host: str) -> str:
    """The host for links to a server listening on `host`: a wildcard address is reached on loopback."""
    try:
        address = ipaddress.ip_address(host)
    except ValueError:
        return host
    if address.is_unspecified:
        return "127.0.0.1"
    return f"[{host}]" if address.version == 6 else host


def sqlite_database_file(url: str) -> Path | None:
    """The file of an SQLite database URL, or None for another database or an in-memory one."""
    parsed = make_url(url)
    if parsed.get_backend_name() != "sqlite" or parsed.database in (None, "", ":memory:"):
        return None
    return Path(str(parsed.database))


def load_settings(**overrides: Any) -> Settings:
    """Builds the settings from the environment, with explicit overrides on top (tests, CLI flags)."""
    return Settings(**overrides)
