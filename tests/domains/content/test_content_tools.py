"""The generation tools through HTTP against the real app."""

from __future__ import annotations

import re
from typing import Any

import pytest
from sqlalchemy import func, select
from sqlalchemy.ext.asyncio import AsyncSession

from tests.conftest import Tenant
from tests.providers.text.brands import BRANDS
from toolhost.domains.content.models import ContentRecord


async def balance(tenant: Tenant) -> int:
    data = await tenant.data("get_credit_balance", {})
    return int(data["balance"] if "balance" in data else data["credits_remaining"])


async def records(session: AsyncSession) -> int:
    return int(await session.scalar(select(func.count()).select_from(ContentRecord)) or 0)


async def test_generate_content_returns_the_text_alone_and_stores_a_record(
    tenant: Tenant, session: AsyncSession
) -> None:
    response = await tenant.call(
        "generate_content",
        {
            "prompt": "Write a LinkedIn post about replacing status meetings with async updates",
            "content_type": "caption",
            "platform": "linkedin",
        },
    )
    body = response.json()
    assert response.status_code == 200, body
    assert not body["isError"], body
    data = body["structuredContent"]
    assert body["content"][0]["text"] == data["text"]
    assert data["model"] == "builtin"
    assert data["platform"] == "linkedin"
    assert len(data["text"]) <= 3000
    assert await records(session) == 1


async def test_generate_content_is_deterministic_through_http(tenant: Tenant) -> None:
    arguments = {
        "prompt": "Write a tweet about invoices paid on time",
        "content_type": "caption",
        "platform": "twitter",
    }
    first, second = (
        await tenant.data("generate_content", arguments),
        await tenant.data("generate_content", arguments),
    )
    assert first["text"] == second["text"]
    assert first["content_id"] != second["content_id"]


async def test_a_prompt_of_10001_characters_is_refused_and_costs_nothing(tenant: Tenant, session: AsyncSession) -> None:
    before = await balance(tenant)
    response = await tenant.call("generate_content", {"prompt": "a" * 10_001, "content_type": "caption"})
    assert response.status_code == 400
    assert response.json()["error"]["error_type"] == "validation_error"
    assert await balance(tenant) == before
    assert await records(session) == 0


async def test_an_unknown_platform_is_a_validation_error(tenant: Tenant) -> None:
    response = await tenant.call("generate_content", {"prompt": "x", "content_type": "caption", "platform": "myspace"})
    assert response.status_code == 400
    assert any(error["path"].startswith("platform") for error in response.json()["error"]["field_errors"])


async def test_an_unknown_model_lists_the_available_models_and_keeps_no_credits(
    tenant: Tenant, session: AsyncSession
) -> None:
    before = await balance(tenant)
    response = await tenant.call("generate_content", {"prompt": "x", "content_type": "hook", "model": "gpt-9"})
    error = response.json()["error"]
    assert error["error_type"] == "validation_error"
    assert "builtin" in error["available_models"]
    assert await balance(tenant) == before
    assert await records(session) == 0


async def test_adapt_content_fits_the_target_and_says_so(tenant: Tenant) -> None:
    long_post = " ".join(f"Sentence number {n} explains one more detail about async updates." for n in range(40))
    response = await tenant.call(
        "adapt_content",
        {
            "content": long_post + " Reply with your take.",
            "source_platform": "linkedin",
            "target_platform": "twitter",
        },
    )
    body = response.json()
    assert body["content"][0]["text"].startswith("Adapted for Twitter (from LinkedIn):")
    assert len(body["structuredContent"]["text"]) <= 280


async def test_create_storyboard_follows_the_frame_rules(tenant: Tenant) -> None:
    data = await tenant.data(
        "create_storyboard",
        {
            "concept": "Async standups for remote teams",
            "platform": "tiktok",
            "target_duration": 27,
            "num_scenes": 6,
        },
    )
    frames = data["frames"]
    assert data["aspectRatio"] == "9:16"
    assert len(frames) == 6
    assert round(sum(frame["duration"] for frame in frames), 6) == 27
    assert all(frames[i]["shotType"] != frames[i + 1]["shotType"] for i in range(5))
    assert all(data["characterDescription"] in frame["imagePrompt"] for frame in frames)
    assert all("no on-screen text" in frame["imagePrompt"].lower() for frame in frames)


async def test_generate_carousel_puts_the_given_hook_first_and_the_cta_last(tenant: Tenant) -> None:
    data: dict[str, Any] = await tenant.data(
        "generate_carousel",
        {
            "topic": "Myths about async work",
            "template_id": "myth-vs-reality",
            "slide_count": 5,
            "hook": "Async work is not slower",
            "cta_text": "Follow for more",
        },
    )
    slides = data["slides"]
    assert data["slideCount"] == 5
    assert data["style"] == "professional"
    assert data["carouselId"]
    assert slides[0]["headline"] == "Async work is not slower"
    assert slides[-1]["ctaText"] == "Follow for more"
    assert all(len(slide.get("headline") or "") <= 70 for slide in slides[1:])
    assert data["credits"] == {"estimated": 5, "used": 5}


async def test_another_tenants_project_is_not_found(tenant: Tenant, make_tenant: Any) -> None:
    other = await make_tenant()
    response = await tenant.call(
        "generate_content", {"prompt": "x", "content_type": "hook", "project_id": str(other.project_id)}
    )
    assert response.status_code == 404


