"""Building blocks of the built-in composer: topics from prompts, sentences, hashtags, fitting to a limit."""

from __future__ import annotations

import hashlib
import random
import re

from toolhost.providers.platforms import PlatformRules
from toolhost.providers.text import analysis
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
LEAD_IN = re.compile(
    r"^\s*(?:please\s+)?(?:can you\s+|could you\s+)?(?:write|create|draft|generate|make|give "
    r"me|compose|produce|craft)"
    r"\s+(?:me\s+|us\s+)?(?:an?\s+|the\s+|some\s+|\d+\s+)?(?:[\w'-]+\s+){0,4}?"
    r"(?:post|caption|thread|script|blog(?:\s+post)?|article|hook|video|tweet|reel|update|newsletter|copy)s?"
    r"(?:\s+(?:about|on|for|covering|explaining|regarding|around|that\s+explains|to\s+explain|introducing|announcing))?\s+",
    re.IGNORECASE,
)
ABOUT = re.compile(r"\b(?:about|on the topic of|regarding|covering)\s+(.+)", re.IGNORECASE)
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


def upper_first(text: str) -> str:
    """Capitalizes the first letter, leaving the rest alone (and a leading web address as it is)."""
    if not text or _starts_with_url(text):
        return text
    return text[:1].upper() + text[1:]


def sentence(text: str) -> str:
    """A clause made into a sentence: capitalized, with one end mark."""
    text = text.strip().rstrip(",;:")
    if not text:
        return ""
    text = upper_first(text)
    return text if text[-1] in ".!?" else text + "."


def clause(text: str) -> str:
    """A sentence made into a clause to embed: no end mark, first letter lower-cased where safe."""
    return lower_first(text.strip().rstrip(".!?;:"))


def extract_topic(prompt: str) -> str:
    """The subject of a prompt: its first sentence without the "write a post about" lead-in, bounded."""
    parts = sentences(prompt)
    first = parts[0] if parts else prompt.strip()
    stripped = LEAD_IN.sub("", first, count=1)
    if stripped == first:
        match = ABOUT.search(first)
        if match and len(match.group(1)) > 8:
            stripped = match.group(1)
    stripped = re.sub(
        r"\s+(?:for|on)\s+(?:linkedin|twitter|x|instagram|tiktok|youtube|facebook|threads|bluesky|mastodon)\b",
        "",
        stripped,
        flags=re.IGNORECASE,
    )
    topic = clip(stripped.strip().rstrip(".!?:;"), 90)
    return lower_first(topic) or "what we are working on"


def prompt_details(prompt: str) -> list[str]:
    """Sentences of the prompt after the first: details the caller asked to include."""
    return [part for part in sentences(prompt)[1:12] if 12 <= len(part) <= 240]


def prompt_figures(prompt: str) -> list[str]:
    """Sentences of the prompt that state a figure; the composer may repeat them, never invent others."""
    return [part for part in sentences(prompt)[:20] if FIGURE.search(part) and len(part) <= 240]


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


def overlap(first: str, second: str) -> int:
    """How many content words two texts share; ranks pillars and pains by relevance to a topic."""
    return len(set(keywords(first, 40)) & set(keywords(second, 40)))


def hashtag(phrase: str) -> str:
    """`#CamelCase` of a phrase's words (at most three), or "" when nothing usable is left."""
    words = [word for word in re.findall(r"[A-Za-z0-9]+", phrase) if word.lower() not in STOPWORDS][:3]
    if not words:
        return ""
    tag = "".join(word if word.isupper() else word.capitalize() for word in words)
    return "#" + tag if len(tag) >= 3 and not tag.isdigit() else ""


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
    nouns = [word for word in keywords(topic, 8) if not word.endswith(("ing", "ed", "ly")) and len(word) > 3]
    candidates += [hashtag(word) for word in nouns[:3]]
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
        return upper_first(full) if word[0].isupper() else full

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
