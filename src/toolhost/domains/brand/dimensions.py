"""The eight lexical dimensions of check_brand_consistency (the ninth, voiceFit, is `voice_fit.py`), each
scored 0-100 with the issues it found.

Kept as one module past 500 lines on purpose: it does one job, scoring a text on the eight dimensions; they
share the issue type, the neutral score and the span finders, and their weights make one `overall`, so they are
read and calibrated together (what `consistency.py` combines and `brand_model.py` compiles lives apart).
"""

from __future__ import annotations

import math
import re
from dataclasses import dataclass, field
from typing import Any

from toolhost.domains.brand.brand_model import (
    FEAR,
    HEALTH_CLAIMS,
    JARGON,
    JARGON_WORDS,
    MARKETING_HYPE,
    SHAMING,
    AvoidRule,
    BrandModel,
)
from toolhost.domains.brand.claims import NEGATED, Claim
from toolhost.domains.brand.register import Register, foreign_audience
from toolhost.domains.brand.text_analysis import (
    ALL_CAPS,
    CASUAL,
    EMOJI,
    HASHTAG,
    HYPE,
    NEGATIVE,
    OVERCLAIM,
    URGENCY,
    VoiceSignals,
    find_term,
)
from toolhost.providers.text.analysis import WORD, sentences, stem

NEUTRAL = 70.0  # the score of a dimension the profile gives nothing to judge by
NO_CLAIMS = 75.0  # nothing to verify is fine, citing the brand's own proof points is better

REPEATED_PUNCTUATION = re.compile(r"[!?]{2,}|\.{4,}")
EMOJI_RUN = re.compile(f"(?:{EMOJI.pattern}\\s*){{2,}}")


@dataclass(frozen=True, slots=True)
class Issue:
    """One finding, with the offending span of the text."""

    dimension: str
    rule: str
    start: int
    end: int
    text: str
    severity: str
    suggestion: str

    def as_dict(self) -> dict[str, Any]:
        """The `issues[]` entry of the payload."""
        return {
            "dimension": self.dimension,
            "rule": self.rule,
            "span": {"start": self.start, "end": self.end, "text": self.text},
            "severity": self.severity,
            "suggestion": self.suggestion,
        }


@dataclass(slots=True)
class Dimension:
    """A dimension's score, fixed weight and what it found."""

    score: float
    weight: float
    issues: list[str] = field(default_factory=list)
    suggestions: list[str] = field(default_factory=list)

    def as_dict(self) -> dict[str, Any]:
        """The `dimensions.<name>` entry of the payload."""
        return {
            "score": round(self.score),
            "weight": self.weight,
            "issues": self.issues,
            "suggestions": self.suggestions,
        }


def record_issue(
    issues: list[Issue],
    dimension: Dimension,
    name: str,
    rule: str,
    text: str,
    span: tuple[int, int],
    severity: str,
    suggestion: str,
) -> None:
    start, end = span
    issues.append(Issue(name, rule, start, end, text[start:end], severity, suggestion))
    message = f'{rule}: "{text[start:end][:80]}"'
    if message not in dimension.issues:
        dimension.issues.append(message)
    if suggestion not in dimension.suggestions:
        dimension.suggestions.append(suggestion)


def _first(pattern: re.Pattern[str], text: str) -> tuple[int, int] | None:
    match = pattern.search(text)
    return (match.start(), match.end()) if match else None


def _first_word(text: str, vocabulary: frozenset[str]) -> tuple[int, int] | None:
    for match in WORD.finditer(text):
        if match.group(0).lower().replace("\u2019", "'") in vocabulary:
            return match.start(), match.end()
    return None


TONE_ADVICE = {
    "formality": ("register", "match the brand's register: {direction}"),
    "exclamation_per_sentence": ("exclamation rate", "use fewer exclamation marks"),
    "emoji_rate": ("emoji use", "follow the emoji policy"),
    "hype_rate": ("hype words", "replace hype words with concrete, verifiable benefits"),
    "urgency_rate": ("urgency pressure", "drop pressure phrases; give a calm reason to act"),
    "casual_rate": ("slang", "replace slang with the brand's vocabulary"),
    "caps_rate": ("shouting in capitals", "write words in normal case"),
    "negativity_rate": ("fear and negativity", "frame the message positively, without fear or blame"),
    "contraction_rate": ("contractions", "spell contractions out (do not, we are)"),
    "average_sentence_length": ("sentence length", "bring sentences closer to {low:.0f}-{high:.0f} words"),
}


