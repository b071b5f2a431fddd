"""Finding and removing terms in text: whole words, any case or punctuation, inflected."""

from __future__ import annotations

import re
import unicodedata
from collections.abc import Iterable
from dataclasses import dataclass

from toolhost.providers.text import analysis


@dataclass(frozen=True, slots=True)
class TermMatch:
    """One occurrence of a term: the term as configured and the span of the matched text."""

    term: str
    start: int
    end: int
    text: str


def _normalize(word: str) -> str:
    return unicodedata.normalize("NFKC", word).casefold().replace("’", "'")


def words(text: str) -> list[tuple[str, int, int]]:
    """The words of a text, normalized, with their character spans."""
    return [(_normalize(match.group()), match.start(), match.end()) for match in analysis.TOKEN.finditer(text)]


def inflections(word: str) -> set[str]:
    """The word and its regular English inflections (plural, past, -ing, comparative)."""
    forms = {word, word + "s", word + "es", word + "ed", word + "ing", word + "er", word + "ers", word + "'s"}
    if word.endswith("e"):
        forms |= {word + "d", word[:-1] + "ing", word + "r", word + "rs"}
    if word.endswith("y") and len(word) > 2 and word[-2] not in "aeiou":
        forms |= {word[:-1] + "ies", word[:-1] + "ied", word[:-1] + "ier"}
    if len(word) >= 3 and word[-1] not in "aeiouwxy" and word[-2] in "aeiou" and word[-3] not in "aeiou":
        forms |= {word + word[-1] + "ed", word + word[-1] + "ing", word + word[-1] + "er"}
    return forms


def _term_words(term: str) -> list[str]:
    return [word for word, _, _ in words(term)]


def find_terms(text: str, terms: Iterable[str]) -> list[TermMatch]:
    """Every occurrence of every term in the text, in text order; a term's last word may be inflected."""
    text_words = words(text)
    found: list[TermMatch] = []
    seen: set[str] = set()
    for term in terms:
        term_words = _term_words(term)
        key = " ".join(term_words)
        if not term_words or key in seen:
            continue
        seen.add(key)
        last_forms = inflections(term_words[-1])
        size = len(term_words)
        for index in range(len(text_words) - size + 1):
            window = text_words[index : index + size]
            if all(window[offset][0] == term_words[offset] for offset in range(size - 1)) and (
                window[-1][0] in last_forms
            ):
                start, end = window[0][1], window[-1][2]
                found.append(TermMatch(term=term.strip(), start=start, end=end, text=text[start:end]))
    found.sort(key=lambda match: (match.start, match.end))
    return found


def distinct_terms(matches: Iterable[TermMatch]) -> list[str]:
    """The configured terms that matched, once each, in order of first occurrence."""
    result: list[str] = []
    for match in matches:
        if match.term not in result:
            result.append(match.term)
    return result


# Words that cannot stand next to the hole a removed term leaves: "a" before "for", "for" before ".".
DETERMINERS = frozenset(
    {"a", "an", "the", "our", "your", "their", "my", "his", "her", "its", "this", "that", "these", "those", "some"}
)
PREPOSITIONS = frozenset({"of", "for", "to", "with", "in", "on", "at", "by", "from", "about", "into", "than", "as"})
CONJUNCTIONS = frozenset({"and", "or", "but", "nor"})
LAST_WORD = re.compile(r"(\w+)(\s*)$")
FIRST_TOKEN = re.compile(r"\s*(\w+|[^\w\s]|$)")


def _mend(left: str, right: str) -> tuple[str, int]:
    """`left` with what the removal left dangling at its end taken away, and how many characters of `right` go
    too (a conjunction that joined the removed term), so that left + right reads as a sentence."""
    first = FIRST_TOKEN.match(right)
    following = first.group(1) if first else ""
    after_is_word = bool(following) and (following[0].isalnum() or following[0] == "_")
    closes = not after_is_word or following.lower() in PREPOSITIONS | CONJUNCTIONS | DETERMINERS
    function_words = DETERMINERS | PREPOSITIONS | CONJUNCTIONS
    for _ in range(3):
        match = LAST_WORD.search(left)
        if match is None:
            break
        word = match.group(1).lower()
        if (word in DETERMINERS and closes) or (word in PREPOSITIONS | CONJUNCTIONS and not after_is_word):
            left = left[: match.start()]
            continue
        if word in ("a", "an") and after_is_word:
            article = "an" if following[0].lower() in "aeiou" else "a"
            article = article.capitalize() if match.group(1)[0].isupper() else article
            left = left[: match.start()] + article + match.group(2)
        elif first is not None and following.lower() in CONJUNCTIONS and word not in function_words:
            return left, first.end()
        break
    return left, 0


SENTENCE_START = re.compile(r"(\A\s*|[.!?]\s+)([a-z])")


def _capitalized(found: re.Match[str], text: str) -> str:
    """A sentence's first letter in upper case, unless it begins a web address (whose case is its own)."""
    if analysis.URL.match(text, found.start(2)):
        return found.group(0)
    return found.group(1) + found.group(2).upper()


def remove_terms(text: str, terms: Iterable[str]) -> str:
    """The text without any occurrence of the terms, the sentence around each mended: a determiner or
    preposition the removal left dangling goes too ("Our plan is a cheap plan for bakeries." without "cheap plan"
    reads "Our plan is for bakeries."), an article before the next word agrees with it, spacing and punctuation
    stay tidy."""
    matches = find_terms(text, terms)
    if not matches:
        return text
    left = ""
    cursor = 0
    # The longest of the terms that start at one place goes: "cheap solution" before "cheap".
    for match in sorted(matches, key=lambda match: (match.start, -match.end)):
        if match.start < cursor:
            continue
        left, skipped = _mend(left + text[cursor : match.start], text[match.end :])
        cursor = match.end + skipped
    cleaned = left + text[cursor:]
    cleaned = re.sub(r"[ \t]{2,}", " ", cleaned)
    cleaned = re.sub(r" +([,.;:!?])", r"\1", cleaned)
    cleaned = re.sub(r"([,;:])\s*([.!?])", r"\2", cleaned)
    # A sentence whose first word went with the term starts with a capital again.
    cleaned = re.sub(r"(?m)^\s*[,;:.]\s*", "", cleaned)
    cleaned = SENTENCE_START.sub(lambda found: _capitalized(found, cleaned), cleaned)
    return "\n".join(line.strip() for line in cleaned.split("\n")).strip()
