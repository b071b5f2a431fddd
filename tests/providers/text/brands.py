"""The test brands (tests/data/content/brands.json) as saved profiles and as brand runtimes."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

BRANDS: dict[str, dict[str, Any]] = json.loads(
    (Path(__file__).parents[2] / "data" / "content" / "brands.json").read_text()
)


def runtime_of(profile: dict[str, Any]) -> dict[str, Any]:
    """The get_brand_runtime shape of a canonical profile (CATALOG.md §6), enough for the composer."""
    voice = profile.get("voiceProfile", {})
    vocabulary = profile.get("vocabularyRules", {})
    return {
        "found": True,
        "name": profile.get("brandName", ""),
        "industry": profile.get("industryClassification", ""),
        "messaging": {
            "valuePropositions": profile.get("valuePropositions", []),
            "messagingPillars": profile.get("messagingPillars", []),
            "contentPillars": [f"{p['name']} ({round(p['weight'] * 100)}%)" for p in profile.get("contentPillars", [])],
            "proofPoints": profile.get("proofPoints", []),
            "socialProof": profile.get("socialProof", {}),
        },
        "voice": {
            "tone": voice.get("tone", []),
            "style": voice.get("style", []),
            "avoidPatterns": voice.get("avoidPatterns", []),
            "preferredTerms": vocabulary.get("preferredTerms", []),
            "bannedTerms": vocabulary.get("bannedTerms", []),
            "writingStyleRules": profile.get("writingStyleRules", {}),
            "platformOverrides": voice.get("platformOverrides", {}),
        },
        "audience": profile.get("targetAudience", {}),
    }