def _tone_span(feature: str, text: str) -> tuple[int, int] | None:
    if feature == "exclamation_per_sentence":
        index = text.find("!")
        return (index, index + 1) if index >= 0 else None
    if feature == "emoji_rate":
        return _first(EMOJI, text)
    if feature == "hype_rate":
        return _first_word(text, HYPE) or _first(OVERCLAIM, text)
    if feature == "casual_rate":
        return _first_word(text, CASUAL)
    if feature == "caps_rate":
        return _first(ALL_CAPS, text)
    if feature == "negativity_rate":
        return _first_word(text, NEGATIVE)
    if feature == "contraction_rate":
        return _first(re.compile(r"\b\w+['\u2019](?:s|re|ve|ll|d|m|t)\b"), text)
    if feature == "urgency_rate":
        lowered = text.lower()
        hits = [(lowered.find(phrase), len(phrase)) for phrase in URGENCY if phrase in lowered]
        if hits:
            start, length = min(hits)
            return start, start + length
        return None
    spans = sentences(text)
    return spans[0] if spans else None


def tone(brand: BrandModel, signals: VoiceSignals, register: Register, text: str, issues: list[Issue]) -> Dimension:
    dimension = Dimension(0.0, 0.0)
    targets = brand.targets
    log_sum = 0.0
    weight_sum = 0.0
    for feature, (low, high, _, weight) in targets.ranges.items():
        value = float(getattr(signals, feature))
        if feature == "average_sentence_length" and signals.sentence_count < 2:
            continue  # one sentence says little about sentence length
        closeness = targets.closeness(feature, value)
        log_sum += weight * math.log(max(closeness, 0.05))
        weight_sum += weight
        if closeness < 0.6:
            label, advice = TONE_ADVICE[feature]
            direction = "more formal" if value < low else "less formal"
            span = _tone_span(feature, text) or (0, min(len(text), 80))
            severity = "high" if closeness < 0.3 else "medium"
            record_issue(
                issues,
                dimension,
                "toneAlignment",
                f"tone: {label} off the brand voice",
                text,
                span,
                severity,
                advice.format(direction=direction, low=low, high=high),
            )
    score = 100.0 * math.exp(log_sum / weight_sum) if weight_sum else NEUTRAL
    if targets.perspective:
        wanted = {
            "we": signals.first_plural_rate,
            "you": signals.second_person_rate,
            "i": signals.first_singular_rate,
        }
        for marker, rate in wanted.items():
            if f"({marker})" in targets.perspective and rate == 0 and signals.word_count >= 25:
                score -= 6
                dimension.suggestions.append(f"write in the brand's perspective: {targets.perspective}")
    if not targets.described:
        score = (score + NEUTRAL) / 2  # little to judge by: pull towards neutral
    dimension.score = score * _register_factor(brand, signals, register, text, dimension, issues)
    return dimension


# Per 100 words beyond the brand's ceiling, the distance at which the register counts half.
CORPORATE_SCALE = 8.0
JOKEY_SCALE = 3.0
THIRD_PERSON_FACTOR = 0.8


def _register_factor(
    brand: BrandModel,
    signals: VoiceSignals,
    register: Register,
    text: str,
    dimension: Dimension,
    issues: list[Issue],
) -> float:
    """How far the quiet register (institutional, jokey, the brand in the third person) is off the brand's."""
    targets = brand.register
    factor = 1.0
    checks = (
        (
            register.corporate_rate - targets.corporate_ceiling,
            CORPORATE_SCALE,
            register.corporate_span,
            "tone: institutional register",
            "say it the way the brand talks: people and verbs, not nominalisations and stock phrases",
        ),
        (
            register.jokey_rate - targets.jokey_ceiling,
            JOKEY_SCALE,
            register.jokey_span,
            "tone: jokey register",
            "drop the banter; the brand's voice is more measured",
        ),
    )
    for excess, scale, span, rule, advice in checks:
        if excess <= 0:
            continue
        closeness = 1.0 / (1.0 + (excess / scale) ** 2)
        factor *= max(0.25, closeness) ** 0.8
        if closeness < 0.7:
            severity = "high" if closeness < 0.35 else "medium"
            record_issue(
                issues, dimension, "toneAlignment", rule, text, span or (0, min(len(text), 80)), severity, advice
            )
    if targets.speaks_as_itself and register.third_person and signals.first_plural_rate == 0:
        factor *= THIRD_PERSON_FACTOR
        span = register.third_person_span or (0, min(len(text), 80))
        record_issue(
            issues,
            dimension,
            "toneAlignment",
            "tone: the brand speaks of itself in the third person",
            text,
            span,
            "medium",
            'speak as "we" to the reader, as the brand does',
        )
    return factor


def _coverage(stems: list[str], vocabulary: dict[str, float] | frozenset[str]) -> float:
    if not stems:
        return 0.0
    if isinstance(vocabulary, dict):
        return sum(vocabulary.get(item, 0.0) for item in stems) / len(stems)
    return sum(1 for item in stems if item in vocabulary) / len(stems)


