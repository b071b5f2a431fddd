"""The brand side of the consistency scorer: term patterns, avoid rules and topic stems, compiled once."""

from __future__ import annotations

import json
import re
from dataclasses import dataclass
from functools import lru_cache
from typing import Any

from toolhost.domains.brand.claims import Evidence, build_evidence
from toolhost.domains.brand.register import TONE_FAMILIES, manner_of, measure_register, tone_leaning
from toolhost.domains.brand.text_analysis import term_pattern
from toolhost.domains.brand.voice_model import VoiceTargets, build_targets
from toolhost.providers.text.analysis import NUMBER, WORD, content_stems, stem, stem_set

JARGON = frozenset(
    stem(word)
    for word in """
        leverage synergy synergistic paradigm operationalize stakeholder stakeholders deliverables value-add
        best-in-class end-to-end scalable omnichannel go-to-market orchestration empower cloud-
        native ecosystem holistic robust seamless cutting-edge next-level bleeding-edge disrupt disruptive
        ideate actionable bandwidth circle-back low-hanging mission-critical move-the-needle
        thought-leadership alignment frictionless turnkey world-class
        """.split()  # noqa: SIM905 - a word list reads better as words
)
# Jargon whose stem is everyday English ("learnings" -> "learn", "verticals" -> "vertical"): matched as
# the word itself.
JARGON_WORDS = frozenset({"learnings", "verticals"})
FEAR = re.compile(
    r"\b(?:die|dies|dying|death|deadly|poison\w*|toxic|toxins?|tragic|tragedy|danger\w*|terrif\w*|scary|"
    r"before it'?s too late|gambling with your life|regret it|you'?ll regret)\b",
    re.IGNORECASE,
)
SHAMING = re.compile(
    r"\b(?:no wonder|seriously\?|real adults|stop making excuses|lazy|excuses|ashamed"
    r"|get your \w+ under control|disgusting|gross)\b",
    re.IGNORECASE,
)
HEALTH_CLAIMS = re.compile(
    r"\b(?:cures?|detox\w*|cleanse|toxins?|clinically proven|burn fat|lose \d+ (?:pounds|kilos|lbs)|"
    r"flush out|boost your immun\w*)\b",
    re.IGNORECASE,
)
MARKETING_HYPE = frozenset({"superfood", "superfoods", "miracle", "secret", "hack", "hacks", "best-ever"})

# Avoid-pattern words -> the detector that finds that kind of copy.
AVOID_CATEGORIES: tuple[tuple[re.Pattern[str], str], ...] = (
    (re.compile(r"hype|exaggerat|superlative|overpromis|overclaim|buzz", re.I), "hype"),
    (re.compile(r"jargon|buzzword|corporate|business.?speak", re.I), "jargon"),
    (re.compile(r"exclamation", re.I), "exclamation"),
    (re.compile(r"emoji", re.I), "emoji"),
    (re.compile(r"slang|casual|informal", re.I), "slang"),
    (re.compile(r"urgen|pushy|salesy|pressure|fomo|hard.?sell|scarcity", re.I), "urgency"),
    (re.compile(r"fear|scare|alarm|doom", re.I), "fear"),
    (re.compile(r"sham|judg|guilt", re.I), "shaming"),
    (re.compile(r"health.?claim|medical claim", re.I), "health"),
    (re.compile(r"caps|shout", re.I), "caps"),
)
QUOTED = re.compile(r"[\"\u201c\u2018']([^\"\u201d\u2019']{2,40})[\"\u201d\u2019']")


@dataclass(frozen=True, slots=True)
class AvoidRule:
    """One avoid pattern, as a detector category or a literal term."""

    label: str
    category: str | None
    pattern: re.Pattern[str] | None


@dataclass(frozen=True, slots=True)
class RegisterTargets:
    """How institutional and how jokey the brand's copy may read (per 100 words), and whether it says "we"."""

    corporate_ceiling: float
    jokey_ceiling: float
    speaks_as_itself: bool


