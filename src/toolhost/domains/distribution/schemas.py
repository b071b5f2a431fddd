"""Input and output models of the distribution tools (CATALOG.md §10 and two of §7).."""

from __future__ import annotations

from typing import Annotated, Any, Literal

from pydantic import BaseModel, ConfigDict, Field, StringConstraints

from toolhost.platform.fields import (
    SOCIAL_PLATFORMS,
    Confirm,
    ConnectionPlatform,
    DateTimeWithOffset,
    Record,
    ShortText,
    SocialPlatform,
    Text,
    TextFormat,
    Url,
    UUIDStr,
)
from toolhost.platform.registry import ToolInput, ToolOutput

MediaKey = Annotated[str, StringConstraints(min_length=1, max_length=1024)]
IdempotencyKey = Annotated[str, StringConstraints(pattern=r"^[a-zA-Z0-9_-]{8,128}$")]
Hashtag = Annotated[str, StringConstraints(max_length=1_000)]


class _Options(BaseModel):
    model_config = ConfigDict(extra="allow")


class TikTokOptions(_Options):
    privacy_status: (
        Literal["PUBLIC_TO_EVERYONE", "MUTUAL_FOLLOW_FRIENDS", "FOLLOWER_OF_CREATOR", "SELF_ONLY"] | None
    ) = None
    enable_duet: bool | None = None
    enable_comment: bool | None = None
    enable_stitch: bool | None = None
    is_ai_generated: bool | None = None
    brand_content: bool | None = None
    brand_organic: bool | None = None
    use_inbox: bool | None = None


class YouTubeOptions(_Options):
    title: Annotated[str, StringConstraints(max_length=100)] | None = None
    description: Annotated[str, StringConstraints(max_length=5_000)] | None = None
    privacy_status: Literal["public", "unlisted", "private"] | None = None
    category_id: Annotated[str, StringConstraints(max_length=20)] | None = None
    tags: Annotated[list[Hashtag], Field(max_length=100)] | None = None
    made_for_kids: bool | None = None
    notify_subscribers: bool | None = None
    contains_synthetic_media: bool | None = None


class FacebookOptions(_Options):
    page_id: ShortText | None = None
    audience: ShortText | None = None


class InstagramOptions(_Options):
    location: ShortText | None = None
    collaborators: Annotated[list[ShortText], Field(max_length=100)] | None = None
    cover_timestamp: float | None = None
    share_to_feed: bool | None = None
    first_comment: Text | None = None
    is_ai_generated: bool | None = None


class BlueskyOptions(_Options):
    content_labels: Annotated[list[ShortText], Field(max_length=100)] | None = None


class LinkedInOptions(_Options):
    article_url: Url | None = None
    # Post as this organisation (its id or urn:li:organization URN) instead of the signed-in member.
    organization: ShortText | None = None


class PinterestOptions(_Options):
    # The board the Pin goes to; without it, the account's only board.
    board_id: Annotated[str, StringConstraints(pattern=r"^\d{1,32}$")] | None = None
    # Where the Pin leads when opened.
    link: Url | None = None
    alt_text: Annotated[str, StringConstraints(max_length=500)] | None = None


class TwitterOptions(_Options):
    # Posts published as replies below the first, in order (an X thread); the caption is the first post.
    thread: Annotated[list[Text], Field(max_length=24)] | None = None
    paid_partnership: bool | None = None
    disclosure: ShortText | Record | None = None
    disclosure_text: ShortText | None = None
    disclosure_label: ShortText | None = None


class MastodonOptions(_Options):
    visibility: Literal["public", "unlisted", "private", "direct"] | None = None
    spoiler_text: Annotated[str, StringConstraints(max_length=500)] | None = None
    sensitive: bool | None = None
    language: Annotated[str, StringConstraints(max_length=16)] | None = None


class PlatformMetadata(_Options):
    tiktok: TikTokOptions | None = None
    youtube: YouTubeOptions | None = None
    facebook: FacebookOptions | None = None
    instagram: InstagramOptions | None = None
    threads: Record | None = None
    bluesky: BlueskyOptions | None = None
    linkedin: LinkedInOptions | None = None
    twitter: TwitterOptions | None = None
    mastodon: MastodonOptions | None = None
    pinterest: PinterestOptions | None = None


