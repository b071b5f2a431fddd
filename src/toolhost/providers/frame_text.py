"""What a prompt puts on a frame: the layout (quote, statistic, list, announcement or headline), the phrase to
set, the supporting lines and the words to emphasise. Deterministic: the same prompt, the same composition.

The builtin image model sets a composition on one frame (content's images); the builtin video model shows its
phrases as timed captions (video's motion), so it sits below both.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Literal

from toolhost.providers.text import analysis

Layout = Literal["quote", "stat", "list", "announcement", "headline"]
DIRECTIVE = re.compile(
    r"^\s*(?:please\s+)?(?:create|generate|make|design|draw|render|produce|build)\s+"
    r"(?:me\s+)?(?:an?\s+|the\s+)?(?:[\w-]+\s+){0,3}?"
    r"(?:image|graphic|poster|banner|visual|picture|card|thumbnail|cover|post|illustration)s?"
    r"(?:\s+(?:of|for|about|announcing|showing|that says|saying|with|featuring|on))?\s*[:,-]?\s*",
    re.IGNORECASE,
)
QUOTED = re.compile(r"[\"“«]([^\"”»]{3,200})[\"”»]")
FIGURE = re.compile(r"(?<![\w.])([$€£]?\d[\d,.]*\s?(?:%|x|k|m|bn|million|billion|percent)?)(?![\w])", re.IGNORECASE)
LIST_MARKERS = re.compile(r"\b(?:steps?|tips|ways|reasons|lessons|rules|mistakes|checklist|how to)\b", re.IGNORECASE)
ANNOUNCE_MARKERS = re.compile(
    r"\b(?:launch(?:es|ing)?|announc\w*|introduc\w*|new|now available|coming soon|release[sd]?|event|webinar)\b",
    re.IGNORECASE,
)
QUOTE_MARKERS = re.compile(r"\b(?:quote|testimonial|said|says)\b", re.IGNORECASE)


@dataclass(frozen=True, slots=True)
class Composition:
    """What the prompt asks for: the layout, the main phrase, supporting lines and emphasised words."""

    layout: Layout
    headline: str
    supporting: list[str]
    emphasis: frozenset[str]
    figure: str | None = None
    badge: str | None = None


def _words(text: str) -> list[str]:
    return re.findall(r"[\w'’$€£%.,-]+", text)


def _clean(text: str) -> str:
    return re.sub(r"\s+", " ", text).strip(" .,:;-")


def _shorten(text: str, max_words: int) -> str:
    words = text.split()
    return " ".join(words[:max_words]) if len(words) > max_words else text


def body_sentences(prompt: str) -> list[str]:
    """The prompt's sentences after its request ("create an image of ..."), whitespace collapsed, none empty."""
    body = DIRECTIVE.sub("", prompt, count=1)
    return [_clean(part) for part in re.split(r"(?<=[.!?])\s+|\n+|;\s*", body) if _clean(part)]


def compose(prompt: str) -> Composition:
    """Reads the layout, phrases and emphasis out of a prompt (deterministic: same prompt, same result)."""
    quoted = QUOTED.search(prompt)
    body = DIRECTIVE.sub("", prompt, count=1).strip()
    sentences = body_sentences(prompt) or [_clean(prompt) or "Untitled"]
    figure_match = FIGURE.search(body)
    figure = (
        figure_match.group(1).strip() if figure_match and any(ch.isdigit() for ch in figure_match.group(1)) else None
    )
    if quoted and (QUOTE_MARKERS.search(prompt) or len(quoted.group(1).split()) >= 4):
        layout: Layout = "quote"
        headline = _clean(quoted.group(1))
        supporting = [sentence for sentence in sentences if quoted.group(1) not in sentence][:1]
    elif LIST_MARKERS.search(body) and (re.search(r"(?:^|\n)\s*(?:\d+[.)]|[-*•])\s+", prompt) or "," in body):
        layout = "list"
        headline, supporting = _list_parts(prompt, body)
    elif figure is not None and len(figure.rstrip("%")) <= 12:
        layout = "stat"
        headline = _shorten(sentences[0], 14)
        supporting = sentences[1:2]
    elif ANNOUNCE_MARKERS.search(body):
        layout = "announcement"
        headline = _clean(quoted.group(1)) if quoted else _shorten(sentences[0], 10)
        supporting = [sentence for sentence in sentences[1:] if sentence != headline][:1]
    else:
        layout = "headline"
        headline = _clean(quoted.group(1)) if quoted else _shorten(sentences[0], 10)
        supporting = [sentence for sentence in sentences[1:] if sentence != headline][:1]
    badge = None
    if layout == "announcement":
        marker = ANNOUNCE_MARKERS.search(body)
        badge = (marker.group(0) if marker else "new").upper()
        if badge.startswith(("LAUNCH", "INTRODUC", "ANNOUNC")):
            badge = "NEW"
    return Composition(
        layout=layout,
        headline=headline[:160],
        supporting=[_shorten(line, 24)[:200] for line in supporting],
        emphasis=_emphasis(headline, body, figure),
        figure=figure if layout == "stat" else None,
        badge=badge,
    )


def _list_parts(prompt: str, body: str) -> tuple[str, list[str]]:
    items = [_clean(match) for match in re.findall(r"(?:^|\n)\s*(?:\d+[.)]|[-*•])\s+([^\n]+)", prompt) if _clean(match)]
    if items:
        title = _clean(re.split(r"\n", DIRECTIVE.sub("", prompt, count=1), maxsplit=1)[0])
        return _shorten(title, 10), [_shorten(item, 10) for item in items[:5]]
    title, _, rest = body.partition(":")
    if not rest:
        title, rest = re.split(r",", body, maxsplit=1)[0], body
        parts = [_clean(part) for part in re.split(r",|\band\b", rest)[1:]]
    else:
        parts = [_clean(part) for part in re.split(r",|\band\b", rest)]
    return _shorten(_clean(title), 10), [_shorten(part, 10) for part in parts if part][:5]


def _emphasis(headline: str, body: str, figure: str | None) -> frozenset[str]:
    """Up to three headline words to set in the accent colour: figures, then the prompt's most repeated terms."""
    candidates = [word for word in _words(headline) if word.strip(".,").lower() not in analysis.STOPWORDS]
    counts: dict[str, int] = {}
    for word in _words(body.lower()):
        key = word.strip(".,")
        if key and key not in analysis.STOPWORDS:
            counts[key] = counts.get(key, 0) + 1
    chosen: list[str] = []
    for word in candidates:
        key = word.strip(".,").lower()
        if any(character.isdigit() for character in key) or (figure and key in figure.lower()):
            chosen.append(key)
    ranked = sorted(
        {word.strip(".,").lower() for word in candidates},
        key=lambda key: (-counts.get(key, 0), -len(key), key),
    )
    for key in ranked:
        if len(chosen) >= 3:
            break
        if key not in chosen and len(key) > 3:
            chosen.append(key)
    return frozenset(chosen[:3])
