"""The one text-analysis module: words, stems, stopwords, syllables and the Flesch formulas."""

from __future__ import annotations

import pytest

from toolhost.providers.text import analysis


def test_words_keep_inner_apostrophes_and_hyphens_and_any_script() -> None:
    assert analysis.words("Don’t ship well-known café bugs in 2026!") == [
        "don't",
        "ship",
        "well-known",
        "café",
        "bugs",
        "in",
    ]


def test_tokens_keep_digits_and_split_on_hyphens() -> None:
    assert analysis.TOKEN.findall("web3 e-mail it's") == ["web3", "e", "mail", "it's"]


def test_inflections_share_a_stem_and_different_words_do_not() -> None:
    assert analysis.stem("guarantees") == analysis.stem("guaranteed") == analysis.stem("Guarantee")
    assert analysis.stem("running") == analysis.stem("run")
    assert analysis.stem("user") != analysis.stem("use")


def test_content_stems_leave_out_stopwords_and_short_words() -> None:
    assert analysis.content_stems("We ship the invoices to our teams") == ["ship", "invoic", "team"]


def test_syllables_come_from_the_hyphenation_dictionary() -> None:
    assert analysis.syllables("cat") == 1
    assert analysis.syllables("university") >= 4


def test_the_flesch_formulas_match_their_published_constants() -> None:
    assert analysis.reading_ease(word_count=10, sentence_count=1, syllable_count=15) == pytest.approx(
        206.835 - 1.015 * 10 - 84.6 * 1.5
    )
    assert analysis.reading_grade(word_count=10, sentence_count=1, syllable_count=15) == pytest.approx(
        0.39 * 10 + 11.8 * 1.5 - 15.59
    )
    assert analysis.reading_ease(word_count=0, sentence_count=0, syllable_count=0) == 0.0


@pytest.mark.parametrize(
    ("sentence", "word", "expected"),
    [
        ("Ask us to show you how at your next cleaning.", "show", "VB"),
        ("I need to book a table.", "book", "VB"),
        ("I need to book a table.", "need", "VBP"),
        ("Remember to water the plants.", "water", "VB"),
        ("Come to the show on Friday.", "show", "NN"),
        ("We went back to school on Monday.", "school", "NN"),
        ("Guess the price of this teak sideboard.", "Guess", "VB"),
        ("Message us to book.", "Message", "VB"),
        ("Drive to town for dinner.", "Drive", "VB"),
        ("Book club meets on Friday.", "Book", "NNP"),
        ("Lunch is served at noon.", "Lunch", "NN"),
    ],
)
def test_a_verb_the_lexicon_knows_as_a_noun_is_a_verb_where_its_neighbours_say_so(
    sentence: str, word: str, expected: str
) -> None:
    assert {token.text: token.tag for token in analysis.tag(sentence)}[word] == expected


def test_a_full_stop_inside_a_figure_or_after_a_title_ends_no_sentence() -> None:
    text = "We are rated 4.7 out of 5. Panels lose 0.4% a degree. Dr. Ahmed sees No. 7 patients, e.g. walk-ins. Done"
    assert [text[start:end] for start, end in analysis.sentences(text)] == [
        "We are rated 4.7 out of 5.",
        "Panels lose 0.4% a degree.",
        "Dr. Ahmed sees No. 7 patients, e.g. walk-ins.",
        "Done",
    ]
