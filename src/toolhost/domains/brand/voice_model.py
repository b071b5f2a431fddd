"""What a brand voice expects of a text: measurable targets from tone words, writing rules and samples."""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Any

from toolhost.domains.brand.text_analysis import VoiceSignals, measure_voice
from toolhost.providers.text.analysis import stem, words

# Feature -> (default low, default high, tolerance scale, weight). Rates are per 100 words, except
# exclamation (share of sentences) and formality (0-1). The defaults fit most brands' copy.
FEATURES: dict[str, tuple[float, float, float, float]] = {
    "formality": (0.25, 0.85, 0.15, 2.0),
    "exclamation_per_sentence": (0.0, 0.34, 0.15, 1.5),
    "emoji_rate": (0.0, 3.0, 1.5, 1.5),
    "hype_rate": (0.0, 1.0, 0.8, 1.5),
    "urgency_rate": (0.0, 0.5, 0.5, 1.5),
    "casual_rate": (0.0, 1.5, 1.0, 1.5),
    "caps_rate": (0.0, 0.5, 0.6, 1.0),
    "negativity_rate": (0.0, 2.5, 1.0, 1.5),
    "contraction_rate": (0.0, 10.0, 2.0, 1.0),
    "average_sentence_length": (7.0, 26.0, 6.0, 1.0),
}
Range = tuple[float, float]

# Tone and style words, grouped by what they ask of the copy. A word's group sets ranges that are
# intersected with those of the brand's other words.
TONE_GROUPS: tuple[tuple[frozenset[str], dict[str, Range]], ...] = (
    (
        frozenset(
            """
        professional formal authoritative expert refined sophisticated elegant luxurious luxury premium
        measured credible trustworthy corporate precise technical serious polished institutional dignified
        understated
        """.split()  # noqa: SIM905 - a word list reads better as words
        ),
        {
            "formality": (0.5, 1.0),
            "exclamation_per_sentence": (0.0, 0.1),
            "emoji_rate": (0.0, 0.3),
            "casual_rate": (0.0, 0.3),
            "hype_rate": (0.0, 0.5),
            "caps_rate": (0.0, 0.3),
        },
    ),
    (
        frozenset(
            """
        calm reassuring empathetic gentle thoughtful supportive patient honest transparent caring
        compassionate grounded steady
        """.split()  # noqa: SIM905 - a word list reads better as words
        ),
        {
            "exclamation_per_sentence": (0.0, 0.15),
            "hype_rate": (0.0, 0.3),
            "urgency_rate": (0.0, 0.2),
            "caps_rate": (0.0, 0.3),
            "negativity_rate": (0.0, 0.8),
        },
    ),
    (
        frozenset(
            """
        friendly warm approachable conversational casual relaxed welcoming encouraging helpful human down-
        to-earth practical inclusive optimistic positive
        """.split()  # noqa: SIM905 - a word list reads better as words
        ),
        {"formality": (0.1, 0.7), "casual_rate": (0.0, 3.0), "negativity_rate": (0.0, 0.8)},
    ),
    (
        frozenset(
            """
        playful fun witty humorous quirky cheeky energetic enthusiastic bold adventurous upbeat lively
        exciting irreverent youthful spirited
        """.split()  # noqa: SIM905 - a word list reads better as words
        ),
        {
            "formality": (0.0, 0.6),
            "exclamation_per_sentence": (0.0, 0.6),
            "emoji_rate": (0.0, 6.0),
            "casual_rate": (0.0, 5.0),
            "hype_rate": (0.0, 1.5),
            "negativity_rate": (0.0, 0.8),
        },
    ),
    (
        frozenset(
            """
        concise direct minimal simple plain plain-language no-nonsense clear short punchy crisp
        """.split()  # noqa: SIM905 - a word list reads better as words
        ),
        {"average_sentence_length": (5.0, 18.0)},
    ),
    (
        frozenset(["formal", "measured", "academic", "detailed", "thorough", "considered", "literary"]),
        {"average_sentence_length": (12.0, 34.0)},
    ),
)
TONE_INDEX = {stem(word): group for group, _ in TONE_GROUPS for word in group}
GROUP_RANGES = {group: ranges for group, ranges in TONE_GROUPS}

