"""What a post must satisfy before it is scheduled: times, caption limits, media, titles, per-platform rules."""

from __future__ import annotations

import re
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
    from toolhost.domains.media.models import MediaObject
    from toolhost.domains.media.service import ResolvedMedia

VIDEO_EXTENSIONS = {"mp4", "mov", "m4v", "webm", "avi", "mkv", "mpeg", "mpg"}
# Platforms whose platform_metadata.<platform>.thread lists posts published below the caption, each a reply.
THREAD_PLATFORMS = ("twitter", "threads")
HASHTAG = re.compile(r"(?<![\w#])#\w+")
MENTION = re.compile(r"(?<![\w@])@[\w.]+")
IMAGE_EXTENSIONS = {"jpg", "jpeg", "png", "webp", "gif", "avif", "heic"}
# The most posts a thread may add below its first (X's own option allows as many).
MAX_THREAD_POSTS = 24


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


def _limit_text(platform: str) -> str:
    rules = social_platforms.RULES[platform]
    if rules.caption_measure == "weighted":
        return (
            f"{platform} ({rules.caption_limit} weighted characters: most characters outside Latin and every emoji "
            "count 2, every link 23)"
        )
    if rules.caption_measure == "emoji_bytes":
        return f"{platform} ({rules.caption_limit} characters, each emoji counting its UTF-8 bytes)"
    return f"{platform} ({rules.caption_limit} characters)"


def check_caption_lengths(platforms: Sequence[str], text: str, metadata: dict[str, Any]) -> None:
    """Every target's caption limit, measured as the platform measures it, and X's thread posts likewise."""
    lengths = {
        platform: social_platforms.caption_length(social_platforms.RULES[platform], text) for platform in platforms
    }
    too_long = [
        platform for platform in platforms if lengths[platform] > social_platforms.RULES[platform].caption_limit
    ]
    if too_long:
        raise ValidationFailed(
            "the caption is over the limit of "
            + ", ".join(f"{_limit_text(platform)}, this one is {lengths[platform]}" for platform in too_long),
            rule="caption_limit",
            limits={platform: social_platforms.RULES[platform].caption_limit for platform in too_long},
            field_errors=[{"path": "caption", "message": f"too long for {', '.join(too_long)}"}],
        )
    for platform in (name for name in THREAD_PLATFORMS if name in platforms):
        rules = social_platforms.RULES[platform]
        thread = (metadata.get(platform) or {}).get("thread") or []
        if not isinstance(thread, list) or len(thread) > MAX_THREAD_POSTS:
            raise ValidationFailed(
                f"platform_metadata.{platform}.thread is a list of at most {MAX_THREAD_POSTS} posts",
                field_errors=[{"path": f"platform_metadata.{platform}.thread", "message": "not a short list"}],
            )
        for index, part in enumerate(thread):
            length = social_platforms.caption_length(rules, str(part))
            if length > rules.caption_limit:
                raise ValidationFailed(
                    f"thread post {index + 1} is over the limit of {_limit_text(platform)}, this one is {length}",
                    rule="caption_limit",
                    limits={platform: rules.caption_limit},
                    field_errors=[
                        {"path": f"platform_metadata.{platform}.thread.{index}", "message": f"too long for {platform}"}
                    ],
                )


def check_caption_tags(platforms: Sequence[str], text: str) -> None:
    """The hashtags and @mentions a platform refuses beyond its limit (Instagram: 30 and 20)."""
    for platform in platforms:
        rules = social_platforms.RULES[platform]
        for kind, pattern, limit in (
            ("hashtags", HASHTAG, rules.hashtag_limit),
            ("mentions", MENTION, rules.mention_limit),
        ):
            count = len(pattern.findall(text))
            if limit is not None and count > limit:
                raise ValidationFailed(
                    f"{platform} takes at most {limit} {kind} in a caption, this one has {count}",
                    rule=f"{platform}.{kind}",
                    limits={platform: limit},
                    field_errors=[{"path": "caption", "message": f"too many {kind} for {platform}"}],
                )


def _media_refused(platform: str, rule: str, message: str, source: str, **details: Any) -> ValidationFailed:
    return ValidationFailed(
        f"{platform}: {message} ({source})",
        rule=f"{platform}.{rule}",
        recover_with="change the media, or schedule the post without this platform",
        field_errors=[{"path": "media", "message": f"breaks {platform}.{rule}"}],
        **details,
    )


