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


def remove_terms(text: str, terms: Iterable[str]) -> str:
    """The text without any occurrence of the terms, with the spacing and punctuation left tidy."""
    matches = find_terms(text, terms)
    if not matches:
        return text
    pieces: list[str] = []
    cursor = 0
    for match in matches:
        if match.start < cursor:
            continue
        pieces.append(text[cursor : match.start])
        cursor = match.end
    pieces.append(text[cursor:])
    cleaned = "".join(pieces)
    cleaned = re.sub(r"[ \t]{2,}", " ", cleaned)
    cleaned = re.sub(r" +([,.;:!?])", r"\1", cleaned)
    cleaned = re.sub(r"([,;:])\s*([.!?])", r"\2", cleaned)
    return "\n".join(line.strip() for line in cleaned.split("\n")).strip()
