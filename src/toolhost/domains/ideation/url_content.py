"""extract_url_content: clean article text, product features, feed items or a YouTube page's metadata.

Everything is fetched through the SSRF-safe fetcher (pages ≤10 MB). YouTube URLs are read through the
YouTube connector when the caller has a connected YouTube account (captions only for that channel's own
videos), else from the page's own metadata.

A page's content is a dict in extract_url_content's shape, whose keys depend on the kind of page; planning and
the pipeline read it as JSON (planning sits below ideation and cannot import a type of it).
"""

from __future__ import annotations

import json
import re
from typing import TYPE_CHECKING, Any
from urllib.parse import urlsplit

from toolhost.domains.ideation import trends as trend_parsing
from toolhost.domains.ideation.youtube import NO_TRANSCRIPT_RECOVERY, ConnectedYouTube
from toolhost.platform.results import NotFound, UpstreamFailed, ValidationFailed
from toolhost.providers.fetch import Fetcher
from toolhost.providers.text.base import BrandContext, HookFamily, PostRequest
from toolhost.providers.text.builtin import BuiltinTextProvider

if TYPE_CHECKING:
    from selectolax.lexbor import LexborHTMLParser

BENEFIT = re.compile(
    r"\b(?:helps? you|lets? you|so you can|save[sd]?|without|faster|easier|never have to|no more"
    r"|keeps? your)\b",
    re.IGNORECASE,
)
DIFFERENTIATOR = re.compile(r"\b(?:only|unlike|first|patented|exclusive|the one|built for|designed for)\b", re.I)
FEED_TYPES = ("rss", "atom", "xml")
HOOK_FAMILIES: tuple[HookFamily, ...] = ("curiosity", "pain_point", "contrarian")


def youtube_kind(url: str) -> str | None:
    """youtube_video, youtube_channel or None for a URL."""
    parts = urlsplit(url)
    host = (parts.hostname or "").lower().removeprefix("www.").removeprefix("m.")
    if host == "youtu.be" and parts.path.strip("/"):
        return "youtube_video"
    if host in ("youtube.com", "music.youtube.com"):
        if parts.path.startswith(("/watch", "/shorts/", "/live/")):
            return "youtube_video"
        if parts.path.startswith(("/@", "/channel/", "/c/", "/user/")):
            return "youtube_channel"
    return None


def _meta(tree: LexborHTMLParser) -> dict[str, str]:
    found: dict[str, str] = {}
    for node in tree.css("meta"):
        key = (
            node.attributes.get("property") or node.attributes.get("name") or node.attributes.get("itemprop") or ""
        ).lower()
        content = node.attributes.get("content") or ""
        if key and content and key not in found:
            found[key] = content.strip()[:5000]
    return found


def _json_ld_types(tree: LexborHTMLParser) -> set[str]:
    types: set[str] = set()
    for node in tree.css('script[type="application/ld+json"]'):
        try:
            data = json.loads(node.text() or "null")
        except json.JSONDecodeError:
            continue
        for item in data if isinstance(data, list) else [data]:
            if isinstance(item, dict):
                kind = item.get("@type")
                types.update(kind if isinstance(kind, list) else [kind] if isinstance(kind, str) else [])
                for child in item.get("@graph") or []:
                    if isinstance(child, dict) and isinstance(child.get("@type"), str):
                        types.add(child["@type"])
    return {kind.lower() for kind in types}


def _sentences(text: str) -> list[str]:
    return [part.strip() for part in re.split(r"(?<=[.!?])\s+|\n+", text) if 4 <= len(part.split()) <= 40]


def _product(tree: LexborHTMLParser, text: str) -> dict[str, Any]:
    features: list[str] = []
    for item in tree.css("main li, article li, section li, [class*=feature] li, ul li"):
        line = item.text(separator=" ", strip=True)
        if 2 <= len(line.split()) <= 25 and line not in features and not item.css_first("a[href]"):
            features.append(line[:300])
    sentences = _sentences(text)
    benefits = [sentence[:300] for sentence in sentences if BENEFIT.search(sentence)][:10]
    usp = next((sentence[:300] for sentence in sentences if DIFFERENTIATOR.search(sentence)), None)
    return {"features": features[:15], "benefits": benefits, "usp": usp}


def suggested_hooks(topic: str) -> list[str]:
    """Three hooks on the page's topic from the built-in composer (curiosity, pain point, contrarian)."""
    composer = BuiltinTextProvider()
    hooks = []
    for family in HOOK_FAMILIES:
        hook = composer.compose(
            PostRequest(prompt=topic, content_type="hook", brand=BrandContext(), hook_family=family)
        )
        if hook and hook not in hooks:
            hooks.append(hook)
    return hooks


def _with_hooks(payload: dict[str, Any]) -> dict[str, Any]:
    if payload.get("title"):
        payload["suggested_hooks"] = suggested_hooks(payload["title"])
    return payload


