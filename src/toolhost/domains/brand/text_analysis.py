"""The voice signals that brand extraction and consistency share, and finding a brand's terms in a text; the
words, stems, sentences and syllables they count come from providers.text.analysis."""

from __future__ import annotations

import re
from dataclasses import dataclass

from toolhost.providers.text.analysis import TOKEN, WORD, reading_grade, sentences, stem, syllables, words

EMOJI = re.compile(
    "[\U0001f300-\U0001faff\U0001f000-\U0001f2ff\u2600-\u27bf\u2b50\u2b55\u2b1b\u2b1c\u2934\u2935\u3030\u303d]"
)
CONTRACTION = re.compile(r"\b\w+(?:'|\u2019)(?:s|re|ve|ll|d|m|t)\b", re.IGNORECASE)
ALL_CAPS = re.compile(r"\b[A-Z]{4,}\b")
HASHTAG = re.compile(r"(?<!\w)#\w+")

SECOND_PERSON = frozenset({"you", "your", "yours", "yourself", "yourselves", "you're", "you've", "you'll", "you'd"})
FIRST_PLURAL = frozenset({"we", "our", "ours", "us", "ourselves", "we're", "we've", "we'll", "we'd"})
FIRST_SINGULAR = frozenset({"i", "me", "my", "mine", "myself", "i'm", "i've", "i'll", "i'd"})
HYPE = frozenset(
    """
        amazing incredible insane unbelievable revolutionary revolutionize game-changing game-changer mind-
        blowing epic ultimate crazy awesome unreal legendary explosive skyrocket skyrocketing massive huge
        jaw-dropping stunning life-changing magic magical miracle unstoppable killer crushing dominate
        disrupt disruptive ridiculous
        """.split()  # noqa: SIM905 - a word list reads better as words
)
URGENCY = (
    "act now",
    "hurry",
    "limited time",
    "don't miss",
    "last chance",
    "today only",
    "ends soon",
    "before it's gone",
    "while stocks last",
    "only a few left",
    "buy now",
    "order now",
    "sign up now",
    "click here",
    "what are you waiting for",
)
# Overclaiming reads as hype whatever the words: rankings, guarantees, "in the world", "ever".
OVERCLAIM = re.compile(
    r"#\s?1\b|\bnumber[ -]one\b|\bguarantee[sd]?\b|\bclinically proven\b|\bin the world\b"
    r"|\b(?:best|fastest|warmest|healthiest|cheapest|biggest)\b(?:\s+\w+){0,3}\s+"
    r"(?:on the market|in (?:america|the country)|ever)\b",
    re.IGNORECASE,
)
CASUAL = frozenset(
    """
        lol omg gonna wanna gotta kinda sorta yeah yep nope hey guys dude folks ya y'all super totally
        literally vibe vibes vibing cool stuff awesome btw tbh imo legit lit fam bestie obsessed ok okay wow
        yay haha
        """.split()  # noqa: SIM905 - a word list reads better as words
)

NEGATIVE = frozenset(
    """
        die dies died dying death deadly kill kills killing poison poisoning toxic toxins tragic tragedy
        danger dangerous scary terrifying terrified regret disaster nightmare horrible terrible awful worst
        stupid lazy ashamed shame gambling panic doomed ruin ruined sluggish pathetic failure hate
        """.split()  # noqa: SIM905 - a word list reads better as words
)


@dataclass(frozen=True, slots=True)
class VoiceSignals:
    """Lexical measures of a text's voice; rates are per 100 words unless they say per sentence."""

    word_count: int
    sentence_count: int
    average_sentence_length: float
    sentence_length_spread: float
    average_word_length: float
    long_word_share: float
    reading_grade: float
    contraction_rate: float
    exclamation_per_sentence: float
    question_per_sentence: float
    emoji_rate: float
    second_person_rate: float
    first_plural_rate: float
    first_singular_rate: float
    hype_rate: float
    urgency_rate: float
    casual_rate: float
    caps_rate: float
    negativity_rate: float
    formality: float

    @property
    def perspective(self) -> str:
        """The person the text mostly speaks in."""
        rates = {
            "first-person plural (we)": self.first_plural_rate,
            "second person (you)": self.second_person_rate,
            "first-person singular (I)": self.first_singular_rate,
        }
        best = max(rates, key=lambda name: rates[name])
        return best if rates[best] >= 0.5 else "third person"

    def as_dict(self) -> dict[str, float | int | str]:
        """Rounded values for storing in a profile."""
        values: dict[str, float | int | str] = {
            name: round(getattr(self, name), 3) for name in self.__dataclass_fields__
        }
        values["perspective"] = self.perspective
        return values