def check_media_rules(platforms: Sequence[str], media: ResolvedMedia) -> None:
    """Each target's media rules from the platform table: count, formats, sizes, durations and aspect ratios."""
    for platform in platforms:
        rules = social_platforms.RULES[platform].media
        if rules is None or not media.entries:
            continue
        if len(media.entries) > rules.max_items:
            raise _media_refused(
                platform,
                "max_items",
                f"a post carries at most {rules.max_items} media items, this one has {len(media.entries)}",
                rules.source,
            )
        kinds = []
        for index, (entry, known, name) in enumerate(zip(media.entries, media.known, media.names, strict=True)):
            content_type = entry.get("content_type") or _type_from_extension(name)
            kind_name = social_platforms.media_kind(content_type, animated=bool(known and known.animated))
            if kind_name == "gif" and "gif" not in rules.kinds:
                kind_name = "image"
            kind = rules.kinds.get(kind_name or "")
            if kind is None or content_type not in kind.content_types:
                allowed = sorted({value for each in rules.kinds.values() for value in each.content_types})
                raise _media_refused(
                    platform,
                    "formats",
                    f"media {index + 1} is {content_type or 'of an unknown type'}; it takes {', '.join(allowed)}",
                    rules.source,
                    allowed=allowed,
                )
            kinds.append(kind_name)
            if known is not None:
                _check_item(platform, rules.source, f"{kind_name}", kind, index, known)
        lonely = [kind for kind in kinds if kind in rules.alone]
        if lonely and len(kinds) > 1:
            raise _media_refused(
                platform,
                f"{lonely[0]}.alone",
                f"a {lonely[0]} must be the post's only media item, this post has {len(kinds)}",
                rules.source,
            )


def _check_item(
    platform: str, source: str, kind_name: str, kind: social_platforms.MediaKind, index: int, known: MediaObject
) -> None:
    label = f"media {index + 1} ({kind_name})"
    if known.size > kind.max_bytes:
        megabytes, limit = known.size / social_platforms.MB, kind.max_bytes / social_platforms.MB
        raise _media_refused(
            platform,
            f"{kind_name}.max_bytes",
            f"{label} is {megabytes:.1f} MB; at most {limit:g} MB",
            source,
        )
    seconds = known.duration_seconds
    if seconds is not None and kind.min_seconds is not None and seconds < kind.min_seconds:
        raise _media_refused(
            platform,
            f"{kind_name}.min_seconds",
            f"{label} lasts {seconds:.1f} s; at least {kind.min_seconds:g} s",
            source,
        )
    if seconds is not None and kind.max_seconds is not None and seconds > kind.max_seconds:
        raise _media_refused(
            platform,
            f"{kind_name}.max_seconds",
            f"{label} lasts {seconds:.1f} s; at most {kind.max_seconds:g} s",
            source,
        )
    if not known.width or not known.height:
        return
    if kind.max_pixels is not None and known.width * known.height > kind.max_pixels:
        raise _media_refused(
            platform,
            f"{kind_name}.max_pixels",
            f"{label} is {known.width}x{known.height}; at most {kind.max_pixels:,} pixels",
            source,
        )
    if kind.min_side is not None and min(known.width, known.height) < kind.min_side:
        raise _media_refused(
            platform,
            f"{kind_name}.min_side",
            f"{label} is {known.width}x{known.height}; each side at least {kind.min_side} px",
            source,
        )
    aspect = known.width / known.height
    if (kind.min_aspect is not None and aspect < kind.min_aspect) or (
        kind.max_aspect is not None and aspect > kind.max_aspect
    ):
        raise _media_refused(
            platform,
            f"{kind_name}.aspect_ratio",
            f"{label} is {known.width}x{known.height} (aspect {aspect:.2f}); "
            f"between {kind.min_aspect or 0:.2f} and {kind.max_aspect or 0:.2f}",
            source,
        )


def _type_from_extension(name: str) -> str:
    extension = _extension(name)
    if extension in VIDEO_EXTENSIONS:
        return "video/mp4" if extension in ("mp4", "m4v") else f"video/{extension}"
    if extension in IMAGE_EXTENSIONS:
        return "image/jpeg" if extension in ("jpg", "jpeg") else f"image/{extension}"
    return ""


def check_platform_rules(
    *,
    platforms: Sequence[str],
    text: str,
    title: str | None,
    media_type: str | None,
    media: ResolvedMedia,
    metadata: dict[str, Any],
) -> None:
    """Caption limits, media rules, required media and titles, Pinterest's title limit, TikTok's privacy rules
    (CATALOG.md §1.5, §10)."""
    check_caption_lengths(platforms, text, metadata)
    check_caption_tags(platforms, text)
    media_count = len(media.entries)
    if media_type == "CAROUSEL_ALBUM" and not 2 <= media_count <= 10:
        raise ValidationFailed(
            "CAROUSEL_ALBUM needs 2 to 10 media items",
            field_errors=[{"path": "media_type", "message": "needs 2-10 items"}],
        )
    check_media_rules(platforms, media)
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
    pin_title_limit = social_platforms.RULES["pinterest"].title_limit
    if "pinterest" in platforms and title and pin_title_limit is not None and len(title) > pin_title_limit:
        # A Pin's title is the post's title, sent whole ("Create Pin": at most 100 characters).
        raise ValidationFailed(
            f"the title is over the limit of pinterest ({pin_title_limit} characters), this one is {len(title)}",
            rule="pinterest.title_limit",
            limits={"pinterest": pin_title_limit},
            field_errors=[{"path": "title", "message": "too long for pinterest"}],
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
    """AI-disclosure flags default to true unless the caller set them (CATALOG.md §10); the rest of the caller's
    platform_metadata (free-form JSON per platform) passes through."""
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