class SchedulePostIn(ToolInput):
    media_url: Url | None = None
    media_urls: Annotated[list[Url], Field(min_length=2, max_length=10)] | None = None
    r2_key: MediaKey | None = None
    r2_keys: Annotated[list[MediaKey], Field(min_length=2, max_length=10)] | None = None
    job_id: Annotated[str, StringConstraints(max_length=64)] | None = None
    job_ids: (
        Annotated[list[Annotated[str, StringConstraints(max_length=64)]], Field(min_length=2, max_length=10)] | None
    ) = None
    media_type: Literal["IMAGE", "VIDEO", "CAROUSEL_ALBUM"] | None = None
    caption: Text | None = None
    title: Annotated[str, StringConstraints(max_length=300)] | None = None
    platforms: Annotated[list[SocialPlatform], Field(min_length=1, max_length=len(SOCIAL_PLATFORMS))]
    hashtags: Annotated[list[Hashtag], Field(max_length=100)] | None = None
    schedule_at: DateTimeWithOffset | None = None
    project_id: UUIDStr | None = None
    response_format: TextFormat = "text"
    attribution: bool = False
    account_id: UUIDStr | None = None
    account_ids: dict[SocialPlatform | Literal["x"], UUIDStr] | None = None
    auto_rehost: bool = True
    idempotency_key: IdempotencyKey | None = None
    platform_metadata: PlatformMetadata | None = None


class PlatformResult(BaseModel):
    success: bool
    jobId: str | None
    postId: str | None


class SchedulePostOut(ToolOutput):
    success: bool
    results: dict[str, PlatformResult]
    scheduledAt: str | None
    idempotency_key: str
    project_auto_resolved: str | None = None

    def summary(self) -> str:
        when = f"scheduled for {self.scheduledAt}" if self.scheduledAt else "queued to publish now"
        return "\n".join(f"OK {name}: post {result.postId} {when}" for name, result in self.results.items())


class ReschedulePostIn(ToolInput):
    post_id: UUIDStr
    project_id: UUIDStr | None = None
    scheduled_at: DateTimeWithOffset
    expected_scheduled_at: DateTimeWithOffset | None = None
    response_format: TextFormat = "text"


class ReschedulePostOut(ToolOutput):
    success: bool
    post_id: str
    project_id: str
    previous_scheduled_at: str | None
    scheduled_at: str

    def summary(self) -> str:
        before = self.previous_scheduled_at or "now"
        return f"Post {self.post_id} rescheduled from {before} to {self.scheduled_at}."


class CancelScheduledPostIn(ToolInput):
    post_id: UUIDStr
    confirm: Confirm
    project_id: UUIDStr | None = None


class CancelScheduledPostOut(ToolOutput):
    success: bool
    cancelled: bool
    post_id: str
    status: Literal["cancelled"]
    refunded_credits: int
    message: str
    already_cancelled: bool | None = None

    def summary(self) -> str:
        return self.message


class ListRecentPostsIn(ToolInput):
    project_id: UUIDStr | None = None
    platform: SocialPlatform | None = None
    status: Literal["draft", "scheduled", "published", "failed"] | None = None
    days: Annotated[int, Field(ge=1, le=90)] = 7
    limit: Annotated[int, Field(ge=1, le=50)] = 20
    response_format: TextFormat = "text"


class RecentPost(BaseModel):
    id: str
    platform: str
    status: str
    title: str | None
    external_post_id: str | None
    published_at: str | None
    scheduled_at: str | None
    created_at: str
    error: str | None


class ListRecentPostsOut(ToolOutput):
    posts: list[RecentPost]

    def summary(self) -> str:
        if not self.posts:
            return "No posts."
        return "\n".join(
            f"{post.created_at[:16]} {post.platform} {post.status}: {post.title or post.id}"
            + (f" ({post.external_post_id})" if post.external_post_id else "")
            + (f" error: {post.error}" if post.error else "")
            for post in self.posts
        )


class ListConnectedAccountsIn(ToolInput):
    project_id: UUIDStr | None = None
    include_all: bool = False
    response_format: TextFormat = "text"


class ConnectedAccountView(BaseModel):
    id: str
    platform: str
    connector: str
    status: str
    effective_status: str
    username: str | None
    created_at: str
    updated_at: str
    expires_at: str | None
    has_refresh_token: bool
    project_id: str


class ListConnectedAccountsOut(ToolOutput):
    accounts: list[ConnectedAccountView]
    project_auto_resolved: str | None = None

    def summary(self) -> str:
        if not self.accounts:
            return "No connected accounts. Call start_platform_connection to connect one."
        return "\n".join(
            f"{account.platform} ({account.connector}) {account.username or '-'}: "
            f"{account.effective_status} [{account.id}]"
            for account in self.accounts
        )


class StartPlatformConnectionIn(ToolInput):
    platform: ConnectionPlatform
    project_id: UUIDStr | None = None
    response_format: TextFormat = "text"