def _youtube(kind: str, tree: LexborHTMLParser, meta: dict[str, str]) -> dict[str, Any]:
    """What a YouTube page's own metadata says, for callers without a connected channel."""
    title = meta.get("og:title") or meta.get("title") or ""
    payload: dict[str, Any] = {
        "title": title,
        "description": meta.get("og:description") or meta.get("description", ""),
    }
    if kind == "youtube_video":
        views = meta.get("interactioncount") or meta.get("userinteractioncount")
        tags = [tag.strip() for tag in (meta.get("keywords") or "").split(",") if tag.strip()]
        tags += [value for key, value in meta.items() if key == "og:video:tag"]
        channel = tree.css_first('[itemprop="author"] [itemprop="name"], link[itemprop="name"]')
        payload["video_metadata"] = {
            "views": int(views) if views and views.isdigit() else None,
            "likes": None,
            "duration": meta.get("duration") or None,
            "tags": tags[:30],
            "channel_name": (channel.attributes.get("content") if channel else None) or meta.get("og:site_name"),
        }
    return payload


async def extract(
    fetcher: Fetcher, url: str, extract_type: str, youtube: ConnectedYouTube | None = None
) -> dict[str, Any]:
    """The extract_url_content payload for a URL; `youtube` reads YouTube URLs through the connector."""
    kind = youtube_kind(url)
    if extract_type == "transcript" and kind != "youtube_video":
        raise ValidationFailed(
            "extract_type transcript needs a YouTube video URL",
            field_errors=[{"path": "extract_type", "message": "transcript is only for youtube.com/watch or youtu.be"}],
        )
    if kind is not None and youtube is not None:
        read = (
            await youtube.read_video(url, extract_type) if kind == "youtube_video" else await youtube.read_channel(url)
        )
        if read is not None:
            return _with_hooks({"source_type": kind, "url": url, **read})
    if extract_type == "transcript":
        raise NotFound(
            "No transcript available: captions come only through the YouTube connector for a connected "
            "channel's videos",
            recover_with=NO_TRANSCRIPT_RECOVERY,
        )
    response = await fetcher.get(url)
    response.ensure_success()
    body_start = response.content.lstrip()[:300].lower()
    if (
        any(marker in response.content_type for marker in FEED_TYPES)
        or body_start.startswith((b"<rss", b"<feed"))
        or (body_start.startswith(b"<?xml") and (b"<rss" in body_start or b"<feed" in body_start))
    ):
        items = trend_parsing.parse_feed(response.content, category="general")
        if not items and not body_start.startswith((b"<rss", b"<feed", b"<?xml")):
            raise UpstreamFailed("the feed could not be parsed", provider="fetch")
        return {
            "source_type": "article",
            "url": response.url,
            "title": urlsplit(response.url).hostname or "",
            "description": f"{len(items)} feed item(s)",
            "items": items,
        }
    if "html" not in response.content_type and not body_start.startswith((b"<!doctype", b"<html")):
        raise UpstreamFailed(
            f"{urlsplit(url).hostname} answered {response.content_type or 'no content type'}, not a page",
            provider="fetch",
        )
    # Imported on first use: the lexbor parser holds ~2 MB that an idle server does not need.
    from selectolax.lexbor import LexborHTMLParser

    html = response.text
    tree = LexborHTMLParser(html)
    meta = _meta(tree)
    if kind is not None:
        return _with_hooks({"source_type": kind, "url": response.url, **_youtube(kind, tree, meta)})
    import trafilatura  # imported on first use: with lxml and its URL and date helpers it holds ~13 MB

    metadata = trafilatura.extract_metadata(html, default_url=response.url)
    text = trafilatura.extract(html, include_comments=False, include_tables=True, favor_precision=True) or ""
    title_node = tree.css_first("title")
    title = (
        (metadata.title if metadata and metadata.title else None)
        or meta.get("og:title")
        or (title_node.text(strip=True) if title_node else "")
    )
    description = (
        (metadata.description if metadata and metadata.description else None)
        or meta.get("og:description")
        or meta.get("description")
        or ""
    )
    is_product = extract_type == "product" or (
        extract_type == "auto" and ("product" in _json_ld_types(tree) or meta.get("og:type", "").lower() == "product")
    )
    payload: dict[str, Any] = {
        "source_type": "product" if is_product else "article",
        "url": response.url,
        "title": title[:500],
        "description": description[:2000],
        "transcript": text,
        "author": (metadata.author if metadata else None) or meta.get("author") or None,
        "published_at": (metadata.date if metadata else None) or meta.get("article:published_time") or None,
    }
    if is_product:
        payload.update(_product(tree, text or (tree.body.text(separator="\n") if tree.body else "")))
    return _with_hooks(payload)