def messaging(brand: BrandModel, stems: list[str]) -> Dimension:
    dimension = Dimension(0.0, 0.0)
    if len(brand.messaging) < 5:
        dimension.score = NEUTRAL
        dimension.suggestions.append("add value propositions and content pillars to the profile to judge messaging")
        return dimension
    coverage = _coverage(stems, brand.messaging)
    present = set(stems)
    touched = [name for name, pillar in brand.pillars if present & pillar]
    dimension.score = 100.0 * (1.0 - math.exp(-coverage / 0.09)) + (8.0 if touched else 0.0)
    if not touched and brand.pillars:
        dimension.issues.append("touches none of the content pillars")
        dimension.suggestions.append("tie the copy to a pillar: " + ", ".join(name for name, _ in brand.pillars[:4]))
    elif coverage < 0.08:
        dimension.issues.append("little of the copy relates to the brand's messaging")
        dimension.suggestions.append("bring in a value proposition or proof point")
    return dimension


FOREIGN_AUDIENCE_FACTOR = 0.7


def audience(brand: BrandModel, stems: list[str], signals: VoiceSignals, text: str) -> Dimension:
    dimension = Dimension(0.0, 0.0)
    address = min(1.0, (signals.second_person_rate + 0.5 * signals.first_plural_rate) / 3.0)
    if len(brand.audience) < 3:
        topical = 1.0
        dimension.score = 0.7 * NEUTRAL + 30.0 * address
        dimension.suggestions.append("describe the audience (interests, pain points) to judge relevance")
    else:
        # a single shared word is chance; relevance grows with the share of the copy about the audience
        topical = 1.0 - math.exp(-max(0.0, _coverage(stems, brand.audience) - 0.02) / 0.06)
        dimension.score = 100.0 * (0.75 * topical + 0.25 * address)
    strangers = foreign_audience(text, brand.known_words)
    if strangers:
        # copy aimed at a group the brand never names is for someone else, however on-topic its words
        dimension.score *= FOREIGN_AUDIENCE_FACTOR ** min(len(strangers), 3)
        named = ", ".join(dict.fromkeys(text[start:end].lower() for start, end in strangers))
        dimension.issues.append(f"speaks to an audience the brand does not describe: {named}")
        dimension.suggestions.append("write for the brand's own audience")
    if topical < 0.3:
        dimension.issues.append("does not speak to the audience's interests or pain points")
        dimension.suggestions.append("name a pain point or aspiration of the audience")
    return dimension


def claim_support(claims: list[Claim], issues: list[Issue]) -> Dimension:
    supported = sum(1 for claim in claims if claim.supported)
    dimension = Dimension(100.0 if supported else NO_CLAIMS, 0.0)
    penalty = {"high": 50.0, "medium": 25.0, "low": 12.0}
    for claim in claims:
        if claim.supported:
            continue
        cost = penalty[claim.severity] * (0.5 if claim.evidence else 1.0)
        dimension.score -= cost
        advice = (
            "verify the proof point before using this claim"
            if claim.evidence
            else "remove the claim or add the proof point that backs it"
        )
        issues.append(
            Issue(
                "claimSupport",
                f"unsupported {claim.kind} claim",
                claim.start,
                claim.end,
                claim.text,
                claim.severity,
                advice,
            )
        )
        dimension.issues.append(f'unsupported {claim.kind} claim: "{claim.text[:80]}"')
        if advice not in dimension.suggestions:
            dimension.suggestions.append(advice)
    return dimension


# A term the brand's own "don't" names is its word, so one alone takes the dimension under the pass mark. A
# rule read as a kind of word ("no slang", "no fear") is matched by a word list that cannot see the sense
# ("the water was cool", "a scary-sounding switch that is mostly paperwork"): one such rule broken lowers
# the dimension, two take it under.
AVOID_PENALTY = 45.0
CATEGORY_PENALTY = 25.0


