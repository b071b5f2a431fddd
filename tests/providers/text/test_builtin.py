"""The built-in writer: whole sentences on the request, never the request itself; deterministic, varied,
within platform rules, no invented figures or terms."""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest
from tests.providers.text.brands import BRANDS, runtime_of

from toolhost.domains.quality.scoring import PostInput, score_post
from toolhost.providers.platforms import RULES
from toolhost.providers.text.base import (
    HOOK_FAMILIES,
    BrandContext,
    CarouselRequest,
    ContentType,
    HookFamily,
    PostRequest,
    StoryboardRequest,
)
from toolhost.providers.text.builtin import BuiltinTextProvider
from toolhost.providers.text.grammar import verb_readings
from toolhost.providers.text.terms import find_terms, remove_terms

RELAY = BrandContext.from_runtime(runtime_of(BRANDS["relay"]))


def caption(
    prompt: str, platform: str = "linkedin", family: HookFamily | None = None, brand: BrandContext = RELAY
) -> str:
    return BuiltinTextProvider().compose(
        PostRequest(prompt=prompt, content_type="caption", brand=brand, platform=platform, hook_family=family)
    )


def test_the_same_inputs_give_the_same_text() -> None:
    assert caption("Write a post about async standups") == caption("Write a post about async standups")


def test_different_topics_and_hook_families_give_visibly_different_posts() -> None:
    texts = {caption("Write a post about async standups", family=family) for family in HOOK_FAMILIES}
    texts.add(caption("Write a post about protecting focus time"))
    assert len(texts) == len(HOOK_FAMILIES) + 1
    first_lines = {text.split("\n", 1)[0] for text in texts}
    assert len(first_lines) == len(texts)


@pytest.mark.parametrize("platform", sorted(RULES))
def test_captions_fit_the_platform_limit_and_hashtag_guidance(platform: str) -> None:
    text = caption("Write a post about replacing daily standups with async updates for remote teams", platform)
    rules = RULES[platform]
    assert len(text) <= rules.caption_limit
    assert len(re.findall(r"(?:^|\s)#\w+", text)) <= rules.hashtags_max


def test_figures_come_only_from_the_prompt_or_proof_points() -> None:
    for family in HOOK_FAMILIES:
        text = caption("Write a post about async standups", family=family)
        allowed = {"4", "2025", "310"}
        without_list_numbers = re.sub(r"(?m)^\d+\. ", "", text)
        assert set(re.findall(r"\d+", without_list_numbers)) <= allowed, text


def test_banned_terms_in_the_prompt_never_reach_the_text() -> None:
    text = caption("Write a post about our revolutionary, guaranteed async standups")
    assert find_terms(text, RELAY.blocked_terms("linkedin")) == []


def test_a_brand_without_contractions_gets_none() -> None:
    ledgerly = BrandContext.from_runtime(runtime_of(BRANDS["ledgerly"]))
    for family in HOOK_FAMILIES:
        text = caption("Write a post about getting invoices paid on time", family=family, brand=ledgerly)
        assert not re.search(r"\b(here's|that's|it's|don't|won't|can't)\b", text, re.I), text


@pytest.mark.parametrize("content_type", ["hook", "script", "blog"])
def test_each_content_type_has_its_shape(content_type: ContentType) -> None:
    text = BuiltinTextProvider().compose(
        PostRequest(
            prompt="A 30 second video about async standups",
            content_type=content_type,
            brand=RELAY,
            platform="tiktok",
        )
    )
    if content_type == "hook":
        assert len(text) <= 120
        assert "\n" not in text
    elif content_type == "script":
        assert text.startswith("HOOK (0-")
        assert "BODY" in text
        assert "CTA (" in text
        assert "-30s)" in text
    else:
        assert text.startswith("# ")
        assert 3 <= text.count("\n## ") - 1 <= 5


WRITER_DATA = Path(__file__).parents[2] / "data" / "writer"
WRITER_BRANDS: dict[str, dict[str, object]] = json.loads((WRITER_DATA / "brands.json").read_text())
WRITER_PROMPTS: dict[str, list[str]] = json.loads((WRITER_DATA / "prompts.json").read_text())
CASES = [(name, prompt) for name, prompts in WRITER_PROMPTS.items() for prompt in prompts]


def _brand(name: str) -> BrandContext:
    return BrandContext.from_runtime(WRITER_BRANDS[name])


