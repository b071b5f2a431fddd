"""Quiet off-brand signals: register (corporate or jokey), how the brand speaks of itself, and who is addressed.

Loud off-brand copy shouts (banned terms, hype, exclamation marks). Quiet off-brand copy is grammatical and
calm but in the wrong register: a press-release voice for a warm brand, banter for a sober one, the brand's
name in the third person where it says "we", or copy aimed at a group the brand does not serve.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from toolhost.providers.text.analysis import WORD, stem, words

# -tion, -ment, -ity, -ance nouns: the mark of institutional prose ("the implementation of the enhancement").
NOMINALISATION = re.compile(
    r"\b[a-z]{3,}(?:tions?|ments?|ities|ity|ances?|ences?|[iy]sations?|izations?)\b", re.IGNORECASE
)
# Everyday words that end like nominalisations but read as plain speech.
PLAIN_NOUNS = frozenset(
    """
    moment moments time times question questions station nation vacation kitchen lotion potion portion portions
    option options season seasons mention attention emotion action actions position city community family
    quality quantity security activity ability identity reality variety difference experience science chance
    balance sentence evidence patience confidence audience distance silence comment comments apartment garment
    payment payments statement statements tax equipment cement
    """.split()  # noqa: SIM905 - a word list reads better as words
)
CORPORATE_PHRASES = re.compile(
    r"\b(?:(?:is|are|am) (?:pleased|delighted|proud|excited) to (?:announce|share|inform|introduce)"
    r"|hereby|herein|aforementioned|going forward|moving forward|at this (?:point in )?time|in order to"
    r"|please be advised|valued (?:customers?|clients?|partners?)|(?:remains?|is|are) committed to"
    r"|stakeholders?|solutions?|utili[sz](?:e|es|ed|ing|ation)|facilitat\w+|leverag\w+|optimi[sz]\w+"
    r"|deliverables?|best[- ]in[- ]class|value[- ]added|operational|functionality|enhance(?:d|ment|ments|s)?"
    r"|commence\w*|appropriate channels|continued (?:support|cooperation|patronage)|strategic\w*"
    r"|(?:enables?|empowers?) (?:organi[sz]ations|businesses|users|customers|clients))\b",
    re.IGNORECASE,
)
JOKEY = re.compile(
    r"\b(?:let'?s be (?:real|honest)|confession(?: time)?|not gonna lie|plot twist|spoiler(?: alert)?"
    r"|no sweat|no biggie|just kidding|kidding|jk|lol|lmao|haha\w*|hehe|ha ha|totally|basically|honestly"
    r"|seriously|literally|okay so|ok so|buckle up|fun fact|pro tip|hot take|sorry not sorry|hands down"
    r"|boring bits|about as fun as|nerd out|geek out|shenanigans|cheeky|yikes|whoops|oops|meh|nope|yep|yeah"
    r"|gonna|wanna|gotta|kinda|sorta|y'?all|folks|guys|dude|bestie|vibes?|obsessed|sneaky|secret sauce"
    r"|grab a (?:coffee|cuppa|snack|beer)|give us a (?:ring|shout|buzz)|bits and bobs|wink)\b",
    re.IGNORECASE,
)
SOBER_TONES = frozenset(
    stem(word)
    for word in """
    professional formal authoritative expert refined sophisticated elegant premium measured credible
    trustworthy precise serious polished institutional dignified understated calm reassuring discreet
    composed considered sober restrained respectful academic scholarly clinical exact technical courteous
    steady assured careful traditional
    """.split()  # noqa: SIM905 - a word list reads better as words
)
WARM_TONES = frozenset(
    stem(word)
    for word in """
    friendly warm approachable conversational casual relaxed welcoming encouraging human down-to-earth
    playful fun witty humorous quirky cheeky energetic enthusiastic upbeat lively neighbourly neighborly
    personal chatty kind caring empathetic gentle patient unhurried inclusive cheerful
    """.split()  # noqa: SIM905 - a word list reads better as words
)
PLAYFUL_TONES = frozenset(
    stem(word)
    for word in "playful fun witty humorous quirky cheeky silly irreverent wry jokey cheerful".split()  # noqa: SIM905
)
# Words that name who copy is for. One the brand never uses for its own audience is a sign the copy speaks
# to someone else ("procurement officers" for a hiking brand).
AUDIENCE_WORDS = frozenset(
    stem(word)
    for word in """
    enterprise enterprises corporate corporation corporations executive executives board boards procurement
    subsidiary subsidiaries controller controllers cfo cfos ceo ceos investor investors shareholder
    shareholders developer developers engineer engineers agency agencies reseller resellers wholesaler
    wholesalers distributor distributors retailer retailers restaurant restaurants operator operators
    franchise franchises student students teen teens teenager teenagers kid kids child children toddler
    toddlers parent parents retiree retirees senior seniors graduate graduates beginner beginners
    professional professionals athlete athletes gamer gamers landlord landlords tenant tenants hospital
    hospitals clinic clinics clinician clinicians patient patients school schools teacher teachers
    government governments municipality municipalities staff employees employer employers recruiter
    recruiters freelancer freelancers startup startups influencer influencers creator creators
    bodybuilder bodybuilders lifter lifters powerlifter powerlifters homeowner homeowners bride brides
    landowner landowners farmer farmers contractor contractors lawyer lawyers dentist dentists pharmacist
    pharmacists accountant accountants traders trader millionaire millionaires billionaire billionaires
    """.split()  # noqa: SIM905 - a word list reads better as words
)
SELF_VERBS = (
    r"(?:is|are|has|have|remains|continues|announces|offers|provides|delivers|enables|invites|advises|appreciates"
    r"|will|would|shall|hereby|believes|strives|aims|seeks|recogni[sz]es|welcomes|reminds|thanks|launches"
    r"|introduces|presents|commits|ensures|values)"
)


@dataclass(frozen=True, slots=True)
class Register:
    """Per 100 words: institutional markers and banter markers; and third-person self-references."""

    corporate_rate: float
    jokey_rate: float
    third_person: int
    corporate_span: tuple[int, int] | None
    jokey_span: tuple[int, int] | None
    third_person_span: tuple[int, int] | None


def measure_register(text: str, brand_names: tuple[str, ...]) -> Register:
    """Counts nominalisations and stock phrases, banter, and "<Brand> is/announces" self-references."""
    count = max(len(words(text)), 1)
    nominal = [match for match in NOMINALISATION.finditer(text) if match.group(0).lower() not in PLAIN_NOUNS]
    stock = list(CORPORATE_PHRASES.finditer(text))
    jokes = list(JOKEY.finditer(text))
    subjects = [re.escape(name) for name in brand_names if name] + ["the company", "the firm", "the brand"]
    self_reference = re.compile(r"\b(?:" + "|".join(subjects) + r")(?:'s)?\s+" + SELF_VERBS + r"\b", re.IGNORECASE)
    third = list(self_reference.finditer(text))
    corporate = sorted([(match.start(), match.end()) for match in nominal + stock])
    return Register(
        corporate_rate=(len(nominal) + 2.0 * len(stock)) * 100.0 / count,
        jokey_rate=len(jokes) * 100.0 / count,
        third_person=len(third),
        corporate_span=corporate[0] if corporate else None,
        jokey_span=(jokes[0].start(), jokes[0].end()) if jokes else None,
        third_person_span=(third[0].start(), third[0].end()) if third else None,
    )


def tone_leaning(descriptors: list[str]) -> tuple[bool, bool, bool]:
    """Whether the brand's tone words ask for a sober, a warm, or a playful register."""
    stems = {stem(word) for descriptor in descriptors for word in WORD.findall(descriptor.lower())}
    return bool(stems & SOBER_TONES), bool(stems & WARM_TONES), bool(stems & PLAYFUL_TONES)


