"""The gate's reading model (domains/quality/reading.py): what it blocks, what it lets through, what it says."""

from __future__ import annotations

import json
from pathlib import Path

from toolhost.domains.quality.scoring import PostInput, QualityResult, reading_ceiling, score_post
from toolhost.providers.text.base import BrandContext, PostRequest
from toolhost.providers.text.builtin import BuiltinTextProvider

WRITER_DATA = Path(__file__).parents[2] / "data" / "writer"


def _clarity(result: QualityResult) -> tuple[int, str]:
    category = next(item for item in result.categories if item.name == "Message Clarity")
    return category.score, category.detail


def test_generic_steps_under_a_specific_topic_are_blocked_and_the_sentence_is_quoted() -> None:
    result = score_post(
        PostInput(
            "Here are a few tips for keeping your receipts in order.\n\nTax season means a weekend of sorting "
            "paper.\n\n1. Write down what a good result looks like for you.\n2. Start with one small change this "
            "week.\n3. Make it part of your routine.\n\nWhat would you add?",
            ("facebook",),
        )
    )
    score, detail = _clarity(result)
    assert not result.passed and score < 3
    assert "does not read like a careful writer's post" in detail
    assert '"Start with one small change this week.' in detail


def test_a_plain_notice_with_prices_passes() -> None:
    result = score_post(
        PostInput(
            "Our spring plant sale starts Saturday at nine. Tomato seedlings are £2 each, herbs three for £5, "
            "and the volunteers will help you carry trays to the car.",
            ("facebook",),
        )
    )
    assert result.passed, result.blockers


def test_the_model_blocks_only_on_strong_doubt_and_otherwise_costs_points() -> None:
    assert [reading_ceiling(p) for p in (0.05, 0.15, 0.25, 0.55, 0.7, 0.9)] == [0, 1, 3, 3, 4, 5]


def test_a_tips_post_with_no_steps_to_give_has_no_invented_steps() -> None:
    brands = json.loads((WRITER_DATA / "brands.json").read_text())
    text = BuiltinTextProvider().compose(
        PostRequest(
            prompt="Share a few tips for setting aside money for tax from every payment",
            content_type="caption",
            brand=BrandContext.from_runtime(brands["ledgerly"]),
            platform="linkedin",
        )
    )
    assert "small change" not in text and "good result looks like" not in text
    assert score_post(PostInput(text, ("linkedin",))).passed, text
