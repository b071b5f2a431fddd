"""quality_check through HTTP, with and without the project's brand."""

from __future__ import annotations

from tests.conftest import Tenant
from tests.providers.text.brands import BRANDS


async def test_quality_check_reports_seven_categories_and_the_text_summary(tenant: Tenant) -> None:
    response = await tenant.call("quality_check", {"caption": "new video", "platforms": ["tiktok"]})
    body = response.json()
    assert body["content"][0]["text"].startswith("QUALITY SCORE: ")
    data = body["structuredContent"]
    assert len(data["categories"]) == 7
    assert data["maxTotal"] == 35
    assert data["passed"] is False


async def test_generated_posts_pass_quality_and_brand_consistency_on_the_brand(tenant: Tenant) -> None:
    await tenant.data("save_brand_profile", {"brand_context": BRANDS["relay"]})
    for platform in ("linkedin", "twitter", "instagram"):
        generated = await tenant.data(
            "generate_content",
            {
                "prompt": "Write a post about replacing daily standups with async updates",
                "content_type": "caption",
                "platform": platform,
            },
        )
        checked = await tenant.data("quality_check", {"caption": generated["text"], "platforms": [platform]})
        brand = next(item for item in checked["categories"] if item["name"] == "Brand Alignment")
        assert "brand consistency" in brand["detail"].lower()
        assert checked["passed"], (generated["text"], checked["blockers"], checked["categories"])
        consistency = await tenant.data("check_brand_consistency", {"content": generated["text"]})
        assert consistency["passed"], consistency


async def test_a_custom_banned_term_blocks_the_post(tenant: Tenant) -> None:
    data = await tenant.data(
        "quality_check",
        {
            "caption": "Why do remote teams lose focus time? Read our guide and tell us in the comments. #Focus",
            "platforms": ["linkedin"],
            "custom_banned_terms": ["guide"],
        },
    )
    assert 'Contains blocked term: "guide"' in data["blockers"]


async def test_brand_keyword_takes_the_default_string_limit(tenant: Tenant) -> None:
    keyword = "async updates " + "and calmer weeks " * 20  # over the old 200 characters
    data = await tenant.data(
        "quality_check",
        {"caption": "Why async updates work. Reply below.", "platforms": ["linkedin"], "brand_keyword": keyword},
    )
    assert len(data["categories"]) == 7


async def test_novelty_does_not_count_the_posts_own_adaptation_as_a_repeat(tenant: Tenant) -> None:
    original = await tenant.data(
        "generate_content",
        {
            "prompt": "Write a post about replacing daily standups with async updates",
            "content_type": "caption",
            "platform": "linkedin",
        },
    )
    await tenant.data(
        "adapt_content",
        {"content": original["text"], "source_platform": "linkedin", "target_platform": "mastodon"},
    )
    checked = await tenant.data("quality_check", {"caption": original["text"], "platforms": ["linkedin"]})
    novelty = next(item for item in checked["categories"] if item["name"] == "Novelty")
    assert "recent post" not in novelty["detail"], novelty


async def test_novelty_still_counts_a_different_post_that_repeats_a_recent_one(tenant: Tenant) -> None:
    text = (
        "We cancelled our daily standup six months ago. The first two weeks were awkward, then we set one rule: "
        "post your update by 10am, in writing, with one blocker or none. Would your team try it?"
    )
    await tenant.data("adapt_content", {"content": text, "target_platform": "linkedin"})
    repeat = text.replace("Would your team try it?", "What would worry you most?")
    checked = await tenant.data("quality_check", {"caption": repeat, "platforms": ["linkedin"]})
    novelty = next(item for item in checked["categories"] if item["name"] == "Novelty")
    assert "recent post" in novelty["detail"], novelty