def _register_targets(voice: dict[str, Any], examples: list[str], names: tuple[str, ...]) -> RegisterTargets:
    """Ceilings from the tone words, raised to what the brand's own example posts do."""
    descriptors = _strings(voice.get("tone")) + _strings(voice.get("style"))
    sober, warm, playful = tone_leaning(descriptors)
    corporate = 16.0 if sober and not warm else 8.0 if warm and not sober else 12.0
    jokey = 8.0 if playful else 3.0 if warm else 0.0 if sober else 2.0
    third_person_examples = False
    for example in examples:
        measured = measure_register(example, names)
        corporate = max(corporate, measured.corporate_rate + 4.0)
        jokey = max(jokey, measured.jokey_rate + 1.0)
        third_person_examples = third_person_examples or measured.third_person > 0
    perspective = str((voice.get("writingStyleRules") or {}).get("perspective") or "").lower()
    return RegisterTargets(corporate, jokey, not third_person_examples and "third" not in perspective)


@dataclass(frozen=True, slots=True)
class BrandModel:
    """The brand side of the scorer, compiled once per runtime."""

    name: str
    self_names: tuple[str, ...]
    name_patterns: tuple[re.Pattern[str], ...]
    targets: VoiceTargets
    preferred: tuple[tuple[str, re.Pattern[str]], ...]
    banned: tuple[tuple[str, re.Pattern[str]], ...]
    avoid: tuple[AvoidRule, ...]
    messaging: dict[str, float]
    pillars: tuple[tuple[str, frozenset[str]], ...]
    audience: frozenset[str]
    evidence: tuple[Evidence, ...]
    register: RegisterTargets
    known_words: frozenset[str]
    # Every content stem the profile itself uses (the words it licenses), and those only its avoid rules and
    # banned terms use: what voice_fit reads a text's manner against.
    profile_stems: frozenset[str]
    avoid_stems: frozenset[str]
    tone_stems: frozenset[str]  # the stems of the voice's tone words ("warm", "playful", "formal")
    has_voice: bool  # tone words, style or avoid rules, or example posts: something to judge a manner against
    tone_families: tuple[str, ...]  # which of "sober", "warm", "playful" the tone words ask for
    example_manner: dict[str, float]  # how the brand's example posts speak, on average (empty without any)
    backed_figures: frozenset[str]  # every figure its proof points and value propositions state


def _strings(value: Any) -> list[str]:
    if isinstance(value, str):
        return [value] if value.strip() else []
    if isinstance(value, list):
        result = []
        for item in value:
            if isinstance(item, str) and item.strip():
                result.append(item)
            elif isinstance(item, dict):
                text = item.get("name") or item.get("claim") or item.get("text")
                if isinstance(text, str) and text.strip():
                    result.append(text)
        return result
    return []


def _pillar_name(text: str) -> str:
    return re.sub(r"\s*\(\d{1,3}\s*%\)\s*$", "", text).strip()


def _term_patterns(terms: list[str]) -> tuple[tuple[str, re.Pattern[str]], ...]:
    compiled = []
    for term in dict.fromkeys(term.strip() for term in terms if term.strip()):
        pattern = term_pattern(term)
        if pattern is not None:
            compiled.append((term, pattern))
    return tuple(compiled)


def _avoid_rules(patterns: list[str]) -> tuple[AvoidRule, ...]:
    rules = []
    for entry in patterns:
        quoted = QUOTED.findall(entry)
        for literal in quoted:
            rules.append(AvoidRule(literal, None, term_pattern(literal)))
        categories = [category for pattern, category in AVOID_CATEGORIES if pattern.search(entry)]
        for category in categories:
            rules.append(AvoidRule(entry, category, None))
        if not quoted and not categories and len(entry.split()) <= 4 and "(" not in entry:
            rules.append(AvoidRule(entry, None, term_pattern(entry)))
    return tuple(rules)


def compile_brand(runtime: dict[str, Any]) -> BrandModel:
    """The brand model of a runtime, from the cache when the same runtime was compiled before."""
    return _compile_cached(json.dumps(runtime, sort_keys=True, default=str))