def measure_voice(text: str) -> VoiceSignals:
    """Measures sentence length, person, contractions, exclamations, emoji, hype, urgency and formality."""
    tokens = words(text)
    count = max(len(tokens), 1)
    spans = sentences(text)
    lengths = [len(WORD.findall(text[start:end])) for start, end in spans] or [len(tokens)]
    sentence_count = max(len(spans), 1)
    average_length = sum(lengths) / len(lengths)
    spread = (sum((length - average_length) ** 2 for length in lengths) / len(lengths)) ** 0.5
    letters = sum(len(token) for token in tokens)
    long_words = sum(1 for token in tokens if len(token) >= 7)
    syllable_total = sum(syllables(token) for token in tokens)
    grade = reading_grade(word_count=len(tokens), sentence_count=sentence_count, syllable_count=syllable_total)
    lowered = text.lower()
    exclamations = sum(1 for start, end in spans if "!" in text[start:end])
    questions = sum(1 for start, end in spans if "?" in text[start:end])
    per_hundred = 100.0 / count
    contraction_rate = len(CONTRACTION.findall(text)) * per_hundred
    emoji_rate = len(EMOJI.findall(text)) * per_hundred
    hype_rate = (sum(1 for token in tokens if token in HYPE) + len(OVERCLAIM.findall(text))) * per_hundred
    urgency_rate = sum(lowered.count(phrase) for phrase in URGENCY) * per_hundred
    casual_rate = sum(1 for token in tokens if token in CASUAL) * per_hundred
    caps_rate = len(ALL_CAPS.findall(text)) * per_hundred
    average_word_length = letters / count
    exclamation_share = exclamations / sentence_count
    # Formality on 0-1: long words and long sentences raise it; contractions, slang, exclamations,
    # emoji and shouting lower it (a lexical stand-in for Heylighen's F-score, which needs POS tags).
    formality = (
        0.5
        + 0.12 * (average_word_length - 4.6)
        + 0.6 * (long_words / count - 0.2)
        + 0.008 * (average_length - 15)
        - 0.05 * contraction_rate
        - 0.08 * casual_rate
        - 0.35 * exclamation_share
        - 0.04 * emoji_rate
        - 0.05 * caps_rate
    )
    return VoiceSignals(
        word_count=len(tokens),
        sentence_count=len(spans),
        average_sentence_length=average_length,
        sentence_length_spread=spread,
        average_word_length=average_word_length,
        long_word_share=long_words / count,
        reading_grade=grade,
        contraction_rate=contraction_rate,
        exclamation_per_sentence=exclamation_share,
        question_per_sentence=questions / sentence_count,
        emoji_rate=emoji_rate,
        second_person_rate=sum(1 for token in tokens if token in SECOND_PERSON) * per_hundred,
        first_plural_rate=sum(1 for token in tokens if token in FIRST_PLURAL) * per_hundred,
        first_singular_rate=sum(1 for token in tokens if token in FIRST_SINGULAR) * per_hundred,
        hype_rate=hype_rate,
        urgency_rate=urgency_rate,
        casual_rate=casual_rate,
        caps_rate=caps_rate,
        negativity_rate=sum(1 for token in tokens if token in NEGATIVE) * per_hundred,
        formality=min(1.0, max(0.0, formality)),
    )


def term_pattern(term: str) -> re.Pattern[str] | None:
    """A whole-word, case- and punctuation-insensitive pattern for a term, inflections included."""
    parts = [token.lower() for token in TOKEN.findall(term)]
    if not parts:
        return None
    pieces = []
    for part in parts:
        root = stem(part) if part.isalpha() else part
        if part.isalpha() and len(root) > 3:
            prefix = root[:-1] if root.endswith("y") else root  # synergy -> synergies
            pieces.append(re.escape(prefix) + r"[a-z'\u2019]{0,7}")
        else:
            pieces.append(re.escape(part).replace("'", "['\u2019]"))
    return re.compile(r"(?<!\w)" + r"[\s\-_./]*".join(pieces) + r"(?!\w)", re.IGNORECASE)


def find_term(pattern: re.Pattern[str], text: str, term: str) -> list[tuple[int, int]]:
    """Spans where a term occurs; a match must stem to the term's own stems ("use" never matches "user")."""
    target = [stem(part) for part in TOKEN.findall(term)]
    return [
        (match.start(), match.end())
        for match in pattern.finditer(text)
        if [stem(part) for part in TOKEN.findall(match.group(0))] == target
    ]
