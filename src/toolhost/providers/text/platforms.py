"""The platform rules of CATALOG.md §1.5 that the composer, adapt_content and the quality score share."""

from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True, slots=True)
class PlatformRules:
    """Caption limit, hashtag guidance and format rules of one platform."""

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


RULES: dict[str, PlatformRules] = {
    "twitter": PlatformRules("twitter", "Twitter", 280, 1, 3, line_breaks=False),
    "threads": PlatformRules("threads", "Threads", 500, 0, 3, links_clickable=False),
    "bluesky": PlatformRules("bluesky", "Bluesky", 300, 0, 3, line_breaks=False),
    "mastodon": PlatformRules("mastodon", "Mastodon", 500, 1, 4),
    "instagram": PlatformRules("instagram", "Instagram", 2200, 5, 15, needs_media=True, links_clickable=False),
    "tiktok": PlatformRules("tiktok", "TikTok", 4000, 3, 5, needs_media=True, links_clickable=False),
    "youtube": PlatformRules("youtube", "YouTube", 5000, 0, 5, needs_media=True, title_limit=100),
    "linkedin": PlatformRules("linkedin", "LinkedIn", 3000, 3, 5),
    "facebook": PlatformRules("facebook", "Facebook", 63206, 0, 3),
}

# Without a platform the composer writes for a general social feed of moderate length.
GENERAL = PlatformRules("general", "General", 1500, 2, 4)


def rules_for(platform: str | None) -> PlatformRules:
    """The rules of a platform (x means twitter); the general rules when none is given."""
    if platform is None:
        return GENERAL
    name = platform.lower()
    if name == "x":
        name = "twitter"
    return RULES.get(name, GENERAL)


def ideal_length(rules: PlatformRules) -> tuple[int, int]:
    """The caption length range that reads well on the platform (characters, inclusive)."""
    if rules.caption_limit <= 300:
        return 80, rules.caption_limit
    if rules.caption_limit <= 500:
        return 120, rules.caption_limit
    return 250, min(rules.caption_limit, 1800)
