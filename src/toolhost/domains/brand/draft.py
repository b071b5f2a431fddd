"""extract_brand's draft: what the pages, stylesheets and copy say, each field with the confidence its
evidence earns, and an overall confidence that grows with the pages read, the fields found and how far
the pages agree. Nothing is saved."""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from datetime import UTC, datetime
from typing import Any

from toolhost.domains.brand import css_extract, html_extract, phrases, social_proof
from toolhost.domains.brand.extraction import Sources
from toolhost.domains.brand.palette import ColorVote, choose_palette
from toolhost.domains.brand.text_analysis import VoiceSignals, measure_voice
from toolhost.platform.dates import iso

# How much each field counts towards the overall confidence: what a writer needs first weighs most.
EXPECTED_FIELDS: dict[str, float] = {
    "brandName": 1.0,
    "description": 0.5,
    "colorPalette.primary": 1.0,
    "colorPalette.text": 0.5,
    "typography": 0.5,
    "voiceProfile.tone": 1.0,
    "voiceProfile.languagePatterns": 0.5,
    "valuePropositions": 1.0,
    "targetAudience.primary": 1.0,
    "proofPoints": 0.5,
    "socialProof": 0.5,
    "logoUrl": 0.5,
}
FULL_COPY_WORDS = 800  # about three pages of a small site: enough to measure a voice
THEME_COLOR_WEIGHT = 6.0
LOGO_COLOR_WEIGHT = 3.0


@dataclass(frozen=True, slots=True)
class DraftColors:
    """The three brand colours the catalogue's `colors` shows."""

    primary: str | None
    secondary: str | None
    accent: str | None


@dataclass(frozen=True, slots=True)
class DraftVoice:
    """Tone and style words, and the copy's key terms."""

    tone: list[str]
    style: list[str]
    keywords: list[str]


@dataclass(frozen=True, slots=True)
class DraftAudience:
    """Who the copy says it is for, and the problems it names."""

    primary: str
    pain_points: list[str]


@dataclass(frozen=True, slots=True)
class ExtractionMetadata:
    """What was read to make the draft."""

    method: str
    pages_read: list[str]
    pages_failed: list[str]
    stylesheets_read: int
    overall_confidence: float
    extracted_at: str


@dataclass(frozen=True, slots=True)
class BrandDraft:
    """extract_brand's result: the headline fields, and `brand_context`, the canonical profile document
    (CATALOG.md §6) that save_brand_profile takes as it is."""

    brand_name: str
    description: str
    colors: DraftColors
    voice: DraftVoice
    audience: DraftAudience
    logo_url: str | None
    brand_context: dict[str, Any]
    metadata: ExtractionMetadata


@dataclass
class _Confidence:
    first_url: str | None
    fields: dict[str, dict[str, Any]] = field(default_factory=dict)

    def note(self, path: str, value: float, page: str | None = None) -> None:
        page = page or self.first_url
        self.fields[path] = {
            "value": round(min(0.95, value), 2),
            "source": "extracted",
            **({"page": page} if page else {}),
        }

    def value(self, path: str) -> float:
        if path == "socialProof":
            found = [item["value"] for key, item in self.fields.items() if key.startswith("socialProof.")]
            return max(found, default=0.0)
        item = self.fields.get(path)
        return float(item["value"]) if item else 0.0


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


def _color_votes(sources: Sources, findings: css_extract.CssFindings, logo_color: str | None) -> list[ColorVote]:
    """The stylesheets' votes, plus the theme-color meta tags (shared by the pages that declare them) and
    the logo's own colour."""
    votes = list(findings.votes)
    pages = sources.pages
    declared = [page.theme_color for page in pages if page.theme_color]
    for color in dict.fromkeys(declared):
        share = declared.count(color) / len(pages)
        votes.append(ColorVote(color, "primary", THEME_COLOR_WEIGHT * share, 0.0, "theme-color"))
    if logo_color:
        votes.append(ColorVote(logo_color, "primary", LOGO_COLOR_WEIGHT, 1.0, "logo"))
    return votes


def _agreement(pages: list[html_extract.PageFindings], name: str) -> float:
    """How far the other pages confirm the first: they name the same brand and share its look (a
    stylesheet or theme colour). 0 with one page: nothing confirms it."""
    if len(pages) < 2:
        return 0.0
    first = pages[0]
    scores = []
    for page in pages[1:]:
        named = bool(name) and name.lower() in (page.title + " " + page.site_name + " " + page.text).lower()
        same_look = bool(set(page.stylesheet_urls) & set(first.stylesheet_urls)) or (
            page.theme_color is not None and page.theme_color == first.theme_color
        )
        scores.append((named + same_look) / 2)
    return sum(scores) / len(scores)


def _overall(confidence: _Confidence, pages: int, words: int, agreement: float) -> float:
    """The fields found (weighted by what they are worth and how sure each is), scaled by how much was
    read: the copy's length, the pages and their agreement."""
    coverage = sum(weight * confidence.value(path) for path, weight in EXPECTED_FIELDS.items())
    coverage /= sum(EXPECTED_FIELDS.values())
    evidence = 0.55 + 0.2 * min(1.0, words / FULL_COPY_WORDS) + 0.1 * min(1.0, pages / 3) + 0.15 * agreement
    return round(coverage * evidence, 2)


