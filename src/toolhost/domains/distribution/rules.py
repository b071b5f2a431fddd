"""What a post must satisfy before it is scheduled: times, caption limits, media, titles, per-platform rules."""

from __future__ import annotations

from collections.abc import Sequence
from datetime import UTC, datetime
from pathlib import PurePosixPath
from typing import TYPE_CHECKING, Any
from urllib.parse import urlsplit

from toolhost.db.base import utcnow
from toolhost.platform.dates import parse_iso
from toolhost.platform.results import ValidationFailed
from toolhost.providers import platforms as social_platforms

if TYPE_CHECKING:
    from toolhost.config import Settings
    from toolhost.domains.media.service import ResolvedMedia

VIDEO_EXTENSIONS = {"mp4", "mov", "m4v", "webm", "avi", "mkv", "mpeg", "mpg"}
IMAGE_EXTENSIONS = {"jpg", "jpeg", "png", "webp", "gif", "avif", "heic"}


def parse_datetime(value: str, path: str) -> datetime:
    """A stored plan post's time (ISO-8601 text with an offset), as UTC; anything else is validation_error.

    Tool arguments never come through here: their models declare `fields.DateTimeWithOffset`. A plan keeps
    its posts' times as text, and plans stored before those checks may hold anything.
    """
    try:
        moment = parse_iso(value)
    except ValueError as error:
        raise ValidationFailed(
            f"{path} is not an ISO-8601 datetime",
            field_errors=[{"path": path, "message": "not an ISO-8601 datetime"}],
        ) from error
    if moment.tzinfo is None:
        raise ValidationFailed(
            f"{path} needs a UTC offset (e.g. Z or +02:00)",
            field_errors=[{"path": path, "message": "missing UTC offset"}],
        )
    return moment.astimezone(UTC)


def future_datetime(value: str, path: str) -> datetime:
    """A stored plan post's time, which must lie in the future."""
    return require_future(parse_datetime(value, path), path)


def require_future(moment: datetime, path: str) -> datetime:
    """The moment, which must lie in the future (checked at scheduling: a repeat of a request is not)."""
    if moment <= utcnow():
        raise ValidationFailed(
            f"{path} is in the past; give a future time or omit it to publish now",
            field_errors=[{"path": path, "message": "must be in the future"}],
        )
    return moment


def single_media_family(
    *,
    media_url: str | None,
    media_urls: Sequence[str] | None,
    r2_key: str | None,
    r2_keys: Sequence[str] | None,
    job_id: str | None,
    job_ids: Sequence[str] | None,
) -> str | Sequence[str] | None:
    """The media reference as given, from one family only (URLs, stored keys or job ids); None without media."""
    given = {
        "media_url": media_url,
        "media_urls": media_urls,
        "r2_key": r2_key,
        "r2_keys": r2_keys,
        "job_id": job_id,
        "job_ids": job_ids,
    }
    families = [name for name, value in given.items() if value is not None]
    if len(families) > 1:
        raise ValidationFailed(
            "give media in one family only: " + ", ".join(families),
            field_errors=[{"path": name, "message": "one media family only"} for name in families],
        )
    return given[families[0]] if families else None


def _extension(name: str) -> str:
    return PurePosixPath(urlsplit(name).path).suffix.lstrip(".").lower()


def infer_media_type(media: ResolvedMedia, declared: str | None) -> str | None:
    """IMAGE, VIDEO or CAROUSEL_ALBUM; None without media."""
    if declared:
        return declared
    if not media.entries:
        return None
    if len(media.entries) > 1:
        return "CAROUSEL_ALBUM"
    entry = media.entries[0]
    content_type = entry.get("content_type") or ""
    extension = _extension(media.names[0]) if media.names else ""
    if content_type.startswith("video/") or extension in VIDEO_EXTENSIONS:
        return "VIDEO"
    if content_type.startswith("image/") or extension in IMAGE_EXTENSIONS:
        return "IMAGE"
    raise ValidationFailed(
        "media_type cannot be inferred from the media; give media_type",
        field_errors=[{"path": "media_type", "message": "required for this media"}],
    )