class StartPlatformConnectionOut(ToolOutput):
    platform: str
    project_id: str
    deep_link: str
    expires_at: str
    next_step: str

    def summary(self) -> str:
        return f"Open {self.deep_link} before {self.expires_at} to connect {self.platform}. {self.next_step}"


class WaitForConnectionIn(ToolInput):
    platform: ConnectionPlatform
    project_id: UUIDStr | None = None
    timeout_s: Annotated[int, Field(ge=5, le=600)] = 120
    poll_interval_s: Annotated[int, Field(ge=2, le=30)] = 5
    response_format: TextFormat = "text"


class WaitedAccount(BaseModel):
    id: str
    username: str | None
    connected_at: str


class WaitForConnectionOut(ToolOutput):
    connected: bool
    platform: str | None = None
    project_id: str | None = None
    account_id: str | None = None
    username: str | None = None
    connected_at: str | None = None
    accounts: list[WaitedAccount] | None = None
    timed_out: bool | None = None
    attempts: int
    message: str | None = None

    def summary(self) -> str:
        if not self.connected:
            return self.message or "Not connected yet."
        if self.account_id:
            return f"Connected {self.platform} account {self.username or ''} [{self.account_id}]."
        return self.message or "Connected."


class FindNextSlotsIn(ToolInput):
    project_id: UUIDStr | None = None
    platforms: Annotated[list[SocialPlatform], Field(min_length=1, max_length=len(SOCIAL_PLATFORMS))]
    count: Annotated[int, Field(ge=1, le=20)] = 7
    start_after: DateTimeWithOffset | None = None
    min_gap_hours: Annotated[int, Field(ge=1, le=24)] = 4
    response_format: TextFormat = "text"


class Slot(BaseModel):
    platform: str
    datetime: str
    day_of_week: str
    hour: int
    engagement_score: int
    conflict: bool


class FindNextSlotsOut(ToolOutput):
    slots: list[Slot]
    total_candidates: int
    conflicts_avoided: int

    def summary(self) -> str:
        if not self.slots:
            return "No free slots in the next 7 days."
        return "\n".join(
            f"{slot.platform} {slot.day_of_week} {slot.datetime} (score {slot.engagement_score})" for slot in self.slots
        )


class InlinePlanPost(BaseModel):
    model_config = ConfigDict(extra="allow")

    id: Annotated[str, StringConstraints(max_length=200)] | None = None
    caption: Text | None = None
    platform: Annotated[str, StringConstraints(max_length=20)] | None = None
    connected_account_id: UUIDStr | None = None
    title: Annotated[str, StringConstraints(max_length=300)] | None = None
    media_url: Annotated[str, StringConstraints(max_length=2_048)] | None = None
    schedule_at: DateTimeWithOffset | None = None
    hashtags: Annotated[list[Hashtag], Field(max_length=100)] | None = None


class InlinePlan(BaseModel):
    model_config = ConfigDict(extra="allow")

    project_id: UUIDStr | None = None
    account_ids: dict[str, UUIDStr] | None = None
    posts: Annotated[list[InlinePlanPost], Field(max_length=500)] = []


class ScheduleContentPlanIn(ToolInput):
    plan: InlinePlan | None = None
    plan_id: UUIDStr | None = None
    project_id: UUIDStr | None = None
    account_ids: dict[str, UUIDStr] | None = None
    auto_slot: bool = True
    dry_run: bool = False
    enforce_quality: bool = True
    quality_threshold: Annotated[int, Field(ge=0, le=35)] | None = None
    batch_size: Annotated[int, Field(ge=1, le=10)] = 4
    idempotency_seed: Annotated[str, StringConstraints(max_length=128)] | None = None
    response_format: TextFormat = "text"


class ScheduleContentPlanOut(ToolOutput):
    model_config = ConfigDict(extra="forbid")

    dry_run: bool | None = None
    plan_id: str | None
    approvals: dict[str, int]
    posts: list[dict[str, Any]]
    summary_: dict[str, Any] = Field(alias="summary", serialization_alias="summary")
    project_auto_resolved: str | None = None

    def summary(self) -> str:
        data = self.summary_
        if self.dry_run:
            passed, total = data.get("passed", 0), data.get("total_posts", 0)
            return f"Dry run: {passed} of {total} posts pass the quality gate."
        lines = [f"Scheduled {data.get('scheduled', 0)} of {data.get('total_posts', 0)}"]
        lines += [
            f"- {post.get('id')} ({post.get('platform')}): {post.get('error')}"
            for post in self.posts
            if not post.get("success")
        ]
        return "\n".join(lines)