@lru_cache(maxsize=256)
def _compile_cached(serialized: str) -> BrandModel:
    runtime: dict[str, Any] = json.loads(serialized)
    messaging = runtime.get("messaging") or {}
    voice = runtime.get("voice") or {}
    audience = runtime.get("audience") or {}
    name = str(runtime.get("name") or "").strip()
    name_variants = [name] if name else []
    first_word = name.split()[0] if name else ""
    if len(name.split()) > 1 and len(first_word) >= 4:
        name_variants.append(first_word)  # "Meridian" for "Meridian Private Wealth"
    weights: dict[str, float] = {}

    def add(texts: list[str], weight: float) -> None:
        for text in texts:
            for item in set(content_stems(text)):
                weights[item] = max(weights.get(item, 0.0), weight)

    pillars = [_pillar_name(item) for item in _strings(messaging.get("contentPillars"))]
    add(_strings(messaging.get("valuePropositions")), 1.0)
    add(_strings(messaging.get("messagingPillars")), 1.0)
    add(pillars, 1.0)
    add(_strings(messaging.get("proofPoints")), 0.8)
    add(_strings(voice.get("preferredTerms")), 1.0)
    add(_strings(voice.get("languagePatterns")), 0.6)
    descriptive = [str(runtime.get(key) or "") for key in ("industry", "positioning", "tagline", "description")]
    add(descriptive, 0.7)
    social = messaging.get("socialProof") or {}
    add(_strings(social.get("testimonials")), 0.4)
    examples = _strings(voice.get("examples"))  # the brand's own posts: on topic by definition
    add(examples, 0.6)
    for variant in name_variants:
        for item in content_stems(variant):
            weights.pop(item, None)  # mentioning the name is brandMentions' business, not topic
    audience_texts = (
        _strings(audience.get("interests"))
        + _strings(audience.get("painPoints"))
        + _strings(audience.get("aspirations"))
        + _strings(audience.get("primary"))
    )
    proof_points = [item for item in messaging.get("proofPoints") or [] if isinstance(item, dict | str)]
    propositions = _strings(messaging.get("valuePropositions"))
    tone = _strings(voice.get("tone"))
    avoid_patterns = _strings(voice.get("avoidPatterns"))
    profile_stems = stem_set(
        [
            name,
            *descriptive,
            *pillars,
            *propositions,
            *_strings(messaging.get("messagingPillars")),
            *_strings(messaging.get("proofPoints")),
            *tone,
            *_strings(voice.get("style")),
            *_strings(voice.get("preferredTerms")),
            *_strings(voice.get("languagePatterns")),
            *examples,
            *audience_texts,
        ]
    )
    avoid_stems = stem_set(avoid_patterns + _strings(voice.get("bannedTerms"))) - profile_stems
    evidence = tuple(build_evidence(proof_points, propositions))
    return BrandModel(
        name=name,
        self_names=tuple(name_variants),
        name_patterns=tuple(
            re.compile(r"(?<!\w)" + re.escape(variant) + r"(?!\w)", re.IGNORECASE) for variant in name_variants
        ),
        targets=build_targets(voice),
        preferred=_term_patterns(_strings(voice.get("preferredTerms"))),
        banned=_term_patterns(_strings(voice.get("bannedTerms"))),
        avoid=_avoid_rules(avoid_patterns),
        messaging=dict(weights),
        pillars=tuple((pillar, frozenset(content_stems(pillar))) for pillar in pillars if content_stems(pillar)),
        audience=frozenset(item for text in audience_texts for item in content_stems(text)),
        evidence=evidence,
        register=_register_targets(voice, examples, tuple(name_variants)),
        known_words=frozenset(
            stem(word.lower())
            for text in [*audience_texts, *descriptive, *examples, *pillars, *propositions]
            for word in WORD.findall(text)
        ),
        profile_stems=frozenset(profile_stems),
        avoid_stems=frozenset(avoid_stems),
        tone_stems=frozenset(stem_set(tone)),
        has_voice=bool(tone or _strings(voice.get("style")) or avoid_patterns or examples),
        tone_families=tuple(name for name, asked in zip(TONE_FAMILIES, tone_leaning(tone), strict=True) if asked),
        example_manner=_example_manner(examples),
        backed_figures=frozenset(match.group(0) for item in evidence for match in NUMBER.finditer(item.text)),
    )


def _example_manner(examples: list[str]) -> dict[str, float]:
    measured = [manner_of(text, [match.group(0).lower() for match in WORD.finditer(text)]) for text in examples]
    return {name: sum(item[name] for item in measured) / len(measured) for name in measured[0]} if measured else {}