def final_caption(settings: Settings, caption: str | None, attribution: bool) -> str:
    """The caption as published: with the operator's attribution line when asked."""
    text = (caption or "").strip()
    if attribution:
        text = f"{text}\n\n{settings.distribution.attribution_text}" if text else settings.distribution.attribution_text
    return text


def normalize_hashtags(hashtags: Sequence[str] | None) -> list[str]:
    """Hashtags with their "#", empty ones dropped."""
    return [tag if tag.startswith("#") else f"#{tag}" for tag in (tag.strip() for tag in hashtags or []) if tag]


def published_text(caption: str, hashtags: Sequence[str]) -> str:
    """Caption plus the hashtags not already in it: what the platform's limit applies to."""
    missing = [tag for tag in hashtags if tag.lower() not in caption.lower()]
    return "\n\n".join(part for part in (caption, " ".join(missing)) if part)


def check_platform_rules(
    *,
    platforms: Sequence[str],
    text: str,
    title: str | None,
    media_type: str | None,
    media_count: int,
    metadata: dict[str, Any],
) -> None:
    """Caption limits, required media and titles, TikTok's privacy rules (CATALOG.md §1.5, §10)."""
    too_long = [platform for platform in platforms if len(text) > social_platforms.RULES[platform].caption_limit]
    if too_long:
        raise ValidationFailed(
            "the caption is over the limit of "
            + ", ".join(f"{p} ({social_platforms.RULES[p].caption_limit})" for p in too_long),
            field_errors=[{"path": "caption", "message": f"too long for {', '.join(too_long)}"}],
        )
    if media_type == "CAROUSEL_ALBUM" and not 2 <= media_count <= 10:
        raise ValidationFailed(
            "CAROUSEL_ALBUM needs 2 to 10 media items",
            field_errors=[{"path": "media_type", "message": "needs 2-10 items"}],
        )
    missing_media = [
        platform for platform in platforms if social_platforms.RULES[platform].needs_media and media_count == 0
    ]
    if missing_media:
        raise ValidationFailed(
            f"{', '.join(missing_media)} need media to publish",
            recover_with="add media_url, r2_key or job_id",
            field_errors=[{"path": "media_url", "message": f"required for {', '.join(missing_media)}"}],
        )
    if "youtube" in platforms and not (title or (metadata.get("youtube") or {}).get("title")):
        raise ValidationFailed(
            "youtube needs a title", field_errors=[{"path": "title", "message": "required for youtube"}]
        )
    tiktok = metadata.get("tiktok") or {}
    if "tiktok" in platforms:
        if not tiktok.get("privacy_status") and not tiktok.get("use_inbox"):
            raise ValidationFailed(
                "tiktok needs platform_metadata.tiktok.privacy_status (or use_inbox)",
                code="TIKTOK_PRIVACY_LEVEL_REQUIRED",
                field_errors=[{"path": "platform_metadata.tiktok.privacy_status", "message": "required"}],
            )
        if tiktok.get("brand_content") and tiktok.get("privacy_status") == "SELF_ONLY":
            raise ValidationFailed(
                "branded content cannot be SELF_ONLY on tiktok",
                code="TIKTOK_BRANDED_SELF_ONLY_CONFLICT",
                field_errors=[{"path": "platform_metadata.tiktok.privacy_status", "message": "not SELF_ONLY"}],
            )


def with_disclosure_defaults(metadata: dict[str, Any]) -> dict[str, Any]:
    """AI-disclosure flags default to true unless the caller set them (CATALOG.md §10)."""
    result = {name: dict(value) if isinstance(value, dict) else value for name, value in metadata.items()}
    for platform, flag in (
        ("tiktok", "is_ai_generated"),
        ("instagram", "is_ai_generated"),
        ("youtube", "contains_synthetic_media"),
    ):
        options = result.setdefault(platform, {}) or {}
        if options.get(flag) is None:
            options[flag] = True
        result[platform] = options
    return result