TONE_FAMILIES = ("sober", "warm", "playful")  # the names of tone_leaning's answers, in its order
# The words voiceFit counts as speaking to the reader and as the brand speaking as "we".
SECOND_PERSON = frozenset({"you", "your", "yours", "you're", "you'll", "you've"})
FIRST_PLURAL = frozenset({"we", "our", "ours", "us", "we're", "we'll", "we've"})


def manner_of(text: str, words: list[str]) -> dict[str, float]:
    """How a text speaks, for voiceFit: contractions, "you", "we", sentence length, questions."""
    count = max(1, len(words))
    sentence_count = max(1, sum(text.count(mark) for mark in ".?!"))
    return {
        "contractions": 10 * sum("'" in word or "\u2019" in word for word in words) / count,
        "you": 10 * sum(word in SECOND_PERSON for word in words) / count,
        "we": 10 * sum(word in FIRST_PLURAL for word in words) / count,
        "sentence_length": min(len(words) / sentence_count / 25, 2.0),
        "question": 1.0 if "?" in text else 0.0,
    }


def foreign_audience(text: str, known: frozenset[str]) -> list[tuple[int, int]]:
    """Spans of words naming an audience the brand's own description, audience and examples never name."""
    spans = []
    for match in WORD.finditer(text):
        word_stem = stem(match.group(0).lower())
        if word_stem in AUDIENCE_WORDS and word_stem not in known:
            spans.append((match.start(), match.end()))
    return spans
