"""The shape resolver: any brand_context a caller saves becomes the canonical profile_data (CATALOG.md §6)."""

from __future__ import annotations

import re
from typing import Any

from toolhost.domains.brand.colors import PALETTE_SLOTS, to_hex
from toolhost.platform.fields import SOCIAL_PLATFORMS
from toolhost.platform.results import ValidationFailed
from toolhost.providers import platforms as social_platforms

LIST_SPLIT = re.compile(r"[,;\n]")
QUOTED_TOKEN = re.compile(r"[\"\u201c\u2018']([^\"\u201d\u2019']{2,40})[\"\u201d\u2019']")
PILLAR_WEIGHT = re.compile(r"^(?P<name>.*?)\s*\((?P<percent>\d{1,3}(?:\.\d+)?)\s*%\)\s*$")
ITEM_LIMIT = 100
STRING_LIMIT = 1_000
EXAMPLE_LIMIT = 20
OVERRIDE_KEYS = ("tone", "style", "sampleContent", "hashtagStrategy", "ctaStyle", "avoidPatterns")
CANONICAL_MARKERS = (
    "brandName",
    "tagline",
    "description",
    "voiceProfile",
    "vocabularyRules",
    "valuePropositions",
    "colorPalette",
    "targetAudience",
    "contentPillars",
    "messagingPillars",
    "typography",
    "proofPoints",
    "writingStyleRules",
)
FLAT_MARKERS = ("voiceTone", "voiceTags", "discouragedTerms")


def text_list(value: Any) -> list[str]:
    """A list of non-empty strings; comma/semicolon/newline strings are split, dict items give their name."""
    if isinstance(value, str):
        items: list[Any] = LIST_SPLIT.split(value)
    elif isinstance(value, list):
        items = value
    else:
        return []
    result: list[str] = []
    for item in items:
        if isinstance(item, dict):
            item = item.get("name") or item.get("text") or item.get("value")
        if isinstance(item, str | int | float) and not isinstance(item, bool) and str(item).strip():
            text = str(item).strip()[:STRING_LIMIT]
            if text not in result:
                result.append(text)
    return result[:ITEM_LIMIT]


def text_value(value: Any) -> str:
    """A single string field; lists are joined, other types dropped."""
    if isinstance(value, str):
        return value.strip()[: STRING_LIMIT * 5]
    if isinstance(value, list):
        return ", ".join(text_list(value))
    if isinstance(value, int | float) and not isinstance(value, bool):
        return str(value)
    return ""


def _mapping(value: Any) -> dict[str, Any]:
    return value if isinstance(value, dict) else {}


def content_pillars(value: Any) -> list[dict[str, Any]]:
    """Pillars as {name, weight 0-1}: from dicts, "Name (40%)" strings or bare names (even weights)."""
    items = value if isinstance(value, list) else text_list(value)
    pillars: list[dict[str, Any]] = []
    for item in items[:ITEM_LIMIT]:
        name, weight = "", None
        if isinstance(item, dict):
            name = text_value(item.get("name") or item.get("pillar"))
            raw = item.get("weight", item.get("percentage"))
            if isinstance(raw, int | float) and not isinstance(raw, bool):
                weight = float(raw) / 100 if raw > 1 else float(raw)
        elif isinstance(item, str):
            match = PILLAR_WEIGHT.match(item.strip())
            name, weight = (match["name"], float(match["percent"]) / 100) if match else (item.strip(), None)
        if name:
            pillars.append({"name": name[:STRING_LIMIT], "weight": weight})
    unweighted = [pillar for pillar in pillars if pillar["weight"] is None]
    if unweighted:
        remaining = max(0.0, 1.0 - sum(pillar["weight"] or 0.0 for pillar in pillars))
        share = remaining / len(unweighted) if remaining > 0 else 1.0 / len(pillars)
        for pillar in unweighted:
            pillar["weight"] = share
    for pillar in pillars:
        pillar["weight"] = round(min(1.0, max(0.0, pillar["weight"])), 4)
    return pillars


def proof_points(value: Any) -> list[dict[str, Any]]:
    """Proof points as {claim, evidence, status}; a bare string is an unverified claim."""
    items = value if isinstance(value, list) else text_list(value)
    result = []
    for item in items[:ITEM_LIMIT]:
        if isinstance(item, dict):
            claim = text_value(item.get("claim") or item.get("text"))
            evidence = text_value(item.get("evidence") or item.get("source"))
            status = item.get("status")
            if status not in ("verified", "unverified"):
                status = "verified" if evidence else "unverified"
        else:
            claim, evidence, status = text_value(item), "", "unverified"
        if claim:
            result.append({"claim": claim, "evidence": evidence, "status": status})
    return result


