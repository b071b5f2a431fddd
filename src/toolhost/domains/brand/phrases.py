"""Noun phrases in a brand's copy: its key terms and the people it says it is for.

Part-of-speech tags come from `providers.text.analysis.tag` (TextBlob's pattern tagger). A term is a noun
phrase (adjectives and nouns ending on a noun: "single-origin coffee", "small batches"), never a run of words
that only sits together ("Coffee worth slowing").
"""

from __future__ import annotations

import math
import re
from dataclasses import dataclass

from toolhost.providers.text.analysis import NOUN_TAGS, STOPWORDS, Token, sentences, tag

TEXT_LIMIT = 60_000
MAX_PHRASE_TOKENS = 4
NOUN = NOUN_TAGS
MODIFIER = frozenset({"JJ", "JJR", "JJS", "VBG"})
# People nouns that do not end like an agent noun (-er, -or, -ist, -ian, -ant, -ent).
PEOPLE = frozenset(
    """
    people teams families businesses companies folks kids children parents startups brands agencies shops
    cafes restaurants bakeries organizations organisations nonprofits schools individuals professionals
    everyone anyone women men customers clients users members neighbours neighbors communities households
    makers beginners experts pros couples adults teens students founders owners leaders staff crews
    practices clinics firms studios retailers
    """.split()  # noqa: SIM905 - a word list reads better as words
)
AGENT = re.compile(r"(?:ers|ors|ists|ians|ants|ents|ees)$")
# Plural -er/-or words that name things, not people ("orders over $40 ship free").
NOT_PEOPLE = frozenset(
    """
    orders numbers letters papers filters containers covers corners answers others layers flowers waters
    computers servers stickers burgers powers matters centers centres markers registers parameters meters
    headers footers dinners offers transfers folders trackers timers printers chargers speakers boosters
    drawers rollers cookers toasters grinders monitors sensors errors colors colours flavors flavours
    doors floors mirrors vectors factors sectors events moments comments documents payments segments
    components contents assets points amounts agents percents
    """.split()  # noqa: SIM905 - a word list reads better as words
)
AUDIENCE_VERBS = re.compile(
    r"^(?:help|helps|helping|serve|serves|serving|empower|empowers|support|supports|welcome|welcomes)$", re.I
)
# "we look after families": the verb is the two words, the people follow "after"
LOOK_AFTER = re.compile(r"^(?:look|looks|looking)$", re.I)
# A place or group between the people and the clause about them: "families in Leeds who ...", "teams at
# growing companies who ...", "readers of every age who ...".
PEOPLE_MODIFIER = frozenset({"in", "at", "of", "from", "across", "around", "near", "on"})
MODIFIER_TOKENS = 5
SUBJECTS = frozenset({"we", "i", "they", "you"})
MADE_FOR = re.compile(r"^(?:built|made|designed|crafted|created|perfect|ideal|tailored|baked|roasted|brewed)$", re.I)
CLAUSE_END = re.compile(r"[,.;:!?\u2014\u2013(]|\s-\s")


@dataclass(frozen=True, slots=True)
class AudienceStatement:
    """Who a sentence says the brand is for, and how plainly it says it (3: "for X who Y", 1: "for X")."""

    phrase: str
    people: str
    strength: int


def tagged_sentences(text: str) -> list[tuple[str, list[Token]]]:
    """Each sentence of the text (up to TEXT_LIMIT characters) with its tagged tokens."""
    clipped = text[:TEXT_LIMIT]
    return [(clipped[start:end], tag(clipped[start:end])) for start, end in sentences(clipped)]


def _is_word(token: Token) -> bool:
    return len(token.text) >= 2 and token.text[0].isalpha() and token.text.lower() not in STOPWORDS


