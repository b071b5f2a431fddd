"""extract_brand: a draft brand runtime from a URL (page + same-site pages + CSS), raw HTML or plain text."""

from __future__ import annotations

import asyncio
import io
import re
from dataclasses import dataclass, field
from datetime import UTC, datetime
from typing import Any
from urllib.parse import urlsplit

from PIL import Image, UnidentifiedImageError

from toolhost.domains.brand import css_extract, html_extract
from toolhost.domains.brand.colors import WeightedColor, assign_roles, chroma, to_hex
from toolhost.domains.brand.text_analysis import VoiceSignals, measure_voice
from toolhost.platform.dates import iso
from toolhost.platform.results import UpstreamFailed, ValidationFailed
from toolhost.providers import platforms as social_platforms
from toolhost.providers.fetch import Fetcher

PAGE_BYTES = 5 * 1024 * 1024
CSS_BYTES = 2 * 1024 * 1024
LOGO_BYTES = 2 * 1024 * 1024
MAX_SUBPAGES = 4
MAX_STYLESHEETS = 6
KEYWORD_TEXT_LIMIT = 60_000
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


def voice_descriptors(signals: VoiceSignals) -> tuple[list[str], list[str]]:
    """Tone and style words from lexical measures (formality, exclamations, person, sentence length)."""
    tone: list[str] = []
    style: list[str] = []
    if signals.formality >= 0.6:
        tone.append("professional")
    elif signals.formality <= 0.35:
        tone.append("casual")
    else:
        tone.append("approachable")
    if signals.exclamation_per_sentence >= 0.2 or signals.hype_rate >= 1.0:
        tone.append("energetic")
    elif signals.exclamation_per_sentence < 0.05 and signals.hype_rate < 0.3:
        tone.append("calm")
    if signals.second_person_rate >= 3.0:
        tone.append("direct")
        style.append("conversational")
    if signals.average_sentence_length <= 13:
        style.append("concise")
    elif signals.average_sentence_length >= 22:
        style.append("detailed")
    if signals.reading_grade <= 8:
        style.append("plain-language")
    elif signals.reading_grade >= 13:
        style.append("technical")
    return tone, style


def key_phrases(text: str, limit: int = 12) -> list[str]:
    """Distinctive key phrases (YAKE), shortest wording kept when phrases overlap."""
    if len(text.split()) < 20:
        return []
    import yake  # imported on first use: with numpy and networkx it holds ~30 MB that an idle server does not need

    extractor = yake.KeywordExtractor(lan="en", n=3, top=limit * 2, dedupLim=0.7)
    phrases = [phrase for phrase, _ in extractor.extract_keywords(text[:KEYWORD_TEXT_LIMIT])]
    result: list[str] = []
    for phrase in phrases:
        lowered = phrase.lower()
        if not any(lowered in chosen.lower() or chosen.lower() in lowered for chosen in result):
            result.append(phrase)
    return result[:limit]


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


