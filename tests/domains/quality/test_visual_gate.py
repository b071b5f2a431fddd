"""The visual gate (CATALOG.md §9) through HTTP: visual_gate_constraints and visual_quality_check, and
generate_carousel's promise that its slides pass it."""

from __future__ import annotations

import json
import math
from typing import Any

import pytest

from tests.conftest import Tenant
from tests.providers.text.brands import BRANDS
from toolhost.domains.content import layouts
from toolhost.domains.content.layouts import LAYOUTS, layout_for, line_count, text_width, wrap

TEMPLATES = (
    "educational-series",
    "product-showcase",
    "story-arc",
    "before-after",
    "step-by-step",
    "quote-collection",
    "data-stats",
    "myth-vs-reality",
    "hormozi-authority",
)


async def test_constraints_list_all_seven_layouts_and_the_json_data_is_the_layout_map(tenant: Tenant) -> None:
    response = await tenant.call("visual_gate_constraints", {})
    body = response.json()
    assert response.status_code == 200, body
    layouts_shown = body["structuredContent"]["layouts"]
    assert sorted(layouts_shown) == sorted(LAYOUTS)
    assert layouts_shown["authority-statement"]["headline"] == {
        "fontSize": 86,
        "effectiveWidthPx": 920,
        "maxLines": 3,
        "expectedLines": 2,
        "uppercase": True,
    }
    assert layouts_shown["cinematic-hook"]["label"] == {
        "fontSize": 18,
        "effectiveWidthPx": 968,
        "maxLines": 1,
        "expectedLines": 1,
        "singleLine": True,
        "uppercase": True,
    }
    assert layouts_shown["editorial-content"]["body"] == {
        "fontSize": 23,
        "effectiveWidthPx": 968,
        "maxLines": 5,
        "expectedLines": 3,
    }
    envelope = json.loads(body["content"][0]["text"])
    assert envelope["data"] == layouts_shown  # RF json by default, unwrapped


async def test_constraints_of_one_layout_and_an_unknown_layout_is_refused(tenant: Tenant) -> None:
    data = await tenant.data("visual_gate_constraints", {"layout": "editorial-cta"})
    assert list(data["layouts"]) == ["editorial-cta"]
    assert list(data["layouts"]["editorial-cta"]) == ["title", "accentWord", "ctaText", "ctaUrl", "footnote"]
    text = (await tenant.call("visual_gate_constraints", {"layout": "cinematic-cta", "response_format": "text"})).json()
    assert text["content"][0]["text"].startswith("cinematic-cta: headline 58px/920px 2-3 lines")
    refused = await tenant.call("visual_gate_constraints", {"layout": "poster"})
    assert refused.status_code == 400
    assert refused.json()["error"]["error_type"] == "validation_error"


async def test_short_copy_passes_with_no_hint(tenant: Tenant) -> None:
    slides = [
        {"slideNumber": 1, "headline": "Meetings eat your week", "body": "Here is how to get it back."},
        {"slideNumber": 2, "headline": "Write it down", "body": "Share updates in writing before noon."},
        {"slideNumber": 3, "headline": "Try it this week", "footnote": "Follow for more"},
    ]
    for style in ("clean-editorial", "bold-authority", "dark-cinematic"):
        response = await tenant.call("visual_quality_check", {"slides": slides, "visual_style": style})
        body = response.json()
        data = body["structuredContent"]
        assert data["passed"] is True, data
        assert data["preRender"] == {"ok": True, "overflowIssues": [], "spellingIssues": [], "highRiskSlideIdx": []}
        assert data["correctiveHint"] is None
        assert data["attempts"] == 0
        assert data["checkedAt"].endswith("Z")
        assert body["content"][0]["text"].startswith("VISUAL GATE: PASS")


async def test_a_long_authority_headline_overflows_with_the_catalogue_hint(tenant: Tenant) -> None:
    headline = "Why every remote team loses its best focus hours to status meetings nobody needed"
    response = await tenant.call(
        "visual_quality_check",
        {
            "slides": [
                {"slideNumber": 1, "headline": "Start here"},
                {"slideNumber": 2, "headline": headline, "body": "Short."},
                {"slideNumber": 3, "headline": "Go"},
            ],
            "visual_style": "bold-authority",
        },
    )
    data = response.json()["structuredContent"]
    assert data["passed"] is False
    [issue] = data["preRender"]["overflowIssues"]
    expected = line_count(headline, LAYOUTS["authority-statement"]["headline"])
    assert issue == {
        "slideIdx": 1,
        "field": "headline",
        "kind": "overflow",
        "detail": issue["detail"],
        "estimatedLines": expected,
        "maxLines": 3,
    }
    assert expected > 3
    assert "authority-statement" in issue["detail"]
    assert data["correctiveHint"] == f"headline: too long ({expected} lines, max 3) \u2014 cut to about 84 chars"
    assert 1 in data["preRender"]["highRiskSlideIdx"]
    assert "VISUAL GATE: FAIL" in response.json()["content"][0]["text"]


