"""extract_brand's reading: the URL resolved, the page, same-site pages, stylesheets and logo fetched."""

from __future__ import annotations

import asyncio
import io
import re
from dataclasses import dataclass, field
from urllib.parse import urlsplit

from PIL import Image, UnidentifiedImageError

from toolhost.domains.brand import html_extract
from toolhost.domains.brand.colors import chroma, to_hex
from toolhost.platform.results import UpstreamFailed, ValidationFailed
from toolhost.providers import platforms as social_platforms
from toolhost.providers.fetch import Fetcher

PAGE_BYTES = 5 * 1024 * 1024
CSS_BYTES = 2 * 1024 * 1024
LOGO_BYTES = 2 * 1024 * 1024
MAX_SUBPAGES = 4
MAX_STYLESHEETS = 6
UNICODE_DOTS = str.maketrans({"\u3002": ".", "\uff0e": ".", "\uff61": "."})


@dataclass
class Sources:
    """What extraction read: pages, stylesheets and how much of it failed."""

    pages: list[html_extract.PageFindings] = field(default_factory=list)
    stylesheets: list[str] = field(default_factory=list)
    failed: list[str] = field(default_factory=list)
    method: str = "url"


def resolve_url(raw: str) -> str:
    """A full URL from `url`: itself, or a `platform:handle` alias; a bare handle is a validation_error."""
    value = raw.strip().translate(UNICODE_DOTS)
    alias = re.match(r"^([a-z]+):@?([\w.\-]{1,100})$", value, re.IGNORECASE)
    profile = social_platforms.profile_url(alias.group(1), alias.group(2)) if alias else None
    if profile is not None:
        return profile
    if not re.match(r"^https?://", value, re.IGNORECASE):
        host = value.lstrip("@").split("/", 1)[0]
        if "." not in host:
            raise ValidationFailed(
                f"{raw!r} is a handle, not a URL",
                recover_with="pass a full URL (https://example.com) or platform:handle, e.g. instagram:acme",
                field_errors=[{"path": "url", "message": "a bare handle names no site"}],
            )
        value = "https://" + value.lstrip("@")
    return value


async def gather_url(fetcher: Fetcher, url: str) -> Sources:
    """Fetches the page, up to four same-site pages and the same-site stylesheets, all through the fetcher."""
    sources = Sources(method="url")
    response = await fetcher.get(url, max_bytes=PAGE_BYTES)
    response.ensure_success()
    if "html" not in response.content_type and not response.text.lstrip()[:200].lower().startswith(
        ("<!doctype", "<html")
    ):
        raise UpstreamFailed(f"{urlsplit(url).hostname} did not answer with an HTML page", provider="fetch")
    first = html_extract.read_page(response.text, response.url)
    sources.pages.append(first)
    for link in html_extract.same_site_links(first, MAX_SUBPAGES):
        try:
            sub = await fetcher.get(link, max_bytes=PAGE_BYTES)
        except (UpstreamFailed, ValidationFailed):
            sources.failed.append(link)
            continue
        if sub.ok and "html" in sub.content_type:
            sources.pages.append(html_extract.read_page(sub.text, sub.url))
        else:
            sources.failed.append(link)
    site = (urlsplit(first.url).hostname or "").removeprefix("www.")
    stylesheet_urls = [
        href
        for page in sources.pages
        for href in page.stylesheet_urls
        if (urlsplit(href).hostname or "").removeprefix("www.") == site
    ]
    for href in list(dict.fromkeys(stylesheet_urls))[:MAX_STYLESHEETS]:
        try:
            sheet = await fetcher.get(href, max_bytes=CSS_BYTES)
        except (UpstreamFailed, ValidationFailed):
            sources.failed.append(href)
            continue
        if sheet.ok:
            sources.stylesheets.append(sheet.text)
        else:
            sources.failed.append(href)
    return sources


async def logo_color(fetcher: Fetcher, logo_url: str | None) -> str | None:
    """The logo's dominant chromatic colour (raster images through Pillow, SVG by its fill colours)."""
    if not logo_url:
        return None
    try:
        response = await fetcher.get(logo_url, max_bytes=LOGO_BYTES, timeout=10)
    except (UpstreamFailed, ValidationFailed):
        return None
    if not response.ok:
        return None
    if "svg" in response.content_type or response.content.lstrip()[:5] in (b"<svg ", b"<?xml"):
        fills = [to_hex(value) for value in re.findall(r"(?:fill|stop-color)=\"([^\"]+)\"", response.text)]
        chromatic = [value for value in fills if value and chroma(value) >= 0.06]
        return max(set(chromatic), key=chromatic.count) if chromatic else None
    return await asyncio.to_thread(_dominant_raster_color, response.content)


def _dominant_raster_color(content: bytes) -> str | None:
    try:
        with Image.open(io.BytesIO(content)) as image:
            image.draft("RGB", (128, 128))
            small = image.convert("RGBA").resize((48, 48))
    except (UnidentifiedImageError, OSError, ValueError, Image.DecompressionBombError):
        return None
    counts: dict[str, int] = {}
    for red, green, blue, alpha in small.getdata():  # type: ignore[attr-defined]
        if alpha < 128:
            continue
        key = f"#{red & 0xF0:02x}{green & 0xF0:02x}{blue & 0xF0:02x}"
        counts[key] = counts.get(key, 0) + 1
    chromatic = [(count, color) for color, count in counts.items() if chroma(color) >= 0.06]
    return max(chromatic)[1] if chromatic else None