def noun_phrase_spans(tokens: list[Token]) -> list[tuple[int, int]]:
    """Token ranges of the noun phrases: modifiers then nouns, ending on a noun; a modifier after a noun
    starts a new phrase ("engineers ship reliable dashboards" holds "reliable dashboards")."""
    found: list[tuple[int, int]] = []
    start: int | None = None
    seen_noun = False
    padded = [*tokens, Token("", ".", 0, 0)]
    for index, token in enumerate(padded):
        is_noun = token.tag in NOUN and _is_word(token)
        is_modifier = token.tag in MODIFIER and _is_word(token)
        if token.tag == "VBG":
            # "tasting notes", "our roasting team"; after a preposition or verb it is a verb ("of losing decisions")
            before = padded[index - 1].tag if index > 0 else ""
            verb_context = before.startswith(("IN", "TO", "VB", "RB", ",", ":"))
            is_modifier = is_modifier and padded[index + 1].tag in NOUN and not verb_context
        # "remote and hybrid teams": two modifiers joined by "and" or "or" qualify one noun
        joins = (
            start is not None
            and not seen_noun
            and token.text.lower() in ("and", "or")
            and padded[index + 1].tag in MODIFIER | NOUN
        )
        if joins:
            continue
        if start is not None and (not (is_noun or is_modifier) or (is_modifier and seen_noun)):
            end = index
            while end > start and tokens[end - 1].tag not in NOUN:
                end -= 1
            if end > start:
                found.append((max(start, end - MAX_PHRASE_TOKENS), end))
            start, seen_noun = None, False
        if is_noun or is_modifier:
            if start is None:
                start = index
            seen_noun = seen_noun or is_noun
    return found


def has_finite_verb(tokens: list[Token]) -> bool:
    """Whether the tokens make a clause: a present-tense or modal verb, or a past one after its subject
    ("toasted almond" in a list of flavours is not one)."""
    for index, token in enumerate(tokens):
        if token.tag in ("VBZ", "VBP", "MD", "VB"):
            return True
        if token.tag == "VBD" and index > 0 and tokens[index - 1].tag in NOUN | {"PRP"}:
            return True
    return False


def _casing(tagged: list[tuple[str, list[Token]]]) -> set[str]:
    """Words written with a capital inside sentences (names), or in capitals (acronyms): kept as written."""
    keep: set[str] = set()
    for _, tokens in tagged:
        for position, token in enumerate(tokens):
            if token.text[:1].isupper() and (position > 0 or token.text.isupper()):
                keep.add(token.text)
    return keep


def _surface(tokens: list[Token], names: set[str]) -> str:
    return " ".join(token.text if token.text in names else token.text.lower() for token in tokens)


def key_terms(texts: list[str], limit: int = 12) -> list[str]:
    """The copy's terms, best first: noun phrases ranked by C-value (Frantzi, Ananiadou and Mima 2000: how
    often a phrase occurs on its own rather than inside a longer one, favouring longer phrases), times the
    share of pages that use it. Names of people and places count half; a phrase inside a better one is
    left out."""
    counts: dict[str, float] = {}
    pages: dict[str, set[int]] = {}
    surfaces: dict[str, str] = {}
    lengths: dict[str, int] = {}
    named: set[str] = set()
    for page_index, text in enumerate(texts):
        if not text.strip():
            continue
        tagged = tagged_sentences(text)
        names = _casing(tagged)
        for _, tokens in tagged:
            # A line without a verb (a label, a list of tasting notes) says less than a sentence does.
            weight = 1.0 if has_finite_verb(tokens) else 0.5
            for start, end in noun_phrase_spans(tokens):
                for first in range(start, end):  # the phrase and each shorter one on the same head noun
                    phrase = tokens[first:end]
                    if any(len(token.text) <= 2 for token in phrase):
                        continue
                    surface = _surface(phrase, names)
                    key = surface.lower()
                    surfaces.setdefault(key, surface)
                    lengths[key] = len(phrase)
                    counts[key] = counts.get(key, 0.0) + weight
                    pages.setdefault(key, set()).add(page_index)
                    if phrase[-1].text in names:  # a person, place or product, not a term
                        named.add(key)
    if sum(counts.values()) < 4:
        return []
    page_total = max(1, sum(1 for text in texts if text.strip()))
    scores: dict[str, float] = {}
    for key, count in counts.items():
        longer = [other for other in counts if lengths[other] > lengths[key] and f" {key} " in f" {other} "]
        nested = sum(counts[other] for other in longer) / len(longer) if longer else 0.0
        score = math.log2(lengths[key] + 1) * max(0.0, count - nested) * (len(pages[key]) / page_total) ** 0.5
        scores[key] = score * (0.5 if key in named else 1.0)
    ranked = sorted(scores, key=lambda key: (-scores[key], -lengths[key], key))
    chosen: list[str] = []
    for key in ranked:
        if scores[key] <= 0 or len(chosen) == limit:
            break
        if not any(f" {key} " in f" {other} " or f" {other} " in f" {key} " for other in chosen):
            chosen.append(key)
    return [surfaces[key] for key in chosen]


