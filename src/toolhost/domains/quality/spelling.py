"""Spelling for the visual gate: words found in neither the shipped English word list nor the brand's own
vocabulary. The list is pyspellchecker's English dictionary (inflected forms included), read from the
package's own data, never downloaded."""

from __future__ import annotations

import re
from collections.abc import Iterable
from functools import lru_cache
from typing import Any

from spellchecker import SpellChecker

from toolhost.providers.text import analysis

# Chunks that are not prose: links, addresses, handles, hashtags, and anything with a digit (10x, 2nd, Q3).
_NOT_PROSE = re.compile(r"^(?:[a-z][a-z0-9+.-]*://|www\.)|@|^#|\d|\.[a-z]{2,}/?$", re.IGNORECASE)
# Runtime sections that hold no words of the brand (colours, fonts, URLs, scores).
_NOT_VOCABULARY = frozenset({"visual", "confidence"})
MAX_ACRONYM = 5


@lru_cache(maxsize=1)
def _dictionary() -> SpellChecker:
    return SpellChecker(language="en", distance=1)


def known(word: str) -> bool:
    """Whether the shipped English word list has this word (case-insensitive)."""
    return word.lower() in _dictionary().word_frequency


def _spelled_words(text: str) -> list[str]:
    # A word list holds "well" and "known", not "well-known": each part of a hyphenated word is checked.
    return [part for word in analysis.WORD.findall(text) for part in word.split("-")]


def words(text: str) -> list[str]:
    """The words of a text a reader would spell-check: prose only, possessives trimmed, acronyms (NASA, OKR)
    and mixed-case names (LinkedIn, iPhone) left to the brand, since no word list holds them."""
    found: list[str] = []
    for chunk in text.replace("\u2019", "'").split():
        if _NOT_PROSE.search(chunk):
            continue
        for word in _spelled_words(chunk):
            word = re.sub(r"'s$", "", word, flags=re.IGNORECASE)
            if len(word) < 2:
                continue
            if word.isupper() and len(word) <= MAX_ACRONYM:
                continue
            if any(letter.isupper() for letter in word[1:]) and not word.isupper():
                continue
            found.append(word)
    return found


def _strings(value: Any) -> Iterable[str]:
    if isinstance(value, str):
        yield value
    elif isinstance(value, dict):
        for key, item in value.items():
            if key not in _NOT_VOCABULARY:
                yield from _strings(item)
    elif isinstance(value, list):
        for item in value:
            yield from _strings(item)


def brand_vocabulary(runtime: dict[str, Any] | None) -> frozenset[str]:
    """Every word the brand's runtime uses (name, messaging, voice terms, audience), lower-cased."""
    if not runtime:
        return frozenset()
    return frozenset(word.lower() for text in _strings(runtime) for word in _spelled_words(text.replace("\u2019", "'")))


def misspelled(text: str, vocabulary: frozenset[str] = frozenset()) -> list[str]:
    """The words of a text in neither the word list nor the vocabulary, each once, in order."""
    unknown: list[str] = []
    for word in words(text):
        lowered = word.lower()
        if lowered in vocabulary or known(lowered) or word in unknown:
            continue
        unknown.append(word)
    return unknown
