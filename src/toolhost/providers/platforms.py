"""The one table of the ten social platforms (CATALOG.md §1.5, §7): names, limits, format rules and the facts
that the composer, the quality score, scheduling, planning, brand extraction and the swipe file share.

Which way the names flow: the input models' platform enum (`platform.fields.SocialPlatform`, the catalogue's
P9 and pinterest) lives in the platform layer, because the JSON Schema of every tool is built there and the
platform imports nothing above it. This table sits one layer up, in providers, where domains and providers read it. So
the table imports the enum and checks itself against it when it is imported: a platform added to one and not
the other fails at start, not at the first call that looks it up.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Literal

from toolhost.platform.fields import SOCIAL_PLATFORMS

MB = 1024 * 1024


@dataclass(frozen=True, slots=True)
class MediaKind:
    """What one kind of attachment (image, gif or video) may be on a platform; None is not limited."""

    content_types: tuple[str, ...]
    max_bytes: int
    min_seconds: float | None = None
    max_seconds: float | None = None
    # width / height
    min_aspect: float | None = None
    max_aspect: float | None = None
    min_side: int | None = None
    # width * height
    max_pixels: int | None = None


@dataclass(frozen=True, slots=True)
class MediaRules:
    """The attachments one post may carry on a platform, and the documentation section the numbers follow."""

    source: str
    kinds: dict[str, MediaKind] = field(default_factory=dict)
    max_items: int = 10
    # Kinds that fill a post on their own (one video, never beside an image).
    alone: tuple[str, ...] = ()


@dataclass(frozen=True, slots=True)
class PlatformRules:
    """What is true of one platform: its limits, how a post reads there, and how it is named elsewhere."""

    name: str
    display_name: str
    caption_limit: int
    hashtags_min: int
    hashtags_max: int
    needs_media: bool = False
    title_limit: int | None = None
    # Where readers expect short paragraphs separated by blank lines rather than one block.
    line_breaks: bool = True
    # Links in captions are not clickable there, so a CTA points elsewhere ("link in bio").
    links_clickable: bool = True
    # Other names a caller may use for the platform in any argument ("x" for twitter).
    aliases: tuple[str, ...] = ()
    # The media types a content plan alternates, post by post, on the platform (CATALOG.md §7).
    plan_media_types: tuple[str, ...] = ("text-only",)
    # UTC hours that suit a post before a project's own history says otherwise.
    preferred_hours: tuple[int, ...] = ()
    # Web hosts whose pages are the platform's posts (subdomains included).
    hosts: tuple[str, ...] = ()
    # A profile page for a handle ("{}" is the handle), and the short names written before one ("ig:@brand").
    profile_url: str | None = None
    handle_prefixes: tuple[str, ...] = ()
    # How a caption is measured against caption_limit: "characters", "weighted" (twitter-text: most
    # characters outside Latin count 2, every URL 23) or "emoji_bytes" (each emoji counts its UTF-8 bytes).
    caption_measure: Literal["characters", "weighted", "emoji_bytes"] = "characters"
    # What the platform itself refuses in a caption (not the composer's hashtag guidance above): at most this
    # many hashtags and @mentions; None: not limited.
    hashtag_limit: int | None = None
    mention_limit: int | None = None
    # The attachments a post may carry, checked when it is scheduled; None: no rules are known yet.
    media: MediaRules | None = None

    @property
    def video_first(self) -> bool:
        """Whether a plan's posts on the platform are videos, so they are written as scripts."""
        return self.plan_media_types == ("video",)