async def test_a_label_over_one_line_is_single_line_exceeded(tenant: Tenant) -> None:
    label = "moody backlit portrait of a founder at a desk late at night with city lights behind " * 2
    data = await tenant.data(
        "visual_quality_check",
        {
            "slides": [{"slideNumber": 1, "headline": "Late nights are a choice", "visualDirection": label}],
            "visual_style": "dark-cinematic",
        },
    )
    [issue] = data["preRender"]["overflowIssues"]
    assert (issue["field"], issue["kind"], issue["maxLines"]) == ("label", "single-line-exceeded", 1)
    assert data["correctiveHint"] == "label: must fit on one line \u2014 shorten to under 30 characters"


async def test_editorial_bullets_come_from_body_sentences_and_each_is_checked(tenant: Tenant) -> None:
    long_sentence = "This sentence keeps going " * 12 + "."
    data = await tenant.data(
        "visual_quality_check",
        {
            "slides": [
                {"slideNumber": 1, "headline": "Three habits", "body": f"Short. {long_sentence} Write it down first."},
                {"slideNumber": 2, "headline": "Done"},
            ]
        },
    )
    fields = [(issue["slideIdx"], issue["field"]) for issue in data["preRender"]["overflowIssues"]]
    assert fields == [(0, "bullet")]  # "Short." is under 10 characters, so it is no bullet
    explicit = await tenant.data(
        "visual_quality_check",
        {
            "slides": [
                {"slideNumber": 1, "headline": "Three habits", "body": long_sentence, "bullets": ["One", "Two"]},
                {"slideNumber": 2, "headline": "Done"},
            ]
        },
    )
    assert explicit["passed"] is True  # the given bullets replace the body's sentences


async def test_an_unknown_layout_is_an_overflow_issue(tenant: Tenant) -> None:
    data = await tenant.data(
        "visual_quality_check", {"slides": [{"slideNumber": 1, "headline": "Hi", "layout": "poster-xl"}]}
    )
    [issue] = data["preRender"]["overflowIssues"]
    assert (issue["field"], issue["kind"]) == ("(unknown-layout)", "overflow")
    assert data["passed"] is False


async def test_spelling_reports_unknown_words_and_accepts_the_brand_vocabulary(tenant: Tenant) -> None:
    slides = [
        {"slideNumber": 1, "headline": "We recieve Zentrixa reports", "body": "LinkedIn posts, 10x faster."},
        {"slideNumber": 2, "headline": "Done"},
    ]
    data = await tenant.data("visual_quality_check", {"slides": slides})
    assert data["passed"] is True  # spelling never fails the gate
    words = [issue["word"] for issue in data["preRender"]["spellingIssues"]]
    assert words == ["recieve", "Zentrixa"]
    assert data["preRender"]["spellingIssues"][0] == {"slideIdx": 0, "field": "title", "word": "recieve"}
    profile = {**BRANDS["relay"], "brandName": "Zentrixa"}
    await tenant.data("save_brand_profile", {"brand_context": profile})
    branded = await tenant.data("visual_quality_check", {"slides": slides})
    assert [issue["word"] for issue in branded["preRender"]["spellingIssues"]] == ["recieve"]


@pytest.mark.parametrize(
    ("arguments", "path"),
    [
        ({"slides": []}, "slides"),
        ({"slides": [{"slideNumber": n} for n in range(1, 12)]}, "slides"),
        ({"slides": [{"slideNumber": 0}]}, "slides[0].slideNumber"),
        ({"slides": [{"headline": "no number"}]}, "slides[0].slideNumber"),
        ({"slides": [{"slideNumber": 1}], "visual_style": "neon"}, "visual_style"),
        ({"slides": [{"slideNumber": 1, "headline": "x" * 10_001}]}, "slides[0].headline"),
        ({"slides": [{"slideNumber": 1, "bullets": "not a list"}]}, "slides[0].bullets"),
        ({}, "slides"),
    ],
)
async def test_bad_slides_are_validation_errors(tenant: Tenant, arguments: dict[str, Any], path: str) -> None:
    response = await tenant.call("visual_quality_check", arguments)
    assert response.status_code == 400
    error = response.json()["error"]
    assert error["error_type"] == "validation_error"
    assert any(item["path"].startswith(path) for item in error["field_errors"]), error