def build_draft(sources: Sources, extra_color: str | None, text_only: str | None = None) -> dict[str, Any]:
    """extract_brand's payload from what was read; nothing is saved."""
    pages = sources.pages
    copy = text_only if text_only is not None else "\n\n".join(page.text for page in pages)
    fields: dict[str, dict[str, Any]] = {}
    first_url = pages[0].url if pages else None

    def note(path: str, value: float, page: str | None = first_url) -> None:
        fields[path] = {"value": round(value, 2), "source": "extracted", **({"page": page} if page else {})}

    name, name_confidence = html_extract.brand_name(pages) if pages else ("", 0.0)
    if name:
        note("brandName", name_confidence)
    description = next((page.description for page in pages if page.description), "")
    if description:
        note("description", 0.8)
    headings = pages[0].headings if pages else []
    tagline = headings[0] if headings and headings[0] != name else ""
    if tagline:
        note("tagline", 0.5)
    findings = css_extract.CssFindings()
    if pages:
        findings = css_extract.read_css(
            sources.stylesheets + [block for page in pages for block in page.style_blocks],
            [style for page in pages for style in page.inline_styles],
        )
    colors = list(findings.colors)
    theme_color = next((page.theme_color for page in pages if page.theme_color), None)
    if extra_color:
        colors.append(WeightedColor(extra_color, max(3.0, sum(c.weight for c in colors) * 0.1)))
    palette = assign_roles(colors, theme_color)
    palette.update(findings.role_hints)  # what the stylesheet itself calls primary, accent, ... wins
    for slot in palette:
        hinted = slot in findings.role_hints or (slot == "primary" and theme_color is not None)
        note(f"colorPalette.{slot}", 0.85 if hinted else 0.6)
    linked = [family for page in pages for href in page.font_links for family in css_extract.google_font_families(href)]
    typography = css_extract.typography(findings, linked)
    if typography["headingFont"] or typography["bodyFont"]:
        note("typography", 0.7)
    signals = measure_voice(copy) if copy.strip() else None
    tone: list[str] = []
    style: list[str] = []
    rules: dict[str, Any] = {}
    if signals and signals.word_count >= 30:
        tone, style = voice_descriptors(signals)
        text_strength = min(1.0, signals.word_count / 800)
        note("voiceProfile.tone", 0.3 + 0.4 * text_strength)
        note("voiceProfile.style", 0.3 + 0.4 * text_strength)
        rules = {
            "perspective": signals.perspective,
            "useContractions": signals.contraction_rate >= 1.0,
            "emojiPolicy": "none"
            if signals.emoji_rate == 0
            else "sparingly"
            if signals.emoji_rate < 1.5
            else "frequent",
        }
        note("writingStyleRules", 0.3 + 0.4 * text_strength)
    keywords = key_phrases(copy)
    if keywords:
        note("voiceProfile.languagePatterns", 0.6)
    text_pages = pages or [html_extract.PageFindings(url="", text=copy)]
    propositions = html_extract.value_propositions(text_pages)
    if propositions:
        note("valuePropositions", 0.5)
    proofs = html_extract.proof_points(text_pages)
    if proofs:
        note("proofPoints", 0.5)
    audience_primary, pains = html_extract.audience(text_pages)
    if audience_primary:
        note("targetAudience.primary", 0.4)
    if pains:
        note("targetAudience.painPoints", 0.4)
    logo, logo_confidence = html_extract.best_logo(pages)
    if logo:
        note("logoUrl", logo_confidence)
    testimonials = [quote for page in pages for quote in page.testimonials][:5]
    expected = 12
    found_share = min(1.0, len(fields) / expected)
    mean_confidence = sum(item["value"] for item in fields.values()) / len(fields) if fields else 0.0
    page_factor = min(1.0, 0.6 + 0.1 * len(pages)) if pages else 0.5
    overall = round((0.5 * found_share + 0.5 * mean_confidence) * page_factor, 2)
    context: dict[str, Any] = {
        "brandName": name,
        "tagline": tagline,
        "description": description,
        "voiceProfile": {
            "tone": tone,
            "style": style,
            "avoidPatterns": [],
            "languagePatterns": keywords,
            "platformOverrides": {},
        },
        "vocabularyRules": {"preferredTerms": keywords[:5], "bannedTerms": []},
        "writingStyleRules": rules,
        "targetAudience": {"primary": audience_primary, "painPoints": pains},
        "valuePropositions": propositions,
        "proofPoints": proofs,
        "socialProof": {"testimonials": testimonials, "awards": [], "pressMentions": []},
        "colorPalette": palette,
        "typography": typography,
        "logoUrl": logo,
        "confidence": {
            "overall": overall,
            "provider": "builtin",
            "pagesScraped": len(pages),
            "fields": fields,
        },
    }
    if signals and signals.word_count >= 30:
        context["voiceProfile"]["measured"] = signals.as_dict()
    metadata = {
        "method": sources.method,
        "pages_read": [page.url for page in pages],
        "pages_failed": sources.failed,
        "stylesheets_read": len(sources.stylesheets),
        "overall_confidence": overall,
        "extracted_at": iso(datetime.now(UTC)),
    }
    return {
        "brandName": name,
        "description": description,
        "colors": {slot: palette.get(slot) for slot in ("primary", "secondary", "accent")},
        "voice": {"tone": ", ".join(tone), "style": ", ".join(style), "keywords": keywords},
        "audience": {"primary": audience_primary, "painPoints": pains},
        "logoUrl": logo,
        "brand_context": context,
        "extraction_metadata": metadata,
    }
