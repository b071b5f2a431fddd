"""An automatic coherence check of written text that shares nothing with the built-in writer.

The writer knows words through toolhost's own grammar lexicon (`providers/text/grammar.py`); this check
knows them through lemminflect's lexicon (the SPECIALIST lexicon of the US National Library of Medicine,
shipped inside the package, a `dev` dependency), so a blind spot of one is not silently shared by the other.
Each check returns the sentences or phrases it objects to; an empty list is a pass.
"""

from __future__ import annotations

import re
from collections import Counter
from functools import cache

from lemminflect import getAllLemmas

WORD = re.compile(r"[A-Za-z][A-Za-z'’-]*")
URL = re.compile(r"https?://|www\.\w", re.IGNORECASE)
MARKDOWN = re.compile(r"(?m)^#{1,6}\s|\*\*|__|\[[^\]]+\]\(|`")
HASHTAG = re.compile(r"(?:(?<=\s)|^)#\w+")


def _word_set(words: str) -> frozenset[str]:
    """A word list written as one string."""
    return frozenset(words.split())


# Closed classes, written out here rather than borrowed from toolhost.
AUXILIARIES = _word_set(
    "am is are was were be been being has have had do does did can could may might must shall should will "
    "would 's 're 've 'll 'd n't"
)
FUNCTION_ENDINGS = _word_set(
    "a an the and or but to of for with from by our your their my his her its because if when that which "
    "who is are was were"
)
INSTRUCTIONS = (
    "write a",
    "write about",
    "linkedin post",
    "instagram caption",
    "announce our",
    "announce that",
    "explain why",
    "explain how",
    "share tips",
    "share a",
    "share how",
    "tell the story",
    "tell people",
    "invite people",
    "invite our",
    "remind freelancers",
    "ask our followers",
    "ask followers",
    "give a simple",
    "introduce our",
    "how to price a croissant in 3 steps",
)
INSTRUCTION_VERBS = _word_set(
    "write announce explain share tell invite remind ask give introduce create draft make how"
)
STOP = _word_set(
    "the a an and or but of to in on for with at by from our your their we you it is are this that these those "
    "be was were has have had do does did not no so as if"
)


@cache
def _lemmas(word: str) -> dict[str, tuple[str, ...]]:
    return dict(getAllLemmas(word.lower().replace("’", "'")))


def sentences(text: str) -> list[str]:
    """Sentences of prose: hashtags, links and list markers off; a line break or an end mark and a space ends one."""
    prose = HASHTAG.sub("", text)
    parts = re.split(r"(?<=[.!?])\s+|\n+", prose)
    cleaned = [re.sub(r"^\s*(?:\d+[.)]|[-•*])\s+", "", part).strip() for part in parts]
    return [part for part in cleaned if WORD.search(part)]


def _words(text: str) -> list[str]:
    return [word.lower() for word in WORD.findall(text)]


def has_verb(sentence: str) -> bool:
    """A sentence has a verb when one of its words can be a verb where it stands: an auxiliary anywhere, or a
    word with a verb reading that no article or possessive right before it makes a noun."""
    words = _words(sentence)
    for index, word in enumerate(words):
        if word in AUXILIARIES or word.endswith(("'s", "'re", "'ve", "'ll", "n't")):
            return True
        readings = _lemmas(word)
        if "VERB" in readings or "AUX" in readings:
            before = words[index - 1] if index else ""
            if before in ("a", "an", "the", "our", "your", "their", "my", "every", "each", "this"):
                continue
            if word.endswith("ing") and "NOUN" not in readings and before not in AUXILIARIES:
                continue
            return True
    return False


def verbless(text: str) -> list[str]:
    """Sentences without any possible verb (headings and labelled lists are counted like any sentence)."""
    return [sentence for sentence in sentences(text) if not has_verb(sentence)]


def echo(text: str, prompt: str) -> list[str]:
    """Pieces of the request in the text: its instruction words, or its first six words verbatim."""
    lowered = " ".join(text.lower().split())
    found = [phrase for phrase in INSTRUCTIONS if phrase in lowered]
    words = prompt.lower().split()
    # A prompt that opens with a fact ("We sold out of rye by 10am") may be repeated; one that opens with an
    # instruction may not.
    if words and words[0] in INSTRUCTION_VERBS:
        opening = " ".join(words[:6])
        if len(opening.split()) == 6 and opening in lowered:
            found.append(opening)
    return found


def truncated(text: str) -> list[str]:
    """A last sentence that stops without an end mark on a function word, or a trailing ellipsis."""
    body = HASHTAG.sub("", text).strip()
    if not body:
        return ["(empty)"]
    if body.endswith(("...", "…")):
        return [body[-40:]]
    last = _words(body)[-1:] or [""]
    if body[-1] not in '.!?)"”’' and last[0] in FUNCTION_ENDINGS:
        return [body[-40:]]
    return []


def leftovers(text: str, *, markdown_allowed: bool = False, link_allowed: bool = False) -> list[str]:
    """Links and markdown the request did not ask for."""
    found = []
    if URL.search(text) and not link_allowed:
        found.append("link")
    if MARKDOWN.search(text) and not markdown_allowed:
        found.append("markdown")
    return found


def repeated(text: str) -> list[str]:
    """Four-word runs of content that occur more than once, and sentences said twice."""
    words = [word for word in _words(HASHTAG.sub("", text))]
    grams = Counter(tuple(words[index : index + 4]) for index in range(len(words) - 3))
    found = [" ".join(gram) for gram, count in grams.items() if count > 1 and len(set(gram) - STOP) >= 2]
    said = Counter(sentence.lower() for sentence in sentences(text))
    found += [sentence for sentence, count in said.items() if count > 1]
    return found


def off_topic(text: str, topic_words: list[str]) -> list[str]:
    """The topic's words, none of which appear in the text (by lemma, so "loaves" finds "loaf")."""
    if not topic_words:
        return []

    def forms(word: str) -> set[str]:
        lemmas = {lemma for values in _lemmas(word).values() for lemma in values}
        return lemmas | {word}

    text_forms: set[str] = set()
    for word in _words(text):
        text_forms |= forms(word)
    if any(forms(word) & text_forms for word in topic_words):
        return []
    return topic_words[:4]


def problems(
    text: str,
    *,
    prompt: str,
    topic_words: list[str],
    markdown_allowed: bool = False,
    link_allowed: bool = False,
) -> dict[str, list[str]]:
    """Every check's objections to a text, by check name; empty lists for the checks it passes."""
    return {
        "verbless sentence": verbless(text),
        "instruction echo": echo(text, prompt),
        "truncation": truncated(text),
        "link or markdown": leftovers(text, markdown_allowed=markdown_allowed, link_allowed=link_allowed),
        "repeated phrase": repeated(text),
        "topic missing": off_topic(text, topic_words),
    }