async def test_another_tenants_project_is_not_found(tenant: Tenant, make_tenant: Any) -> None:
    other = await make_tenant()
    response = await tenant.call(
        "visual_quality_check", {"slides": [{"slideNumber": 1}], "project_id": str(other.project_id)}
    )
    assert response.status_code == 404


def test_layout_per_slide_follows_type_then_position_then_style() -> None:
    def pick(slide: dict[str, Any], position: int, style: str, count: int = 5) -> str:
        return layout_for(slide, position=position, count=count, visual_style=style)

    assert pick({"type": "hook"}, 2, "clean-editorial") == "cinematic-hook"
    assert pick({}, 0, "dark-cinematic") == "cinematic-hook"
    assert pick({}, 0, "clean-editorial") == "editorial-content"
    assert pick({}, 4, "dark-cinematic") == "cinematic-cta"
    assert pick({"type": "cta"}, 1, "bold-authority") == "authority-cta"
    assert pick({}, 4, "clean-editorial") == "editorial-cta"
    assert pick({"type": "authority"}, 2, "clean-editorial") == "authority-statement"
    assert pick({}, 2, "bold-authority") == "authority-statement"
    assert pick({}, 2, "dark-cinematic") == "cinematic-content"
    assert pick({}, 2, "clean-editorial") == "editorial-content"


def test_uppercase_fields_are_measured_upper_cased_with_the_real_font() -> None:
    spec = LAYOUTS["authority-statement"]["headline"]
    assert layouts.font(86) is not None  # Pillow's own TrueType font ships with Pillow
    assert text_width("WORD", 86) > text_width("word", 86)
    assert wrap("go faster now", spec) == ["GO FASTER NOW"]
    assert text_width("iiii", 40) < text_width("mmmm", 40)  # real metrics, not a fixed glyph width


def test_a_word_longer_than_a_line_takes_ceil_of_its_length_over_chars_per_line() -> None:
    spec = LAYOUTS["editorial-content"]["title"]
    word = "a" * 200
    per_line = math.floor(spec.width_px / (text_width(word, spec.font_size) / len(word)))
    assert line_count(word, spec) == math.ceil(200 / per_line)


def test_without_a_font_glyphs_are_0_55_of_the_size(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(layouts, "font", lambda size: None)
    assert text_width("abcd", 20) == pytest.approx(4 * 20 * 0.55)
    spec = LAYOUTS["editorial-cta"]["ctaText"]  # 400 px at 20 px: 36 glyphs a line
    assert line_count("x" * 36, spec) == 1
    assert line_count("x" * 37, spec) == 2


@pytest.mark.parametrize("template_id", TEMPLATES)
async def test_generate_carousel_slides_pass_the_visual_gate_in_every_style(make_tenant: Any, template_id: str) -> None:
    long_url = "https://relay.example.com/guides/" + "async-standups-for-remote-teams/" * 40
    failures = []
    for brand in (None, *BRANDS):
        tenant = await make_tenant()
        if brand:
            await tenant.data("save_brand_profile", {"brand_context": BRANDS[brand]})
        for style, visual_style in layouts.VISUAL_STYLE_OF_CAROUSEL_STYLE.items():
            carousel = await tenant.data(
                "generate_carousel",
                {
                    "topic": "Why replacing daily standups with async updates saves remote teams 5 hours every week",
                    "template_id": template_id,
                    "style": style,
                    "slide_count": 10,
                    "cta_text": "Get the free async standup template",
                    "cta_url": long_url,
                },
            )
            checked = await tenant.data(
                "visual_quality_check", {"slides": carousel["slides"], "visual_style": visual_style}
            )
            if not checked["passed"]:
                failures.append((brand, style, checked["preRender"]["overflowIssues"]))
    assert not failures, failures


async def test_a_given_hook_stays_verbatim_even_when_the_gate_would_cut_it(tenant: Tenant) -> None:
    hook = "Your daily standup is quietly costing every engineer on your team five focused hours a week"
    carousel = await tenant.data("generate_carousel", {"topic": "async standups", "style": "bold", "hook": hook})
    assert carousel["slides"][0]["headline"] == hook
    checked = await tenant.data(
        "visual_quality_check", {"slides": carousel["slides"], "visual_style": "bold-authority"}
    )
    assert [issue["slideIdx"] for issue in checked["preRender"]["overflowIssues"]] == [0]