EMOJI_POLICIES: tuple[tuple[re.Pattern[str], Range], ...] = (
    (re.compile(r"\b(?:none|never|no|avoid|forbidden|not allowed|don't|do not)\b", re.I), (0.0, 0.0)),
    (re.compile(r"\b(?:sparing\w*|minimal|occasional\w*|rare\w*|light\w*|one|few)\b", re.I), (0.0, 3.0)),
    (re.compile(r"\b(?:encouraged|frequent\w*|lots|yes|welcome|liberal\w*|always)\b", re.I), (0.0, 8.0)),
)


@dataclass(frozen=True, slots=True)
class VoiceTargets:
    """Per feature: the range the brand's copy stays in, its tolerance and weight; plus person."""

    ranges: dict[str, tuple[float, float, float, float]]
    perspective: str
    described: bool

    def closeness(self, feature: str, value: float) -> float:
        """1.0 inside the range, falling towards 0 as the value leaves it by whole tolerances."""
        low, high, scale, _ = self.ranges[feature]
        distance = max(0.0, low - value, value - high) / scale
        return 1.0 / (1.0 + distance * distance)


def _intersect(current: Range, new: Range) -> Range:
    low, high = max(current[0], new[0]), min(current[1], new[1])
    if low <= high:
        return low, high
    return (current[0] + new[0]) / 2, (current[1] + new[1]) / 2


# How far beyond the span of its example posts a brand's copy may go before it reads as another voice.
EXAMPLE_SPREADS = {"average_sentence_length": 5.0, "contraction_rate": 2.5, "formality": 0.1}


def _example_perspective(measured: list[VoiceSignals]) -> str:
    """The person every example post speaks in ("(we)", "(you)"), when they agree; "" otherwise."""
    markers = []
    for marker, feature in (("we", "first_plural_rate"), ("you", "second_person_rate")):
        if measured and all(getattr(signals, feature) > 0 for signals in measured):
            markers.append(f"({marker})")
    return " ".join(markers)


def build_targets(voice: dict[str, Any]) -> VoiceTargets:
    """Targets from the runtime's voice layer: tone and style words, writing rules, measured samples."""
    ranges = {name: (low, high) for name, (low, high, _, _) in FEATURES.items()}
    described = False
    descriptors = [item for key in ("tone", "style") for item in voice.get(key) or [] if isinstance(item, str)]
    seen_groups: set[frozenset[str]] = set()
    for descriptor in descriptors:
        for word in words(descriptor) + [descriptor.lower().strip()]:
            group = TONE_INDEX.get(stem(word))
            if group is None or group in seen_groups:
                continue
            seen_groups.add(group)
            described = True
            for feature, wanted in GROUP_RANGES[group].items():
                ranges[feature] = _intersect(ranges[feature], wanted)
    rules = voice.get("writingStyleRules") or {}
    if rules.get("useContractions") is False:
        ranges["contraction_rate"] = (0.0, 0.3)
        described = True
    policy = rules.get("emojiPolicy")
    if isinstance(policy, str) and policy.strip():
        for pattern, wanted in EMOJI_POLICIES:
            if pattern.search(policy):
                ranges["emoji_rate"] = wanted
                described = True
                break
    measured = voice.get("measured") or {}
    for feature, spread in (
        ("average_sentence_length", 6.0),
        ("exclamation_per_sentence", 0.15),
        ("emoji_rate", 1.5),
        ("contraction_rate", 2.0),
        ("formality", 0.15),
    ):
        value = measured.get(feature)
        if isinstance(value, int | float):
            ranges[feature] = _intersect(ranges[feature], (max(0.0, value - spread), value + spread))
    examples = [item for item in voice.get("examples") or [] if isinstance(item, str) and item.strip()]
    measured_examples = [measure_voice(example) for example in examples]
    if measured_examples and not measured:
        # the brand's own posts set the register: the span they cover, widened by the usual spread
        for feature, spread in EXAMPLE_SPREADS.items():
            values = [float(getattr(signals, feature)) for signals in measured_examples]
            ranges[feature] = _intersect(ranges[feature], (max(0.0, min(values) - spread), max(values) + spread))
        described = True
    perspective = str(rules.get("perspective") or "").lower() or _example_perspective(measured_examples)
    return VoiceTargets(
        ranges={name: (*ranges[name], FEATURES[name][2], FEATURES[name][3]) for name in FEATURES},
        perspective=perspective,
        described=described,
    )
