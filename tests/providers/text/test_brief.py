"""Reading a prompt as a request: what it is about, for whom, and what it asks; refusing what cannot be read."""

from __future__ import annotations

import pytest

from toolhost.providers.text.brief import read, unusable


def test_an_announcement_keeps_its_subject_as_a_noun_phrase() -> None:
    brief = read("Announce our new wholesale invoicing feature")
    assert (brief.action, brief.subject) == ("announce", "our new wholesale invoicing feature")


def test_a_why_prompt_becomes_a_statement_the_post_may_make() -> None:
    brief = read("Write a LinkedIn post about why we slow-ferment our dough for 36 hours")
    assert (brief.action, brief.statement, brief.question_word) == (
        "explain",
        "we slow-ferment our dough for 36 hours",
        "why",
    )


def test_a_request_to_ask_becomes_a_question_to_the_audience() -> None:
    assert read("Ask followers what they cook when they have no time").question == (
        "What do you cook when you have no time?"
    )
    assert read("Ask our followers which ingredient labels confuse them most").question == (
        "Which ingredient labels confuse you most?"
    )


def test_a_how_to_keeps_its_verb_phrase_and_its_number_of_steps() -> None:
    brief = read("How to price a croissant in 3 steps")
    assert (brief.action, brief.how, brief.steps) == ("tips", "price a croissant", 3)


def test_a_bare_title_that_counts_tips_or_ways_asks_for_them() -> None:
    ways = read("Three ways to use stale bread")
    assert (ways.action, ways.how, ways.steps, ways.wants_steps) == ("tips", "use stale bread", 3, True)
    tips = read("5 tips for keeping sourdough fresh")
    assert (tips.action, tips.subject, tips.steps, tips.wants_steps) == ("tips", "keeping sourdough fresh", 5, True)
    # a title that only names lessons or mistakes is a topic, not a request for steps
    assert read("Mistakes we made opening our first cafe").action != "tips"
    assert not read("Write tips for cutting food waste at home").wants_steps


def test_the_audience_and_the_facts_after_a_comma_are_kept_apart() -> None:
    brief = read("Write a post for freelancers about chasing late invoices without awkward emails")
    assert (brief.audience, brief.subject) == ("freelancers", "chasing late invoices without awkward emails")
    invite = read("Invite people to our Saturday bread class on 14 June, tickets are £35")
    assert (invite.action, invite.subject, invite.details) == (
        "invite",
        "our Saturday bread class on 14 June",
        ("tickets are £35",),
    )


def test_a_link_is_kept_only_when_the_prompt_asks_for_it() -> None:
    assert read("Announce our repair days https://example.com/repair").link == ""
    assert read("Announce our repair days and include the link https://example.com/repair").link == (
        "https://example.com/repair"
    )


@pytest.mark.parametrize(
    ("prompt", "reason"),
    [
        ("   \n ", "empty"),
        ("https://example.com/blog/post", "only a link"),
        ("Écris un article sur notre nouveau café pour les clients", "not in English"),
        ("Schreibe einen Beitrag über unsere neue Funktion für Bäckereien", "not in English"),
        ("新しいコーヒーについて投稿してください", "not in English"),
    ],
)
def test_prompts_that_cannot_be_written_from_say_why(prompt: str, reason: str) -> None:
    assert reason in unusable(prompt)


def test_an_english_prompt_with_unknown_words_is_usable() -> None:
    assert unusable("async standups for remote teams") == ""
    assert unusable("Écris un article sur notre nouveau café", english_only=False) == ""
