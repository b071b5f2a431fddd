"""The grammar lexicon: telling clauses from noun phrases, finding a sentence's verb, inflecting verbs."""

from __future__ import annotations

import pytest

from toolhost.providers.text.grammar import gerund, has_finite_verb, past_tense, phrase_kind, third_person


@pytest.mark.parametrize(
    ("phrase", "kind"),
    [
        ("every loaf is slow-fermented for 36 hours", "clause"),
        ("We buy directly from twelve partner farms", "clause"),
        ("async updates replace daily status meetings", "clause"),
        ("supermarket coffee tastes flat and bitter", "clause"),
        ("Close your books in days, not weeks", "imperative"),
        ("Cost every recipe down to the gram", "imperative"),
        ("Used by 850 independent bakeries", "participle"),
        ("Trusted by 12,000 small businesses", "participle"),
        ("Advising families since 1987", "gerund"),
        ("Wholesale orders, production sheets and invoices in one place", "noun_phrase"),
        ("Gear that is built to be repaired, not replaced", "noun_phrase"),
        ("Tax-ready reports your accountant can trust", "noun_phrase"),
        ("Coffee worth slowing down for", "noun_phrase"),
        ("relaxed family dinners", "noun_phrase"),
        ("Jackets made from 100% recycled nylon", "noun_phrase"),
    ],
)
def test_a_brand_phrase_is_read_as_the_kind_of_phrase_it_is(phrase: str, kind: str) -> None:
    assert phrase_kind(phrase) == kind


@pytest.mark.parametrize(
    "sentence",
    ["We shovelled silt for three weekends.", "Bring your pack.", "Our loaves rise overnight.", "What surprised you?"],
)
def test_sentences_with_a_verb_are_seen_to_have_one(sentence: str) -> None:
    assert has_finite_verb(sentence)


@pytest.mark.parametrize(
    "fragment", ["Every store.", "Free for members.", "Fiduciary advice for families.", "Since 1987."]
)
def test_fragments_without_a_verb_are_seen_to_have_none(fragment: str) -> None:
    assert not has_finite_verb(fragment)


def test_verbs_inflect_regularly_and_irregularly() -> None:
    assert [third_person("carry"), third_person("have"), third_person("push")] == ["carries", "has", "pushes"]
    assert [past_tense("buy"), past_tense("stop"), past_tense("bake")] == ["bought", "stopped", "baked"]
    assert [gerund("run"), gerund("bake"), gerund("see")] == ["running", "baking", "seeing"]
