"""Building blocks of the built-in composer: topics from prompts, sentences, hashtags, fitting to a limit."""

from __future__ import annotations

import hashlib
import random
import re

from toolhost.providers.platforms import PlatformRules
from toolhost.providers.text import analysis, brief, grammar
from toolhost.providers.text.base import BrandContext

# The words of a request ("write a post about ...") carry no topic either.
STOPWORDS = analysis.STOPWORDS | {
    "write",
    "create",
    "draft",
    "post",
    "posts",
    "caption",
    "captions",
    "script",
    "blog",
    "article",
    "thread",
    "please",
}
# Words that make no hashtag of their own: a reader searches for the thing, not for "new" or "tips".
NOT_TAGS = grammar.word_set(
    """
        new tips tip step steps ways way story our their simple quick why how feature features update launch
        people followers customers home view guide family business evenings time day week
        """
)
SENTENCE_END = re.compile(r"(?<=[.!?])\s+(?=[A-Z0-9\"'(])")
FIGURE = re.compile(r"\d")
CONTRACTIONS = {
    "here's": "here is",
    "that's": "that is",
    "it's": "it is",
    "what's": "what is",
    "don't": "do not",
    "doesn't": "does not",
    "won't": "will not",
    "can't": "cannot",
    "isn't": "is not",
    "aren't": "are not",
    "we've": "we have",
    "we're": "we are",
    "you're": "you are",
    "you've": "you have",
    "let's": "let us",
    "there's": "there is",
    "who's": "who is",
    "i'm": "I am",
    "i've": "I have",
    "didn't": "did not",
    "wouldn't": "would not",
    "shouldn't": "should not",
    "they're": "they are",
    "you'll": "you will",
    "we'll": "we will",
    "haven't": "have not",
}
_CONTRACTION = re.compile(r"\b(" + "|".join(re.escape(key) for key in CONTRACTIONS) + r")\b", re.IGNORECASE)


def seeded(*parts: object) -> random.Random:
    """A random generator fixed by the inputs: the same inputs always give the same choices."""
    digest = hashlib.sha256("\x1f".join(str(part) for part in parts).encode()).digest()
    return random.Random(int.from_bytes(digest[:8], "big"))


def sentences(text: str) -> list[str]:
    """The sentences of a text, stripped, in order (line breaks end sentences too)."""
    result = []
    for line in re.split(r"\n+", text):
        for part in SENTENCE_END.split(line.strip()):
            if part.strip():
                result.append(part.strip())
    return result


def clip(text: str, limit: int) -> str:
    """The text cut at a word boundary to at most `limit` characters, without a dangling separator."""
    text = " ".join(text.split())
    if len(text) <= limit:
        return text
    cut = text[: limit + 1].rsplit(" ", 1)[0]
    return cut.rstrip(" ,;:-–—(")


def _starts_with_url(text: str) -> bool:
    return analysis.URL.match(text) is not None


def lower_first(text: str) -> str:
    """Lower-cases the first letter unless the first word is an acronym, a name-like word or a web address."""
    if not text or _starts_with_url(text):
        return text
    first = text.split(" ", 1)[0]
    if len(first) > 1 and (first.isupper() or any(character.isupper() for character in first[1:])):
        return text
    return text[0].lower() + text[1:]


def extract_topic(prompt: str) -> str:
    """What a prompt is about, as a noun phrase or clause (the brief's topic), bounded."""
    topic = brief.read(prompt).topic if not brief.unusable(prompt) else ""
    return lower_first(clip(topic.strip().rstrip(".!?:;"), 90)) or "what we are working on"


def keywords(text: str, limit: int = 8) -> list[str]:
    """Content words of a text in order of appearance, without stop words or duplicates."""
    result: list[str] = []
    for word in re.findall(r"[A-Za-z][A-Za-z0-9'-]*", text):
        lowered = word.lower().strip("'-")
        if len(lowered) < 3 or lowered in STOPWORDS or lowered in result:
            continue
        result.append(lowered)
        if len(result) >= limit:
            break
    return result


def hashtag(phrase: str) -> str:
    """`#CamelCase` of a phrase's words (at most three), or "" when nothing usable is left."""
    words = [
        word
        for word in re.findall(r"[A-Za-z0-9]+", phrase)
        if word.lower() not in STOPWORDS
        and word.lower() not in grammar.INSTRUCTION_VERBS
        and word.lower() not in NOT_TAGS
    ][:3]
    if not words:
        return ""
    tag = "".join(word if word.isupper() else word.capitalize() for word in words)
    return "#" + tag if len(tag) >= 3 and not tag.isdigit() else ""