def color_palette(value: Any, errors: list[dict[str, str]], path: str) -> dict[str, str]:
    """The nine palette slots as `#rrggbb`; anything that is not a colour is a field error."""
    palette: dict[str, str] = {}
    source = _mapping(value)
    for slot in PALETTE_SLOTS:
        raw = source.get(slot)
        if raw is None or raw == "":
            continue
        normalized = to_hex(raw) if isinstance(raw, str) else None
        if normalized is None:
            errors.append({"path": f"{path}.{slot}", "message": f"{str(raw)[:60]!r} is not a colour (use #rrggbb)"})
        else:
            palette[slot] = normalized
    return palette


def platform_overrides(value: Any) -> dict[str, dict[str, Any]]:
    """Per-platform voice overrides for the social platforms ("x" is twitter)."""
    result: dict[str, dict[str, Any]] = {}
    for platform, override in _mapping(value).items():
        key = social_platforms.canonical_name(str(platform))
        if key not in SOCIAL_PLATFORMS or not isinstance(override, dict):
            continue
        result[key] = {
            "tone": text_list(override.get("tone")),
            "style": text_list(override.get("style")),
            "sampleContent": text_value(override.get("sampleContent") or override.get("samples")),
            "hashtagStrategy": text_value(override.get("hashtagStrategy")),
            "ctaStyle": text_value(override.get("ctaStyle")),
            "avoidPatterns": text_list(override.get("avoidPatterns")),
        }
    return result


def _terms_from_avoid_patterns(patterns: list[str]) -> list[str]:
    terms: list[str] = []
    for pattern in patterns:
        quoted = QUOTED_TOKEN.findall(pattern)
        if quoted:
            terms.extend(token.strip() for token in quoted)
        elif len(pattern.split()) <= 3 and "(" not in pattern:
            terms.append(pattern.strip())
    return list(dict.fromkeys(term for term in terms if term))