@pytest.mark.parametrize(("name", "prompt"), CASES)
def test_the_request_is_never_pasted_into_the_post(name: str, prompt: str) -> None:
    text = caption(prompt, "linkedin", brand=_brand(name)).lower()
    first, second = prompt.lower().split()[:2]
    if first in {"announce", "explain", "share", "tell", "invite", "introduce", "give", "remind", "ask", "write"}:
        assert f"{first} {second}" not in text, text
    assert "write a" not in text and "linkedin post" not in text


@pytest.mark.parametrize("platform", ["linkedin", "twitter", "instagram"])
@pytest.mark.parametrize(("name", "prompt"), CASES)
def test_written_posts_pass_the_quality_gate(name: str, prompt: str, platform: str) -> None:
    text = caption(prompt, platform, brand=_brand(name))
    result = score_post(PostInput(caption=text, platforms=(platform,)))
    assert result.passed, (text, result.blockers)


@pytest.mark.parametrize(("name", "prompt"), CASES)
def test_a_post_names_the_brand_at_the_start_of_one_sentence_at_most(name: str, prompt: str) -> None:
    brand = _brand(name)
    text = caption(prompt, "linkedin", brand=brand)
    openings = [part for part in re.split(r"(?<=[.?!])\s+", text) if part.startswith(brand.name + " ")]
    assert len(openings) <= 1, text


def test_a_coffee_roaster_is_not_written_as_a_software_business() -> None:
    for prompt in WRITER_PROMPTS["kettle"]:
        for platform in ("linkedin", "instagram", "twitter"):
            text = caption(prompt, platform, brand=_brand("kettle")).lower()
            assert not re.search(r"\b(team|teams|workflow|software|users|onboard\w*)\b", text), text


def test_a_link_appears_only_when_the_prompt_asks_for_one() -> None:
    brand = _brand("trailmix")
    plain = caption("Announce our free pack repair days https://trailmix.example/repair", brand=brand)
    asked = caption(
        "Announce our free pack repair days and include the link https://trailmix.example/repair", brand=brand
    )
    assert "http" not in plain
    assert "https://trailmix.example/repair" in asked


async def test_carousel_steps_are_steps_on_the_topic() -> None:
    slides = await BuiltinTextProvider().carousel(
        CarouselRequest(
            topic="How to price a croissant in 3 steps",
            template_id="step-by-step",
            slide_count=5,
            brand=_brand("brightloop"),
        )
    )
    steps = slides[1:-1]
    assert [slide["headline"] for slide in steps] == ["Step 1", "Step 2", "Step 3"]
    assert "croissant" in steps[0]["body"]
    for slide in steps:
        first_word = slide["body"].split()[0].lower()
        assert verb_readings(first_word) & {(first_word, "VB")}, slide["body"]
    assert "croissant" in slides[0]["headline"]


async def test_storyboard_frames_speak_about_the_concept() -> None:
    board = await BuiltinTextProvider().storyboard(
        StoryboardRequest(
            concept="Why the roast date on the bag matters for home brewers",
            platform="tiktok",
            duration=30,
            scenes=6,
            brand=_brand("kettle"),
        )
    )
    assert "roast date" in board["frames"][0]["voiceover"]
    assert all(frame["voiceover"].rstrip().endswith((".", "?", "!")) for frame in board["frames"])
    assert "roast" in board["title"].lower()


@pytest.mark.parametrize(
    ("text", "terms", "mended"),
    [
        ("Our plan is a cheap solution for bakeries.", ["cheap solution"], "Our plan is for bakeries."),
        ("Our plan is a cheap option for bakeries.", ["cheap"], "Our plan is an option for bakeries."),
        ("Revolutionary tools for bakeries. We help.", ["revolutionary"], "Tools for bakeries. We help."),
        ("It is built for the synergy.", ["synergy"], "It is built."),
        ("We love synergy and focus.", ["synergy"], "We love focus."),
    ],
)
def test_removing_a_term_mends_the_sentence_instead_of_leaving_a_hole(text: str, terms: list[str], mended: str) -> None:
    assert remove_terms(text, terms) == mended


def test_the_brand_names_capital_never_enters_a_url() -> None:
    brightloop = BrandContext(name="Brightloop", industry="bakery software")
    for content_type in ("caption", "hook", "blog"):
        text = BuiltinTextProvider().compose(
            PostRequest(
                prompt="brightloop.com/offers/brightloop-trial is where bakeries start https://brightloop.com/a-b",
                content_type=content_type,
                brand=brightloop,
                platform="linkedin",
            )
        )
        assert "brightloop.com/offers/brightloop-trial" in text
        assert "Brightloop.com" not in text and "Brightloop-trial" not in text