async def test_a_blank_prompt_is_a_validation_error_that_costs_nothing(tenant: Tenant, session: AsyncSession) -> None:
    before = await balance(tenant)
    response = await tenant.call("generate_content", {"prompt": "  \n\t ", "content_type": "caption"})
    assert response.status_code == 400
    assert response.json()["error"]["field_errors"][0]["path"].startswith("prompt")
    assert await balance(tenant) == before
    assert await records(session) == 0


async def test_a_prompt_that_is_only_a_link_says_generation_does_not_open_links(
    tenant: Tenant, session: AsyncSession
) -> None:
    before = await balance(tenant)
    body = (
        await tenant.call(
            "generate_content", {"prompt": "https://example.com/blog/spring-menu", "content_type": "caption"}
        )
    ).json()
    assert body["isError"]
    assert body["error"]["error_type"] == "validation_error"
    assert "only a link" in body["error"]["message"]
    assert "extract_url_content" in body["error"]["recover_with"]
    assert await balance(tenant) == before
    assert await records(session) == 0


async def test_a_prompt_in_another_language_says_the_builtin_writer_writes_english(tenant: Tenant) -> None:
    body = (
        await tenant.call(
            "generate_content",
            {"prompt": "Écris un article sur notre nouveau café pour les clients", "content_type": "caption"},
        )
    ).json()
    assert body["error"]["error_type"] == "validation_error"
    assert "English" in body["error"]["message"]
    assert "model" in body["error"]["recover_with"]


async def test_a_ten_thousand_character_prompt_is_written_from_its_request_not_pasted(tenant: Tenant) -> None:
    filler = " ".join(["Our customers keep asking about the new loaves we bake on weekends."] * 200)
    prompt = ("Announce our new weekend sourdough loaves. " + filler)[:10_000]
    data = await tenant.data("generate_content", {"prompt": prompt, "content_type": "caption", "platform": "twitter"})
    text = data["text"]
    assert len(text) <= 280
    assert "announce our" not in text.lower()
    assert "new weekend sourdough loaves" in text
    assert text.count("Our customers keep asking") <= 1


async def test_adapt_content_mends_the_sentence_around_a_banned_term_and_keeps_urls_as_written(
    tenant: Tenant,
) -> None:
    brand = {
        **BRANDS["crumb"],
        "brandName": "Brightloop",
        "vocabularyRules": {"preferredTerms": ["sourdough"], "bannedTerms": ["cheap solution", "cheap"]},
    }
    await tenant.data("save_brand_profile", {"brand_context": brand})
    adapted = await tenant.data(
        "adapt_content",
        {
            "content": "Our plan is a cheap solution for bakeries. brightloop.com/offers/brightloop-trial opens "
            "today. Start at https://brightloop.com/offers/brightloop-trial and tell us what you bake.",
            "target_platform": "linkedin",
        },
    )
    text = adapted["text"]
    assert text.startswith("Our plan is for bakeries.")
    assert "brightloop.com/offers/brightloop-trial opens today." in text
    assert "https://brightloop.com/offers/brightloop-trial and tell us" in text
    assert "Brightloop-trial" not in text
    assert "cheap" not in text.lower()


CROISSANT = "How to price a croissant in 3 steps"
PRICING = re.compile(r"\b(price|cost|margin|pay|ingredient|packaging|energy)", re.IGNORECASE)


@pytest.mark.parametrize("template_id", [None, "step-by-step", "educational-series", "product-showcase"])
async def test_a_carousel_on_how_to_price_a_croissant_in_3_steps_gives_three_pricing_steps(
    tenant: Tenant, template_id: str | None
) -> None:
    await tenant.data("save_brand_profile", {"brand_context": BRANDS["crumb"]})
    arguments = {"topic": CROISSANT, "slide_count": 7}
    if template_id:
        arguments["template_id"] = template_id
    slides = (await tenant.data("generate_carousel", arguments))["slides"]
    steps = slides[1:4]
    assert all(PRICING.search(slide["body"]) for slide in steps), steps
    assert "croissant" in steps[0]["body"]
    assert "croissant" in slides[0]["headline"].lower()
    if template_id != "educational-series":
        assert [slide["headline"] for slide in steps] == ["Step 1", "Step 2", "Step 3"]
    # three steps were asked for: no fourth
    assert not any(slide.get("headline") == "Step 4" for slide in slides)
    for slide in slides:
        for text in (slide.get("headline"), slide.get("body")):
            assert not text or not re.search(r"https?://|www\.|[*_#`\[\]]", text), text


async def test_a_storyboard_on_how_to_price_a_croissant_shows_the_three_steps_in_order(tenant: Tenant) -> None:
    await tenant.data("save_brand_profile", {"brand_context": BRANDS["crumb"]})
    board = await tenant.data("create_storyboard", {"concept": CROISSANT, "platform": "tiktok", "num_scenes": 5})
    voiceovers = [frame["voiceover"] for frame in board["frames"]]
    assert "croissant" in voiceovers[0].lower() and "croissant" in board["title"].lower()
    assert all(PRICING.search(line) for line in voiceovers[1:4]), voiceovers
    assert voiceovers[-1].endswith("?") or voiceovers[-1].endswith(".")
    assert not any(re.search(r"https?://|www\.|[*_#`]", line) for line in voiceovers)


async def test_a_link_in_a_storyboard_concept_stays_out_of_the_frames(tenant: Tenant) -> None:
    board = await tenant.data(
        "create_storyboard",
        {"concept": "Our new rye loaf, see https://crumb.example/Rye for the recipe", "platform": "tiktok"},
    )
    for frame in board["frames"]:
        for key in ("caption", "voiceover", "imagePrompt", "videoPrompt"):
            assert "http" not in frame[key] and "crumb.example" not in frame[key], frame[key]
