"""The built-in composer: deterministic, varied, within platform rules, no invented figures or terms."""

from __future__ import annotations

import re

import pytest
from tests.providers.text.brands import BRANDS, runtime_of

from toolhost.providers.platforms import RULES
from toolhost.providers.text.base import HOOK_FAMILIES, BrandContext, ContentType, HookFamily, PostRequest
from toolhost.providers.text.builtin import BuiltinTextProvider
from toolhost.providers.text.terms import find_terms

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
