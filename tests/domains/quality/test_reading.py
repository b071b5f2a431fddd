"""What the gate reads with the part-of-speech tagger and plain checks: broken grammar quoted in the reason,
filler that names nothing, doubled words, a post that stops on a label, a link with a campaign code; and plain
calm posts a careful person would publish pass."""

from __future__ import annotations

import pytest

from toolhost.domains.quality.scoring import BrandSignals, PostInput, QualityResult, score_post

BIKE_SHOP = BrandSignals(name="Northfield Cycles")


def _score(caption: str, brand: BrandSignals | None = None) -> QualityResult:
    return score_post(PostInput(caption=caption, platforms=("facebook",)), brand=brand)


def _detail(result: QualityResult, name: str) -> str:
    return next(item.detail for item in result.categories if item.name == name)


def test_a_verb_with_two_objects_fails_and_the_reason_quotes_the_broken_sentence() -> None:
    result = _score(
        "Did you know you can see a physiotherapist without a doctor's note? You can book directly, and most "
        "extended health plans cover physio the referral. Call us or book online."
    )
    assert not result.passed
    assert any(blocker.startswith("Message Clarity below threshold") for blocker in result.blockers)
    detail = _detail(result, "Message Clarity")
    assert "two objects" in detail
    assert '"cover physio the referral"' in detail
    assert "most extended health plans cover physio the referral." in detail


def test_a_subject_followed_by_a_second_noun_phrase_fails_as_a_missing_verb() -> None:
    result = _score(
        "Thanks to Hillside Farm for 400 pounds of apples this week. "
        "Their drivers the spare crates every Friday and leave them at our door."
    )
    assert not result.passed
    detail = _detail(result, "Message Clarity")
    assert "subject has no verb" in detail
    assert '"Their drivers the spare crates"' in detail


@pytest.mark.parametrize(
    "caption",
    [
        "Spring tune-ups are $65 until the end of April: brakes, gears, chain and a wheel true. "
        "Most bikes are ready the next day. Drop yours off any weekday before noon.",
        "Sunday loaves, still warm.",
        "We can send you the receipt by email, and the bread the kids love is back on Saturday.",
        "A daily list hides the big rocks. Write the three that matter on a card and keep it by the till.",
        "Our volunteers sort donations every Tuesday and give one tour a month. Come and see the warehouse.",
    ],
)
def test_plain_calm_posts_pass_with_a_brand_and_without_one(caption: str) -> None:
    assert _score(caption, BIKE_SHOP).passed
    assert _score(caption).passed


def test_filler_that_names_nothing_is_blocked_and_says_why() -> None:
    result = _score("Dream big. Stay inspired. Great things are coming. Your journey starts now.")
    assert not result.passed
    assert "names nothing a reader could check" in _detail(result, "Message Clarity")
    values = _score(
        "Safety is a core value that drives everything we do. Our commitment to excellence, integrity "
        "and passion makes the difference for the people we serve."
    )
    assert not values.passed
    assert "talks in values" in _detail(values, "Message Clarity")


def test_a_word_written_twice_in_a_row_is_named() -> None:
    result = _score("Our repair workshop opens at at 9 on Saturday for drop-offs. Bring the bike along.")
    assert not result.passed
    assert '"at at"' in _detail(result, "Message Clarity")


def test_a_post_that_stops_on_a_label_is_cut_off() -> None:
    result = _score("How to fix a flat in three steps. Step 1: take the wheel off. Step 2: find the hole. Step 3:")
    assert not result.passed
    assert "stops on a label" in _detail(result, "Message Clarity")


@pytest.mark.parametrize(
    ("caption", "reason"),
    [
        (
            "Food trucks this week: Tuesday is Taco Luna, Wednesday is the dumpling folks from Bao Down, Thursday is",
            'stops mid-sentence, after "is"',
        ),
        (
            "Over four years Dr. Herrera raised 12,000 oysters in the lab and found that their growth slowed onc",
            'stops mid-word ("onc")',
        ),
    ],
)
def test_a_post_cut_off_mid_clause_or_mid_word_fails_and_says_where(caption: str, reason: str) -> None:
    result = _score(caption)
    assert not result.passed
    assert reason in _detail(result, "Message Clarity")


def test_a_link_with_a_query_string_is_left_over_even_without_a_scheme() -> None:
    result = _score(
        "New patients: exam, cleaning and X-rays for $99 this month. Book at smiledental.com/book?promo=NEW"
    )
    assert not result.passed
    assert "raw link" in _detail(result, "Message Clarity")


def test_hashtags_emoji_and_a_stock_call_to_action_earn_nothing() -> None:
    plain = "Spring tune-ups are $65 until the end of April. Most bikes are ready the next day."
    dressed = plain + " 🚲✨ Link in bio! #bikes #spring #tuneup"
    assert _score(dressed).total <= _score(plain).total
