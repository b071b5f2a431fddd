"""The four-layer brand runtime read from a profile, and the explain_brand_system report."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Literal


def _pillar_label(pillar: dict[str, Any]) -> str:
    return f"{pillar['name']} ({round(float(pillar.get('weight') or 0) * 100)}%)"


def build_runtime(profile: dict[str, Any]) -> dict[str, Any]:
    """get_brand_runtime's payload: messaging, voice, visual and operating constraints, plus confidence."""
    voice = profile.get("voiceProfile") or {}
    vocabulary = profile.get("vocabularyRules") or {}
    rules = profile.get("writingStyleRules") or {}
    audience = profile.get("targetAudience") or {}
    confidence = profile.get("confidence") or {}
    voice_layer: dict[str, Any] = {
        "tone": voice.get("tone") or [],
        "style": voice.get("style") or [],
        "avoidPatterns": voice.get("avoidPatterns") or [],
        "preferredTerms": vocabulary.get("preferredTerms") or [],
        "bannedTerms": vocabulary.get("bannedTerms") or [],
        "writingStyleRules": {
            "perspective": rules.get("perspective") or None,
            "useContractions": rules.get("useContractions"),
            "emojiPolicy": rules.get("emojiPolicy") or None,
        },
        "platformOverrides": voice.get("platformOverrides") or {},
    }
    if voice.get("languagePatterns"):
        voice_layer["languagePatterns"] = voice["languagePatterns"]
    if voice.get("examples"):
        voice_layer["examples"] = voice["examples"]
    if voice.get("measured"):
        voice_layer["measured"] = voice["measured"]
    return {
        "found": True,
        "name": profile.get("brandName") or None,
        "tagline": profile.get("tagline") or None,
        "description": profile.get("description") or None,
        "industry": profile.get("industryClassification") or None,
        "positioning": profile.get("competitivePositioning") or None,
        "archetype": profile.get("archetype") or "",
        "messaging": {
            "valuePropositions": profile.get("valuePropositions") or [],
            "messagingPillars": profile.get("messagingPillars") or [],
            "contentPillars": [_pillar_label(pillar) for pillar in profile.get("contentPillars") or []],
            "proofPoints": profile.get("proofPoints") or [],
            "socialProof": profile.get("socialProof") or {"testimonials": [], "awards": [], "pressMentions": []},
        },
        "voice": voice_layer,
        "visual": {
            "colorPalette": profile.get("colorPalette") or {},
            "typography": profile.get("typography") or {},
            "composition": profile.get("visualComposition") or {"style": "", "layout": "", "imagery": ""},
            "logoUrl": profile.get("logoUrl"),
            "referenceFrameUrl": profile.get("referenceFrameUrl"),
        },
        "audience": {
            "ageRange": audience.get("ageRange") or None,
            "location": audience.get("location") or None,
            "interests": audience.get("interests") or [],
            "painPoints": audience.get("painPoints") or [],
            "aspirations": audience.get("aspirations") or [],
            **({"primary": audience["primary"]} if audience.get("primary") else {}),
        },
        "confidence": {
            "overall": confidence.get("overall"),
            "provider": confidence.get("provider"),
            "pagesScraped": confidence.get("pagesScraped") or 0,
            "fields": confidence.get("fields") or {},
        },
    }


def _present(profile: dict[str, Any], path: str) -> bool:
    value: Any = profile
    for key in path.split("."):
        value = value.get(key) if isinstance(value, dict) else None
    if path == "colorPalette.primary":
        return isinstance(value, str) and value.lower() not in ("", "#000000")
    if path == "typography":
        return isinstance(value, dict) and bool(value.get("headingFont") or value.get("bodyFont"))
    return value not in (None, "", [], {})


SECTIONS: tuple[tuple[str, tuple[tuple[str, str], ...]], ...] = (
    (
        "Identity",
        (
            ("brandName", "brandName"),
            ("tagline", "tagline"),
            ("industryClassification", "industryClassification"),
            ("competitivePositioning", "competitivePositioning"),
        ),
    ),
    (
        "Voice",
        (
            ("tone", "voiceProfile.tone"),
            ("style", "voiceProfile.style"),
            ("avoidPatterns", "voiceProfile.avoidPatterns"),
        ),
    ),
    ("Audience", (("ageRange", "targetAudience.ageRange"), ("painPoints", "targetAudience.painPoints"))),
    (
        "Messaging",
        (
            ("valuePropositions", "valuePropositions"),
            ("messagingPillars", "messagingPillars"),
            ("contentPillars", "contentPillars"),
        ),
    ),
    (
        "Visual",
        (
            ("logoUrl", "logoUrl"),
            ("colorPalette.primary", "colorPalette.primary"),
            ("typography", "typography"),
        ),
    ),
    (
        "Vocabulary",
        (
            ("preferredTerms", "vocabularyRules.preferredTerms"),
            ("bannedTerms", "vocabularyRules.bannedTerms"),
        ),
    ),
    ("Video Rules", (("pacing", "videoRules.pacing"), ("colorGrading", "videoRules.colorGrading"))),
)


@dataclass(frozen=True, slots=True)
class SectionReport:
    """One section of the brand: how many of its fields are present, its label, and what is missing."""

    name: str
    present: int
    total: int
    label: Literal["OK", "PARTIAL", "MISSING"]
    missing_fields: list[str]


@dataclass(frozen=True, slots=True)
class BrandExplanation:
    """explain_brand_system's report: the seven sections, the profile's confidence, what to add first."""

    sections: list[SectionReport]
    overall_confidence: float | None
    pages_scraped: int
    recommendations: list[str]


def explain(profile: dict[str, Any]) -> BrandExplanation:
    """The seven sections with what is present and missing, confidence, and recommendations by impact."""
    sections = []
    for name, fields in SECTIONS:
        missing = [label for label, path in fields if not _present(profile, path)]
        present = len(fields) - len(missing)
        share = present / len(fields)
        label: Literal["OK", "PARTIAL", "MISSING"] = "OK" if share >= 0.8 else "PARTIAL" if share >= 0.5 else "MISSING"
        sections.append(SectionReport(name, present, len(fields), label, missing))
    confidence = profile.get("confidence") or {}
    overall = confidence.get("overall")
    recommendations = []
    if overall is None or overall < 0.6:
        shown = "unknown" if overall is None else f"{overall:.2f}"
        recommendations.append(
            f"Confidence is {shown} (below 0.6): re-run extract_brand on more pages or complete the "
            "profile by hand, then save_brand_profile."
        )
    if not _present(profile, "contentPillars"):
        recommendations.append("Add contentPillars with weights: planning and generation spread topics by them.")
    if not _present(profile, "vocabularyRules.preferredTerms"):
        recommendations.append("Add vocabularyRules.preferredTerms: consistency checks reward them in copy.")
    if not _present(profile, "logoUrl"):
        recommendations.append("Add a logoUrl: renderers place it on images, carousels and videos.")
    if not _present(profile, "videoRules.pacing"):
        recommendations.append("Set videoRules.pacing so generated videos cut at the brand's rhythm.")
    return BrandExplanation(
        sections=sections,
        overall_confidence=overall,
        pages_scraped=confidence.get("pagesScraped") or 0,
        recommendations=recommendations,
    )
