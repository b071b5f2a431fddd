"""check_brand_consistency's scorer: eight lexical dimensions that read tone, topic, audience, vocabulary and
claims, and voiceFit, a judgement of manner learned from labelled copy (`voice_fit.py`).

Pure and deterministic: `score_consistency(runtime, text)` takes a get_brand_runtime payload and a text.
The brand side (targets, stems, term patterns) is compiled once per distinct runtime and cached.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from toolhost.domains.brand import dimensions as scorers
from toolhost.domains.brand.brand_model import compile_brand
from toolhost.domains.brand.claims import Claim, find_claims
from toolhost.domains.brand.dimensions import Dimension, Issue
from toolhost.domains.brand.register import measure_register
from toolhost.domains.brand.text_analysis import measure_voice
from toolhost.domains.brand.voice_fit import voice_fit
from toolhost.providers.text.analysis import content_stems

# Fitted by bench/train_voice_fit.py on the tuning data (voiceFit from models that never saw the text's brand):
# the weights that best put 60 between on- and off-brand copy, each at least 0.02 before rounding; they sum to 1.
WEIGHTS: dict[str, float] = {
    "toneAlignment": 0.08,
    "messagingAlignment": 0.04,
    "claimSupport": 0.08,
    "avoidCompliance": 0.04,
    "audienceRelevance": 0.03,
    "vocabularyAdherence": 0.08,
    "structuralPatterns": 0.04,
    "brandMentions": 0.03,
    "voiceFit": 0.58,
}
PASS_MARK = 60
BLOCKER_STEP = 5  # how far under the pass mark each further blocker pushes `overall`
# A dimension whose failure alone makes copy off-brand, whatever the weighted overall: the brand's own avoid
# rules. Tone and topic used to block too; on copy written by people who never saw the scorer they blocked as
# much on-brand copy as off-brand (thin profiles, plain posts), so they now weigh in `overall` like the rest.
CRITICAL = ("avoidCompliance",)


@dataclass(frozen=True, slots=True)
class ConsistencyResult:
    """Everything check_brand_consistency returns."""

    overall: int
    passed: bool
    clear_to_publish: bool
    dimensions: dict[str, Dimension]
    preferred_terms_used: list[str]
    banned_terms_found: list[str]
    fabrication_warnings: list[str]
    issues: list[Issue]
    claims: list[Claim]
    blockers: list[str]

    def as_payload(self) -> dict[str, Any]:
        """The tool's payload keys (CATALOG.md §6)."""
        return {
            "overall": self.overall,
            "passed": self.passed,
            "clearToPublish": self.clear_to_publish,
            "dimensions": {name: dimension.as_dict() for name, dimension in self.dimensions.items()},
            "preferredTermsUsed": self.preferred_terms_used,
            "bannedTermsFound": self.banned_terms_found,
            "fabricationWarnings": self.fabrication_warnings,
            "blockers": self.blockers,
            "issues": [issue.as_dict() for issue in self.issues],
            "claims": [
                {
                    "text": claim.text,
                    "span": {"start": claim.start, "end": claim.end},
                    "kind": claim.kind,
                    "supported": claim.supported,
                    "evidence": claim.evidence.text if claim.evidence else None,
                }
                for claim in self.claims
            ],
        }


def score_consistency(runtime: dict[str, Any], text: str) -> ConsistencyResult:
    """Scores a text against a brand runtime on nine weighted dimensions (0-100 each, overall 0-100)."""
    brand = compile_brand(runtime)
    signals = measure_voice(text)
    stems = content_stems(text)
    issues: list[Issue] = []
    dimensions: dict[str, Dimension] = {}
    register = measure_register(text, brand.self_names)
    dimensions["toneAlignment"] = scorers.tone(brand, signals, register, text, issues)
    dimensions["messagingAlignment"] = scorers.messaging(brand, stems)
    claims = find_claims(text, list(brand.evidence))
    dimensions["claimSupport"] = scorers.claim_support(claims, issues)
    dimensions["avoidCompliance"] = scorers.avoid(brand, text, issues)
    dimensions["audienceRelevance"] = scorers.audience(brand, stems, signals, text)
    banned: list[str] = []
    preferred: list[str] = []
    dimensions["vocabularyAdherence"] = scorers.vocabulary(brand, text, issues, banned, preferred)
    dimensions["structuralPatterns"] = scorers.structure(text, signals, issues)
    dimensions["brandMentions"] = scorers.mentions(brand, text, signals, issues)
    dimensions["voiceFit"] = voice_fit(brand, text, issues)
    for name, dimension in dimensions.items():
        dimension.weight = WEIGHTS[name]
        dimension.score = max(0.0, min(100.0, dimension.score))
    weighted = sum(dimension.score * dimension.weight for dimension in dimensions.values())
    warnings = [
        f'Unsupported {claim.kind} claim: "{claim.text[:160]}"'
        + (" (only an unverified proof point backs it)" if claim.evidence else " (no proof point backs it)")
        for claim in claims
        if not claim.supported
    ]
    issues.sort(key=lambda issue: (issue.start, issue.dimension))
    blockers = pass_blockers(dimensions, banned, claims)
    overall = calibrate(weighted, blockers)
    return ConsistencyResult(
        overall=overall,
        # `passed` is the catalogue's contract; `clearToPublish` (ext) also needs no blocker.
        passed=overall >= PASS_MARK and not banned,
        clear_to_publish=overall >= PASS_MARK and not blockers,
        dimensions={name: dimensions[name] for name in WEIGHTS},
        preferred_terms_used=preferred,
        banned_terms_found=banned,
        fabrication_warnings=warnings,
        issues=issues,
        claims=claims,
        blockers=blockers,
    )


def calibrate(weighted: float, blockers: list[str]) -> int:
    """`overall` on a scale where 60 is the line between on- and off-brand.

    A blocker is a reason the copy is off-brand whatever its other strengths, so it caps the score under the
    pass mark, each further blocker lower still; unblocked copy keeps its weighted score.
    """
    if not blockers:
        return round(weighted)
    return max(0, round(min(weighted, PASS_MARK - 1) - BLOCKER_STEP * (len(blockers) - 1)))


def pass_blockers(dimensions: dict[str, Dimension], banned: list[str], claims: list[Claim]) -> list[str]:
    """Why a text fails whatever its overall: a weighted average lets strong dimensions hide a fatal one.

    A banned term; a fabricated claim (a figure, ranking or guarantee that no proof point states at all;
    one backed only by an unverified proof point is a warning, not a blocker); or a critical dimension below
    the pass mark.
    """
    blockers = [f'Contains banned term: "{term}"' for term in banned]
    blockers += [
        f'Unsupported {claim.kind} claim: "{claim.text[:120]}"'
        for claim in claims
        if not claim.supported and claim.evidence is None and claim.severity == "high"
    ]
    blockers += [
        f"{name} below the pass mark ({round(dimensions[name].score)}/100)"
        for name in CRITICAL
        if dimensions[name].score < PASS_MARK
    ]
    return blockers