def resolve_shape(context: dict[str, Any]) -> tuple[dict[str, Any], str]:
    """profile_data from a brand_context of any known shape, and the shape's name."""
    if "brand_context" in context and isinstance(context["brand_context"], dict):
        return resolve_shape(context["brand_context"])[0], "extract_brand"
    errors: list[dict[str, str]] = []
    extract_result = "colors" in context and "voice" in context and "brandName" in context
    flat = any(key in context for key in FLAT_MARKERS)
    canonical = any(key in context for key in CANONICAL_MARKERS)
    shape = "extract_brand" if extract_result else "flat" if flat else "canonical" if canonical else "stub"
    voice = _mapping(context.get("voiceProfile")) or (_mapping(context.get("voice")) if not extract_result else {})
    extracted_voice = _mapping(context.get("voice")) if extract_result else {}
    vocabulary = _mapping(context.get("vocabularyRules"))
    audience = _mapping(context.get("targetAudience")) or _mapping(context.get("audience"))
    tone = text_list(voice.get("tone") or context.get("voiceTone") or extracted_voice.get("tone"))
    style = text_list(voice.get("style") or context.get("voiceTags") or extracted_voice.get("style"))
    avoid = text_list(voice.get("avoidPatterns"))
    language = text_list(voice.get("languagePatterns") or extracted_voice.get("keywords"))
    # posts the brand counts as its own voice; check_brand_consistency compares copy with them
    examples = text_list(voice.get("examples") if isinstance(voice.get("examples"), list) else [])[:EXAMPLE_LIMIT]
    preferred = text_list(vocabulary.get("preferredTerms")) + text_list(context.get("preferredTerms"))
    preferred += text_list(voice.get("preferredTerms"))
    banned = text_list(vocabulary.get("bannedTerms")) + text_list(context.get("discouragedTerms"))
    banned += text_list(voice.get("bannedTerms"))
    if voice and not vocabulary and not banned:
        banned = _terms_from_avoid_patterns(avoid)  # CATALOG §6: voiceProfile without vocabularyRules
    if voice and not vocabulary and not preferred:
        preferred = language
    rules = _mapping(context.get("writingStyleRules")) or _mapping(voice.get("writingStyleRules"))
    palette_source = context.get("colorPalette") if "colorPalette" in context else context.get("colors")
    social = _mapping(context.get("socialProof"))
    typography = _mapping(context.get("typography"))
    composition = _mapping(context.get("visualComposition"))
    video = _mapping(context.get("videoRules"))
    profile: dict[str, Any] = {
        "brandName": text_value(context.get("brandName") or context.get("name")),
        "tagline": text_value(context.get("tagline")),
        "description": text_value(context.get("description")),
        "industryClassification": text_value(context.get("industryClassification") or context.get("industry")),
        "competitivePositioning": text_value(context.get("competitivePositioning") or context.get("positioning")),
        "archetype": text_value(context.get("archetype")),
        "voiceProfile": {
            "tone": tone,
            "style": style,
            "avoidPatterns": avoid,
            "languagePatterns": language,
            **({"examples": examples} if examples else {}),
            "platformOverrides": platform_overrides(voice.get("platformOverrides")),
        },
        "vocabularyRules": {
            "preferredTerms": list(dict.fromkeys(preferred))[:ITEM_LIMIT],
            "bannedTerms": list(dict.fromkeys(banned))[:ITEM_LIMIT],
        },
        "writingStyleRules": {
            "perspective": text_value(rules.get("perspective")),
            "useContractions": rules.get("useContractions") if isinstance(rules.get("useContractions"), bool) else None,
            "emojiPolicy": text_value(rules.get("emojiPolicy")),
        },
        "targetAudience": {
            "ageRange": text_value(audience.get("ageRange")),
            "location": text_value(audience.get("location")),
            "interests": text_list(audience.get("interests")),
            "painPoints": text_list(audience.get("painPoints")),
            "aspirations": text_list(audience.get("aspirations")),
            "primary": text_value(audience.get("primary")),
        },
        "valuePropositions": text_list(context.get("valuePropositions")),
        "proofPoints": proof_points(context.get("proofPoints")),
        "messagingPillars": text_list(context.get("messagingPillars")),
        "contentPillars": content_pillars(context.get("contentPillars")),
        "socialProof": {
            "testimonials": text_list(social.get("testimonials")),
            "awards": text_list(social.get("awards")),
            "pressMentions": text_list(social.get("pressMentions")),
        },
        "colorPalette": color_palette(palette_source, errors, "brand_context.colorPalette"),
        "typography": {
            "headingFont": text_value(typography.get("headingFont")),
            "bodyFont": text_value(typography.get("bodyFont")),
            "weights": [w for w in typography.get("weights") or [] if isinstance(w, int)][:20],
            "scale": text_list(typography.get("scale"))[:20],
        },
        "visualComposition": {key: text_value(composition.get(key)) for key in ("style", "layout", "imagery")},
        "logoUrl": text_value(context.get("logoUrl")) or None,
        "referenceFrameUrl": text_value(context.get("referenceFrameUrl")) or None,
        "videoRules": {key: text_value(video.get(key)) for key in ("pacing", "colorGrading")},
        "confidence": _confidence(context.get("confidence")),
    }
    measured = _mapping(voice.get("measured")) or _mapping(extracted_voice.get("measured"))
    if measured:
        profile["voiceProfile"]["measured"] = {
            key: value for key, value in measured.items() if isinstance(value, int | float | str)
        }
    if errors:
        raise ValidationFailed("brand_context has values that are not valid", field_errors=errors)
    return profile, shape


def _confidence(value: Any) -> dict[str, Any]:
    source = _mapping(value)
    overall = source.get("overall")
    fields = {
        str(path): {
            "value": float(item.get("value", 0.0)) if isinstance(item.get("value"), int | float) else 0.0,
            "source": item.get("source") if item.get("source") in ("stated", "extracted", "inferred") else "stated",
            **({"page": str(item["page"])} if isinstance(item.get("page"), str) else {}),
        }
        for path, item in _mapping(source.get("fields")).items()
        if isinstance(item, dict)
    }
    pages = source.get("pagesScraped")
    return {
        "overall": float(overall) if isinstance(overall, int | float) and 0 <= overall <= 1 else None,
        "provider": text_value(source.get("provider")) or None,
        "pagesScraped": int(pages) if isinstance(pages, int) and pages >= 0 else 0,
        "fields": fields,
    }


def filled_fields(profile: dict[str, Any]) -> list[str]:
    """Dotted paths of the profile's non-empty leaf fields (confidence excluded)."""
    paths: list[str] = []

    def walk(value: Any, path: str) -> None:
        if isinstance(value, dict):
            for key, item in value.items():
                walk(item, f"{path}.{key}" if path else key)
        elif value not in (None, "", [], {}):
            paths.append(path)

    walk({key: value for key, value in profile.items() if key != "confidence"}, "")
    return paths


def is_empty(profile: dict[str, Any]) -> bool:
    """Whether a profile carries no brand data at all."""
    return not filled_fields(profile)