def avoid(brand: BrandModel, text: str, issues: list[Issue]) -> Dimension:
    dimension = Dimension(100.0, 0.0)
    if not brand.avoid:
        dimension.score = 90.0
        return dimension
    found: list[tuple[AvoidRule, tuple[int, int]]] = []
    for rule in brand.avoid:
        span: tuple[int, int] | None = None
        if rule.pattern is not None:
            spans = find_term(rule.pattern, text, rule.label)
            span = spans[0] if spans else None
        elif rule.category == "hype":
            span = _first_word(text, HYPE | MARKETING_HYPE) or _first(OVERCLAIM, text)
        elif rule.category == "jargon":
            for match in WORD.finditer(text):
                word = match.group(0)
                if stem(word) in JARGON or word.lower() in JARGON_WORDS:
                    span = (match.start(), match.end())
                    break
        elif rule.category == "exclamation":
            index = text.find("!")
            span = (index, index + 1) if index >= 0 else None
        elif rule.category == "emoji":
            span = _first(EMOJI, text)
        elif rule.category == "slang":
            span = _first_word(text, CASUAL)
        elif rule.category == "urgency":
            span = _tone_span("urgency_rate", text)
        elif rule.category == "fear":
            span = _first(FEAR, text)
        elif rule.category == "shaming":
            span = _first(SHAMING, text)
        elif rule.category == "health":
            span = _first(HEALTH_CLAIMS, text)
        elif rule.category == "caps":
            span = _first(ALL_CAPS, text)
        # "we do not hurry seasoning" keeps a rule against hurrying the reader
        if span is not None and not NEGATED.search(text[: span[0]]):
            found.append((rule, span))
    for rule, span in found[:3]:
        dimension.score -= AVOID_PENALTY if rule.category is None else CATEGORY_PENALTY
        record_issue(
            issues,
            dimension,
            "avoidCompliance",
            f"avoid pattern: {rule.label}",
            text,
            span,
            "medium",
            f"rewrite without {rule.label}",
        )
    return dimension


def vocabulary(
    brand: BrandModel, text: str, issues: list[Issue], banned_found: list[str], preferred_used: list[str]
) -> Dimension:
    dimension = Dimension(0.0, 0.0)
    for term, pattern in brand.banned:
        spans = find_term(pattern, text, term)
        if spans:
            banned_found.append(term)
            record_issue(
                issues,
                dimension,
                "vocabularyAdherence",
                f"banned term: {term}",
                text,
                spans[0],
                "high",
                f'remove "{term}"',
            )
    for term, pattern in brand.preferred:
        if find_term(pattern, text, term):
            preferred_used.append(term)
    if brand.preferred:
        base = 50.0 + 50.0 * min(1.0, len(preferred_used) / min(2, len(brand.preferred)))
        if not preferred_used:
            dimension.suggestions.append(
                "use the brand's preferred terms: " + ", ".join(term for term, _ in brand.preferred[:5])
            )
    else:
        base = 85.0
    dimension.score = base - 50.0 * len(banned_found)
    return dimension


def structure(text: str, signals: VoiceSignals, issues: list[Issue]) -> Dimension:
    dimension = Dimension(100.0, 0.0)
    for match in list(REPEATED_PUNCTUATION.finditer(text))[:3]:
        dimension.score -= 15.0
        record_issue(
            issues,
            dimension,
            "structuralPatterns",
            "repeated punctuation",
            text,
            (match.start(), match.end()),
            "low",
            "end sentences with a single mark",
        )
    for match in list(ALL_CAPS.finditer(text))[1:4]:
        dimension.score -= 10.0
        record_issue(
            issues,
            dimension,
            "structuralPatterns",
            "words in capitals",
            text,
            (match.start(), match.end()),
            "low",
            "write words in normal case",
        )
    for match in list(EMOJI_RUN.finditer(text))[:2]:
        dimension.score -= 10.0
        record_issue(
            issues,
            dimension,
            "structuralPatterns",
            "emoji run",
            text,
            (match.start(), match.end()),
            "low",
            "use one emoji at most in a row",
        )
    for start, end in sentences(text):
        if len(WORD.findall(text[start:end])) > 45:
            dimension.score -= 10.0
            record_issue(
                issues,
                dimension,
                "structuralPatterns",
                "sentence over 45 words",
                text,
                (start, end),
                "low",
                "split long sentences",
            )
    hashtags = HASHTAG.findall(text)
    if len(hashtags) > 5:
        dimension.score -= 10.0
        dimension.issues.append(f"{len(hashtags)} hashtags")
        dimension.suggestions.append("keep hashtags to the platform's guidance")
    if signals.word_count < 3:
        dimension.score -= 20.0
        dimension.issues.append("too short to read as copy")
    return dimension


def mentions(brand: BrandModel, text: str, signals: VoiceSignals, issues: list[Issue]) -> Dimension:
    dimension = Dimension(0.0, 0.0)
    if not brand.name:
        dimension.score = NEUTRAL
        return dimension
    for pattern in brand.name_patterns:
        match = pattern.search(text)
        if match:
            if match.group(0) != brand.name and match.group(0) != brand.name.split()[0]:
                dimension.score = 85.0
                record_issue(
                    issues,
                    dimension,
                    "brandMentions",
                    "brand name written differently",
                    text,
                    (match.start(), match.end()),
                    "low",
                    f'write the name as "{brand.name}"',
                )
            else:
                dimension.score = 100.0
            return dimension
    dimension.score = 60.0 if signals.first_plural_rate > 0 else 40.0
    dimension.suggestions.append(f'name the brand ({brand.name}) or speak as "we"')
    return dimension