NOT_NOUNS = grammar.word_set(
    """
    aside straight directly again still also just away back together never always often every each without
    monday tuesday wednesday thursday friday saturday sunday january february march april may june july august
    september october november december today tomorrow last next
    """
)


def _taggable(word: str) -> bool:
    """Whether a topic word can stand as a hashtag: a noun-like word, not a verb form, a day or an adverb."""
    if len(word) < 3 or word in NOT_TAGS or word in NOT_NOUNS or word.endswith(("ly", "ing")):
        return False
    tags = {tag for _, tag in grammar.verb_readings(word)}
    return not tags & {"VBD", "VBN"} and grammar.word_class(word) in ("WORD", "VERB")


def hashtags_for(topic: str, brand: BrandContext, rules: PlatformRules, platform_strategy: str = "") -> list[str]:
    """Hashtags within the platform's guidance: strategy tags, topic, pillars, terms."""
    wanted = max(rules.hashtags_min, min(rules.hashtags_max, (rules.hashtags_min + rules.hashtags_max + 1) // 2))
    if rules.hashtags_max == 0:
        return []
    candidates = re.findall(r"#\w+", platform_strategy)
    lowered = topic.lower()
    # Brand vocabulary the topic mentions first, then the topic's own nouns, then the brand's pillars.
    candidates += [hashtag(term) for term in brand.preferred_terms if term.lower() in lowered]
    candidates += [hashtag(name) for name, _ in brand.content_pillars if name.lower() in lowered]
    nouns = [word for word in keywords(topic, 8) if _taggable(word)]
    # Two nouns side by side in the topic make one tag ("#WholesaleInvoicing"), and their words no others.
    pairs = [
        f"{first} {second}"
        for first, second in zip(nouns, nouns[1:], strict=False)
        if re.search(rf"(?<![\w-]){first} {second}\b", lowered) and "-" not in first + second
    ]
    covered = {word.lower() for tag in candidates if tag for word in re.findall(r"[A-Z][a-z0-9]*", tag)}
    fresh_pairs: list[str] = []
    for pair in pairs:
        if not set(pair.split()) & covered and len(fresh_pairs) < 2:
            fresh_pairs.append(pair)
            covered |= set(pair.split())
    candidates += [hashtag(pair) for pair in fresh_pairs]
    candidates += [hashtag(word) for word in nouns[:3] if word not in covered]
    candidates += [hashtag(term) for term in brand.preferred_terms]
    candidates += [hashtag(name) for name, _ in brand.content_pillars]
    candidates += [hashtag(brand.industry), hashtag(brand.name)]
    candidates += [hashtag(interest) for interest in brand.audience_interests]
    blocked = {term.lower().replace(" ", "") for term in brand.blocked_terms()}
    result: list[str] = []
    for tag in candidates:
        if tag and tag.lower() not in {existing.lower() for existing in result} and tag[1:].lower() not in blocked:
            result.append(tag)
        if len(result) >= wanted:
            break
    return result


def apply_style(text: str, brand: BrandContext) -> str:
    """Applies the brand's writing rules the composer controls: contractions expanded if avoided."""
    if brand.use_contractions:
        return text

    def expand(match: re.Match[str]) -> str:
        word = match.group(0)
        full = CONTRACTIONS[word.lower()]
        return full[:1].upper() + full[1:] if word[0].isupper() else full

    return _CONTRACTION.sub(expand, text)


def fit_blocks(blocks: list[str], limit: int, separator: str, keep_last: int) -> str:
    """Joins blocks within a limit, dropping middle blocks first (the hook and the last `keep_last` stay)."""
    blocks = [block for block in blocks if block]
    while len(separator.join(blocks)) > limit and len(blocks) > keep_last + 1:
        del blocks[-keep_last - 1]
    text = separator.join(blocks)
    if len(text) <= limit:
        return text
    # Still too long with only the hook and the ending: shorten the hook, then cut at a sentence boundary.
    tail = separator.join(blocks[1:])
    room = limit - len(tail) - len(separator)
    if room >= 40:
        return clip(blocks[0], room) + separator + tail
    return cut_at_sentence(text, limit)


def cut_at_sentence(text: str, limit: int) -> str:
    """The longest run of whole sentences within the limit (or the first sentence clipped)."""
    if len(text) <= limit:
        return text
    kept = ""
    for part in sentences(text):
        candidate = (kept + " " + part).strip()
        if len(candidate) > limit:
            break
        kept = candidate
    return kept or clip(text, limit)