def build_draft(sources: Sources, logo_color: str | None, text_only: str | None = None) -> BrandDraft:
    """The draft from what was read."""
    pages = sources.pages
    texts = [text_only] if text_only is not None else [page.text for page in pages]
    copy = "\n\n".join(texts)
    confidence = _Confidence(pages[0].url if pages else None)
    note = confidence.note

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
    choice = choose_palette(_color_votes(sources, findings, logo_color))
    for slot in choice.palette:
        # Each independent kind of evidence (theme-color, header, headings, links...) adds to the certainty.
        note(f"colorPalette.{slot}", 0.4 + 0.12 * len(choice.evidence.get(slot, ())))
    linked = [family for page in pages for href in page.font_links for family in css_extract.google_font_families(href)]
    typography = css_extract.typography(findings, linked)
    if typography["headingFont"] or typography["bodyFont"]:
        note("typography", 0.7 if findings.body_fonts or findings.heading_fonts else 0.5)

    signals = measure_voice(copy) if copy.strip() else None
    words = signals.word_count if signals else 0
    text_strength = min(1.0, words / FULL_COPY_WORDS)
    tone: list[str] = []
    style: list[str] = []
    rules: dict[str, Any] = {}
    if signals and words >= 30:
        tone, style = voice_descriptors(signals)
        for path in ("voiceProfile.tone", "voiceProfile.style", "writingStyleRules"):
            note(path, 0.3 + 0.5 * text_strength)
        rules = {
            "perspective": signals.perspective,
            "useContractions": signals.contraction_rate >= 1.0,
            "emojiPolicy": "none"
            if signals.emoji_rate == 0
            else "sparingly"
            if signals.emoji_rate < 1.5
            else "frequent",
        }
    keywords = [term for term in phrases.key_terms(texts) if term.lower() != name.lower()]
    if keywords:
        note("voiceProfile.languagePatterns", 0.3 + 0.4 * text_strength)
    # Preferred terms are the phrases a writer should reuse: whole noun phrases of two words or more first.
    preferred = ([term for term in keywords if " " in term] + [term for term in keywords if " " not in term])[:5]

    text_pages = pages or [html_extract.PageFindings(url="", text=copy)]
    propositions = html_extract.value_propositions(text_pages)
    if propositions:
        note("valuePropositions", 0.4 + 0.1 * min(len(propositions), 4))
    audience_primary, pains = html_extract.audience(text_pages)
    if audience_primary:
        note("targetAudience.primary", 0.85 if " who " in audience_primary or " that " in audience_primary else 0.6)
    if pains:
        note("targetAudience.painPoints", 0.4)

    awards = social_proof.awards(text_pages)
    certifications = social_proof.certifications(text_pages)
    press = social_proof.press_mentions(text_pages)
    # The canonical profile has no certifications list: a certification is a recognition, kept with awards.
    recognitions = awards + certifications
    for mention in social_proof.recognitions(text_pages):
        within = [other for other in recognitions if other.name.lower() in mention.name.lower()]
        if any(mention.name.lower() in other.name.lower() for other in recognitions) or any(
            not re.fullmatch(r"Certified \w+", other.name) for other in within
        ):
            continue  # a name already given ("SOC 2 Type II" for "SOC 2 Type II certified")
        # "Certified Dealer" was cut from the badge that names whose: "Bosch eBike Certified Dealer"
        recognitions = [other for other in recognitions if other not in within]
        recognitions.append(mention)
    if recognitions:
        note("socialProof.awards", 0.75, recognitions[0].page)
    if press:
        note("socialProof.pressMentions", 0.75, press[0].page)
    proofs = html_extract.proof_points(text_pages)
    for mention in recognitions:
        if not any(mention.name in point["claim"] for point in proofs):
            proofs.append({"claim": mention.name, "evidence": f"stated on {mention.page}", "status": "unverified"})
    if proofs:
        note("proofPoints", 0.5)
    logo, logo_confidence = html_extract.best_logo(pages)
    if logo:
        note("logoUrl", logo_confidence)
    testimonials = [quote for page in pages for quote in page.testimonials][:5]

    overall = _overall(confidence, len(pages), words, _agreement(pages, name))
    palette = choice.palette
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
            **({"measured": signals.as_dict()} if signals and words >= 30 else {}),
        },
        "vocabularyRules": {"preferredTerms": preferred, "bannedTerms": []},
        "writingStyleRules": rules,
        "targetAudience": {"primary": audience_primary, "painPoints": pains},
        "valuePropositions": propositions,
        "proofPoints": proofs[:12],
        "socialProof": {
            "testimonials": testimonials,
            "awards": [mention.name for mention in recognitions],
            "pressMentions": [mention.name for mention in press],
        },
        "colorPalette": palette,
        "typography": typography,
        "logoUrl": logo,
        "confidence": {
            "overall": overall,
            "provider": "builtin",
            "pagesScraped": len(pages),
            "fields": confidence.fields,
        },
    }
    return BrandDraft(
        brand_name=name,
        description=description,
        colors=DraftColors(palette.get("primary"), palette.get("secondary"), palette.get("accent")),
        voice=DraftVoice(tone=tone, style=style, keywords=keywords),
        audience=DraftAudience(primary=audience_primary, pain_points=pains),
        logo_url=logo,
        brand_context=context,
        metadata=ExtractionMetadata(
            method=sources.method,
            pages_read=[page.url for page in pages],
            pages_failed=sources.failed,
            stylesheets_read=len(sources.stylesheets),
            overall_confidence=overall,
            extracted_at=iso(datetime.now(UTC)),
        ),
    )
