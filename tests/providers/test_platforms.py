"""The one social-platform table: the P9 enum, aliases, hosts and handle prefixes resolve through it."""

from __future__ import annotations

from toolhost.platform.fields import SOCIAL_PLATFORMS
from toolhost.providers import platforms


def test_the_table_holds_exactly_the_input_enums_platforms_in_its_order() -> None:
    assert tuple(platforms.RULES) == SOCIAL_PLATFORMS


def test_x_is_twitter_everywhere_and_unknown_names_keep_the_general_rules() -> None:
    assert platforms.canonical_name(" X ") == "twitter"
    assert platforms.rules_for("x") is platforms.RULES["twitter"]
    assert platforms.rules_for("myspace") is platforms.GENERAL
    assert platforms.rules_for(None) is platforms.GENERAL


def test_hosts_and_handle_prefixes_name_their_platform() -> None:
    assert platforms.platform_of_host("www.youtube.com") == "youtube"
    assert platforms.platform_of_host("youtu.be") == "youtube"
    assert platforms.platform_of_host("x.com") == "twitter"
    assert platforms.platform_of_host("pin.it") == "pinterest"
    assert platforms.platform_of_host("example.com") is None
    assert platforms.profile_url("ig", "brand") == "https://instagram.com/brand"
    assert platforms.profile_url("X", "brand") == "https://x.com/brand"
    assert platforms.profile_url("mastodon", "brand") is None


def test_only_the_video_platforms_plan_scripts() -> None:
    assert {name for name, rules in platforms.RULES.items() if rules.video_first} == {"youtube", "tiktok"}