def _is_people(token: Token) -> bool:
    word = token.text.lower()
    return word in PEOPLE or (token.tag in {"NNS", "NNPS"} and bool(AGENT.search(word)) and word not in NOT_PEOPLE)


def audience_statements(text: str) -> list[AudienceStatement]:
    """Who the copy says the brand is for: "for home brewers who care about ...", "we help small bakeries",
    "built for finance teams"; the phrase runs to the end of its clause when a who/that clause follows."""
    found: list[AudienceStatement] = []
    for sentence, tokens in tagged_sentences(text):
        for index, token in enumerate(tokens[:-1]):
            word = token.text.lower()
            # the tagger reads "We support families" as a noun; after a subject pronoun the word is the verb
            as_verb = token.tag.startswith("VB") or (index > 0 and tokens[index - 1].text.lower() in SUBJECTS)
            helped = (bool(AUDIENCE_VERBS.match(word)) and as_verb) or (
                word == "after" and index > 0 and bool(LOOK_AFTER.match(tokens[index - 1].text))
            )
            if word != "for" and not helped:
                continue
            phrase_range = next(((s, e) for s, e in noun_phrase_spans(tokens[index + 1 :]) if s == 0), None)
            if phrase_range is None:
                continue
            head_end = index + 1 + phrase_range[1]
            # "employees and individuals who ...": people joined by "and"/"or" are one audience
            if head_end + 1 < len(tokens) and tokens[head_end].text.lower() in ("and", "or"):
                joined = next(((s, e) for s, e in noun_phrase_spans(tokens[head_end + 1 :]) if s == 0), None)
                if joined is not None and _is_people(tokens[head_end + joined[1]]):
                    head_end += 1 + joined[1]
            head = tokens[index + 1 : head_end]
            last_person = max((i for i, item in enumerate(head) if _is_people(item)), default=None)
            after = tokens[head_end] if head_end < len(tokens) else None
            if after is not None and after.text.lower() in PEOPLE_MODIFIER and last_person == len(head) - 1:
                following = tokens[head_end + 1 : head_end + 1 + MODIFIER_TOKENS + 1]
                relative_at = next((item for item in following if item.text.lower() in ("who", "that", "whose")), None)
                if relative_at is not None and not CLAUSE_END.search(sentence, after.start, relative_at.start):
                    # the place or group belongs to the people: the phrase runs on through it
                    head = tokens[index + 1 : tokens.index(relative_at)]
                    last_person = len(head) - 1
                    after = relative_at
            relative = after is not None and after.text.lower() in ("who", "that", "whose")
            made_for = word == "for" and index > 0 and bool(MADE_FOR.match(tokens[index - 1].text))
            if last_person is None and not (relative and (made_for or helped)):
                continue
            people = head if relative and last_person is None else head[: (last_person or 0) + 1]
            start, end = people[0].start, people[-1].end
            strength = 1
            if relative and after is not None and (last_person is None or last_person == len(head) - 1):
                clause = CLAUSE_END.search(sentence, after.start)
                end = clause.start() if clause else len(sentence.rstrip())
                strength = 3
            elif made_for or helped:
                strength = 2
            phrase = sentence[start:end].strip()
            if 2 <= len(phrase) <= 160:
                found.append(AudienceStatement(phrase, sentence[people[0].start : people[-1].end], strength))
    return found
