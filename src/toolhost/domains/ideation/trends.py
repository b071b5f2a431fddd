"""Trends from feeds and pages, parsed and ranked locally: recency and how often a topic recurs.

A trend is a `TrendRecord`, a typed dict in fetch_trends' shape (title, url, views, publishedAt, ...): the trends
cache stores the list as JSON and fetch_trends answers from it as stored.
"""

from __future__ import annotations

import calendar
import math
import re
from collections import Counter
from datetime import UTC, datetime
from typing import Any, Required, TypedDict
from urllib.parse import urljoin

from toolhost.platform.dates import iso
from toolhost.platform.results import ValidationFailed
from toolhost.providers.text import analysis

FEED_ITEMS = 50
PAGE_TOPICS = 25
DESCRIPTION_CHARS = 500
TAG = re.compile(r"<[^>]+>")


class TrendRecord(TypedDict, total=False):
    """A trend as fetch_trends answers it and the trends cache stores it (JSON: the catalogue's names)."""

    title: Required[str]
    source: Required[str]
    category: str
    description: str
    url: str
    views: int | None
    publishedAt: str
    thumbnail: str


def _plain(text: str) -> str:
    return " ".join(TAG.sub(" ", text or "").split())


def _meaningful_words(text: str) -> list[str]:
    """Words of three letters or more that are not stopwords: what two topics can share."""
    return [word for word in analysis.words(text) if len(word) >= 3 and word not in analysis.STOPWORDS]


def _terms(text: str) -> set[str]:
    words = _meaningful_words(text)
    return set(words) | {f"{first} {second}" for first, second in zip(words, words[1:], strict=False)}


def _rank(items: list[TrendRecord], moments: list[datetime | None]) -> list[TrendRecord]:
    """Orders items by a blend of recency (newest = 1, halving every 3 days) and recurring topics."""
    term_sets = [_terms(item["title"] + " " + item.get("description", "")) for item in items]
    counts = Counter(term for terms in term_sets for term in terms)
    frequency = [sum(counts[term] - 1 for term in terms if counts[term] > 1) for terms in term_sets]
    top_frequency = max(frequency, default=0) or 1
    dated = [moment for moment in moments if moment is not None]
    newest = max(dated) if dated else None
    scores = []
    for index, moment in enumerate(moments):
        recency = (
            0.5
            if moment is None or newest is None
            else math.pow(0.5, max(0.0, (newest - moment).total_seconds()) / (3 * 86400))
        )
        scores.append(0.6 * recency + 0.4 * frequency[index] / top_frequency)
    order = sorted(range(len(items)), key=lambda index: (-scores[index], index))
    return [items[index] for index in order]


def _entry_time(entry: Any) -> datetime | None:
    for key in ("published_parsed", "updated_parsed", "created_parsed"):
        value = entry.get(key)
        if value:
            return datetime.fromtimestamp(calendar.timegm(value), tz=UTC)
    return None


def parse_feed(content: bytes, *, category: str) -> list[TrendRecord]:
    """RSS 2.0, Atom or RDF entries: the newest 50, de-duplicated, ranked; else validation_error."""
    import feedparser  # imported on first use, like yake below: an idle server does not need it

    parsed = feedparser.parse(content)
    if not parsed.get("version") or (parsed.get("bozo") and not parsed.entries):
        raise ValidationFailed(
            "the URL did not return an RSS, Atom or RDF feed",
            field_errors=[{"path": "url", "message": "not a feed"}],
            recover_with="use source url for a web page",
        )
    entries = sorted(
        parsed.entries,
        key=lambda entry: _entry_time(entry) or datetime.min.replace(tzinfo=UTC),
        reverse=True,
    )
    items: list[TrendRecord] = []
    moments: list[datetime | None] = []
    seen: set[str] = set()
    for entry in entries:
        title = _plain(entry.get("title", ""))
        if not title or title.lower() in seen:
            continue
        seen.add(title.lower())
        moment = _entry_time(entry)
        item: TrendRecord = {"title": title[:1000], "source": "rss", "category": category}
        description = _plain(entry.get("summary", ""))
        if description:
            item["description"] = description[:DESCRIPTION_CHARS]
        if entry.get("link"):
            item["url"] = str(entry["link"])[:2048]
        if moment is not None:
            item["publishedAt"] = iso(moment)
        thumbnail = (entry.get("media_thumbnail") or [{}])[0].get("url")
        if thumbnail:
            item["thumbnail"] = str(thumbnail)[:2048]
        items.append(item)
        moments.append(moment)
        if len(items) >= FEED_ITEMS:
            break
    return _rank(items, moments)


def _key_phrases(text: str, limit: int) -> list[str]:
    if len(text.split()) < 20:
        return []
    import yake  # imported here: building the extractor is only needed for page topics

    extractor = yake.KeywordExtractor(lan="en", n=3, top=limit, dedupLim=0.7)
    return [phrase for phrase, _score in extractor.extract_keywords(text[:100_000])]


def parse_page(html: str, *, url: str, category: str) -> list[TrendRecord]:
    """Topics of a page: its headings, linked article titles and top key phrases (at most 25)."""
    # Imported on first use: the lexbor parser holds ~2 MB that an idle server does not need.
    from selectolax.lexbor import LexborHTMLParser as HTMLParser

    tree = HTMLParser(html)
    for node in tree.css("script, style, noscript, nav, footer"):
        node.decompose()
    topics: list[TrendRecord] = []
    seen: set[str] = set()

    def add(title: str, link: str | None = None) -> None:
        title = " ".join(title.split())
        if len(title) < 4 or title.lower() in seen or len(topics) >= PAGE_TOPICS:
            return
        seen.add(title.lower())
        item: TrendRecord = {"title": title[:1000], "source": "url", "category": category}
        if link:
            item["url"] = link[:2048]
        topics.append(item)

    for heading in tree.css("h1, h2, h3"):
        add(heading.text(separator=" "))
    for anchor in tree.css("a[href]"):
        text = anchor.text(separator=" ").strip()
        href = anchor.attributes.get("href") or ""
        if len(text.split()) >= 4 and not href.startswith(("#", "javascript:", "mailto:")):
            add(text, urljoin(url, href))
    body = tree.body.text(separator=" ") if tree.body else ""
    for phrase in _key_phrases(body, PAGE_TOPICS):
        add(phrase)
    return topics


def keep_niche(items: list[TrendRecord], niche: str | None) -> list[TrendRecord]:
    """Items whose title or description contains one of the niche's words."""
    if not niche:
        return items
    words = set(_meaningful_words(niche))
    if not words:
        return items
    kept = []
    for item in items:
        text = (item["title"] + " " + item.get("description", "")).lower()
        if any(re.search(rf"\b{re.escape(word)}", text) for word in words):
            kept.append(item)
    return kept