RULES: dict[str, PlatformRules] = {
    rules.name: rules
    for rules in (
        PlatformRules(
            "youtube",
            "YouTube",
            5000,
            0,
            5,
            needs_media=True,
            title_limit=100,
            plan_media_types=("video",),
            preferred_hours=(14, 16, 18),
            hosts=("youtube.com", "youtu.be"),
            profile_url="https://youtube.com/@{}",
            handle_prefixes=("yt",),
        ),
        PlatformRules(
            "tiktok",
            "TikTok",
            4000,
            3,
            5,
            needs_media=True,
            links_clickable=False,
            plan_media_types=("video",),
            preferred_hours=(10, 14, 18, 21),
            hosts=("tiktok.com",),
            profile_url="https://tiktok.com/@{}",
            handle_prefixes=("tt",),
            media=MediaRules(
                # TikTok Content Posting API, "Media Transfer Guide", video restrictions: MP4, WebM or MOV, at
                # most 4 GB, each side 360 to 4096 px, at most 10 minutes; photo restrictions: JPEG or WEBP, at
                # most 20 MB, up to 35 in a photo post; a video is a post's only media.
                source="TikTok Content Posting API media transfer guide",
                kinds={
                    "image": MediaKind(("image/jpeg", "image/webp"), 20 * MB),
                    "video": MediaKind(
                        ("video/mp4", "video/webm", "video/quicktime"), 4096 * MB, max_seconds=600, min_side=360
                    ),
                },
                max_items=35,
                alone=("video",),
            ),
        ),
        PlatformRules(
            "instagram",
            "Instagram",
            2200,
            5,
            15,
            needs_media=True,
            links_clickable=False,
            plan_media_types=("carousel", "image"),
            preferred_hours=(11, 14, 17, 20),
            hosts=("instagram.com",),
            profile_url="https://instagram.com/{}",
            handle_prefixes=("ig", "insta"),
            # Instagram Platform reference "IG User Media", POST `caption`: at most 2,200 characters, 30 hashtags
            # and 20 @ tags.
            hashtag_limit=30,
            mention_limit=20,
            media=MediaRules(
                # Instagram Platform reference "IG User Media", "Image specifications" (JPEG only, 8 MB, aspect
                # ratio 4:5 to 1.91:1; narrower or wider widths are scaled, not refused) and "Reels specifications"
                # (MOV or MP4, 3 s to 15 min, 300 MB, aspect ratio 0.01:1 to 10:1); "Carousel posts": up to 10
                # images, videos or a mix, each item following the same specifications.
                source="Instagram Platform IG User Media specifications",
                kinds={
                    "image": MediaKind(("image/jpeg",), 8 * MB, min_aspect=4 / 5, max_aspect=1.91),
                    "video": MediaKind(
                        ("video/mp4", "video/quicktime"),
                        300 * MB,
                        min_seconds=3,
                        max_seconds=15 * 60,
                        min_aspect=0.01,
                        max_aspect=10,
                    ),
                },
                max_items=10,
            ),
        ),
        PlatformRules(
            "twitter",
            "Twitter",
            280,
            1,
            3,
            line_breaks=False,
            aliases=("x",),
            preferred_hours=(9, 12, 15, 18),
            hosts=("twitter.com", "x.com"),
            profile_url="https://x.com/{}",
            # X API docs, "Counting characters": a post is at most 280 weighted characters.
            caption_measure="weighted",
            media=MediaRules(
                # X API docs, Media "Introduction: media types & size restrictions" and "Best practices:
                # image / video specifications and recommendations": up to 4 photos, 1 animated GIF or 1 video.
                source="X API media best practices",
                kinds={
                    "image": MediaKind(("image/jpeg", "image/png", "image/webp", "image/gif"), 5 * MB),
                    "gif": MediaKind(("image/gif",), 15 * MB),
                    "video": MediaKind(
                        ("video/mp4", "video/quicktime"),
                        512 * MB,
                        min_seconds=0.5,
                        max_seconds=140,
                        min_aspect=1 / 3,
                        max_aspect=3,
                        min_side=32,
                    ),
                },
                max_items=4,
                alone=("gif", "video"),
            ),
        ),
        PlatformRules(
            "linkedin",
            "LinkedIn",
            3000,
            3,
            5,
            plan_media_types=("text-only", "carousel"),
            preferred_hours=(8, 10, 12, 17),
            hosts=("linkedin.com",),
            profile_url="https://linkedin.com/company/{}",
            handle_prefixes=("li",),
            media=MediaRules(
                # LinkedIn Community Management API, "Images API" (image specifications: JPG, GIF, PNG, at most
                # 36,152,320 pixels), "Videos API" (video specifications: MP4, 3 seconds to 30 minutes, at most
                # 500 MB) and "Posts API" (MultiImage: 2 to 20 images; a video is a post's only media). The Images
                # API names no byte limit; 100 MB only bounds what a worker holds in memory for one upload.
                source="LinkedIn Images, Videos and Posts API",
                kinds={
                    "image": MediaKind(("image/jpeg", "image/png", "image/gif"), 100 * MB, max_pixels=36_152_320),
                    "video": MediaKind(("video/mp4",), 500 * MB, min_seconds=3, max_seconds=30 * 60),
                },
                max_items=20,
                alone=("video",),
            ),
        ),
        PlatformRules(
            "facebook",
            "Facebook",
            63206,
            0,
            3,
            plan_media_types=("image",),
            preferred_hours=(9, 13, 16, 19),
            hosts=("facebook.com",),
            media=MediaRules(
                # Graph API reference "Page Photos", Creating: .jpeg, .bmp, .png, .gif or .tiff, at most 4 MB;
                # Video API "Publish a video" (non-resumable upload by file_url): at most 1 GB and 20 minutes. A
                # video is a post of its own (`/{page-id}/videos`), never beside photos. The Pages API names no
                # count for a multi-photo post; 10 is toolhost's, like schedule_post's media lists.
                source="Graph API Page Photos and Video API publishing",
                kinds={
                    "image": MediaKind(("image/jpeg", "image/bmp", "image/png", "image/gif", "image/tiff"), 4 * MB),
                    "video": MediaKind(("video/mp4", "video/quicktime"), 1024 * MB, max_seconds=20 * 60),
                },
                max_items=10,
                alone=("video",),
            ),
        ),
        PlatformRules(
            "threads",
            "Threads",
            500,
            0,
            3,
            links_clickable=False,
            preferred_hours=(11, 14, 17),
            hosts=("threads.net",),
            # Threads API "Posts", Limitations: at most 500 characters, emojis counted as their UTF-8 bytes.
            caption_measure="emoji_bytes",
            media=MediaRules(
                # Threads API "Posts", "Media specifications": images JPEG or PNG, 8 MB, aspect ratio at most
                # 10:1 (widths are scaled, not refused); videos MOV or MP4, 1 GB, at most 5 minutes, aspect ratio
                # 0.01:1 to 10:1; "Carousel posts": 2 to 20 images, videos or a mix.
                source="Threads API Posts media specifications",
                kinds={
                    "image": MediaKind(("image/jpeg", "image/png"), 8 * MB, min_aspect=1 / 10, max_aspect=10),
                    "video": MediaKind(
                        ("video/mp4", "video/quicktime"), 1024 * MB, max_seconds=300, min_aspect=0.01, max_aspect=10
                    ),
                },
                max_items=20,
            ),
        ),
        PlatformRules(
            "bluesky",
            "Bluesky",
            300,
            0,
            3,
            line_breaks=False,
            preferred_hours=(10, 14, 18),
            hosts=("bsky.app",),
            media=MediaRules(
                # The app.bsky.embed.images lexicon: at most 4 images, each blob at most 1,000,000 bytes.
                source="AT Protocol lexicon app.bsky.embed.images",
                kinds={"image": MediaKind(("image/jpeg", "image/png", "image/webp", "image/gif"), 1_000_000)},
                max_items=4,
            ),
        ),
        PlatformRules("mastodon", "Mastodon", 500, 1, 4, preferred_hours=(9, 13, 17)),
        PlatformRules(
            "pinterest",
            "Pinterest",
            # Pinterest API v5 reference, "Create Pin" (PinCreate): description at most 800 characters, title at
            # most 100; a Pin is an image, 2 to 5 images or a video.
            800,
            0,
            5,
            needs_media=True,
            title_limit=100,
            # A Pin's destination is its `link`; addresses in its description are not followed.
            links_clickable=False,
            plan_media_types=("image",),
            preferred_hours=(14, 20, 21),
            hosts=("pinterest.com", "pin.it"),
            profile_url="https://pinterest.com/{}",
            handle_prefixes=("pin",),
            media=MediaRules(
                # Pinterest API v5 reference: "Create Pin" takes images as image_base64 or multiple_image_base64
                # (content_type image/jpeg or image/png; 2 to 5 images in a carousel) and a video as the media_id
                # of "Register media upload" (media_type video); Pinterest's Pin specifications: images at most
                # 20 MB, videos MP4, MOV or M4V, at most 2 GB, 4 seconds to 15 minutes, aspect ratio 1:2 to
                # 1.91:1. A video is a Pin's only media.
                source="Pinterest API v5 Create Pin and Pin specifications",
                kinds={
                    "image": MediaKind(("image/jpeg", "image/png"), 20 * MB),
                    "video": MediaKind(
                        ("video/mp4", "video/quicktime"),
                        2048 * MB,
                        min_seconds=4,
                        max_seconds=15 * 60,
                        min_aspect=1 / 2,
                        max_aspect=1.91,
                    ),
                },
                max_items=5,
                alone=("video",),
            ),
        ),
    )
}
if tuple(RULES) != SOCIAL_PLATFORMS:
    raise RuntimeError(f"the platform table {tuple(RULES)} differs from the P9 enum {SOCIAL_PLATFORMS}")

# Without a platform the composer writes for a general social feed of moderate length.
GENERAL = PlatformRules("general", "General", 1500, 2, 4)
_ALIASES = {alias: rules.name for rules in RULES.values() for alias in rules.aliases}
_HOSTS = {host: rules.name for rules in RULES.values() for host in rules.hosts}
_PROFILE_URLS = {
    prefix: rules.profile_url
    for rules in RULES.values()
    if rules.profile_url is not None
    for prefix in (rules.name, *rules.aliases, *rules.handle_prefixes)
}


def canonical_name(platform: str) -> str:
    """A platform name lower-cased and trimmed, with an alias resolved (x -> twitter); unknown names stay."""
    name = platform.strip().lower()
    return _ALIASES.get(name, name)


def rules_for(platform: str | None) -> PlatformRules:
    """The rules of a platform (x means twitter); the general rules when none, or an unknown one, is given."""
    if platform is None:
        return GENERAL
    return RULES.get(canonical_name(platform), GENERAL)


def caption_length(rules: PlatformRules, text: str) -> int:
    """The caption's length as the platform counts it against caption_limit."""
    # The counting libraries are imported on first use: together ~25 MB of RSS an idle server need not carry.
    if rules.caption_measure == "weighted":
        from twitter_text import parse_tweet

        return int(parse_tweet(text).weightedLength)
    if rules.caption_measure == "emoji_bytes":
        import emoji

        return len(text) + sum(len(found["emoji"].encode()) - len(found["emoji"]) for found in emoji.emoji_list(text))
    return len(text)


def media_kind(content_type: str, *, animated: bool) -> str | None:
    """image, gif (an animated GIF) or video; None for anything else."""
    if content_type == "image/gif" and animated:
        return "gif"
    if content_type.startswith("image/"):
        return "image"
    if content_type.startswith("video/"):
        return "video"
    return None


def ideal_length(rules: PlatformRules) -> tuple[int, int]:
    """The caption length range that reads well on the platform (characters, inclusive)."""
    if rules.caption_limit <= 300:
        return 80, rules.caption_limit
    if rules.caption_limit <= 500:
        return 120, rules.caption_limit
    return 250, min(rules.caption_limit, 1800)


def platform_of_host(host: str) -> str | None:
    """The platform whose posts a web host serves (www.youtube.com, youtu.be), or None."""
    host = host.lower()
    return next(
        (name for domain, name in _HOSTS.items() if host == domain or host.endswith("." + domain)),
        None,
    )


def profile_url(prefix: str, handle: str) -> str | None:
    """The profile page of `prefix:handle` (instagram:brand, ig:brand, x:brand), or None for another prefix."""
    template = _PROFILE_URLS.get(prefix.lower())
    return template.format(handle) if template is not None else None
