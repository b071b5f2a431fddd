"""Claims in copy (figures, rankings, guarantees, comparisons, absolutes) and the proof that backs them."""

from __future__ import annotations

import re
from dataclasses import dataclass

from toolhost.providers.text.analysis import content_stems, sentences

CLAIM_PATTERNS: tuple[tuple[str, str, re.Pattern[str]], ...] = (
    (
        "percentage",
        "high",
        re.compile(
            r"\b\d+(?:[.,]\d+)?\s?(?:%|per\s?cent\b)"
            r"|\b(?:ten|twenty|thirty|forty|fifty|sixty|seventy|eighty|ninety)(?:[- ][a-z]+)?\s+per\s?cent\b",
            re.IGNORECASE,
        ),
    ),
    (
        "number",
        "high",
        re.compile(
            r"(?:\$\s?\d[\d,.]*\s?(?:k|m|bn|million|billion|thousand)?\b"
            # a following counted in words: "two million meals", "thousands of families" (a duration in words,
            # "three weeks", is how long something takes, not a claim)
            r"|\b(?:(?:two|three|four|five|six|seven|eight|nine|ten|twenty|fifty)\s+(?:hundred|thousand|million)"
            r"|hundreds|thousands|millions)\s+(?:of\s+)?(?:customers|users|clients|businesses|companies|people"
            r"|members|families|meals|patients|students|homes|orders)\b"
            r"|\b(?:more\s+than|over|nearly|almost)\s+(?:[a-z]+[\s-]){1,2}(?:hundred|thousand|million)\b"
            r"|\b\d+(?:\.\d+)?\s?(?:x|×)(?!\w)"
            r"|\b\d[\d,.]*\s?(?:k|m|million|billion|thousand)?\+?\s?"
            r"(?:customers|users|clients|businesses|companies|teams|people|members|families|hikers|downloads|reviews"
            r"|stars|countries|pounds|kilos|lbs|farms|partners|years)\b"
            r"|\b\d(?:\.\d)?\s?(?:/|out of)\s?(?:5|10)\b"
            # a share or a count stated as such: "nine in ten owners", "over 300 firms", "up to 80 recipes"
            r"|\b(?:\d+|one|two|three|four|five|six|seven|eight|nine)\s+(?:in|out\s+of)\s+(?:\d+|four|five|ten)\b"
            r"|\b(?:over|more\s+than|up\s+to|nearly|almost|at\s+least)\s+\d[\d,.]*"
            # an effect put in figures: "3x faster", "cuts costs by 40", "saves 6 hours", "returns of 8"
            r"|\b\d[\d,.]*\s*(?:x|times)?\s*(?:faster|cheaper|quicker|better|higher|lower)\b"
            r"|\b\d[\d,.]*\s*(?:x|times)\s*(?:more|less|fewer)\b"
            r"|\b(?:save[sd]?|saving|cut(?:s|ting)?|reduce[sd]?|reducing|boost(?:s|ed)?|increase[sd]?|grow(?:s|n)?"
            r"|grew|return(?:s|ed)?|earn(?:s|ed)?|yield(?:s|ed)?|lower(?:s|ed)?|raise[sd]?)\s+(?:\w+\s+){0,3}"
            r"(?:by\s+)?(?:up\s+to\s+|over\s+|nearly\s+)?[$\u00a3\u20ac]?\d"
            r"|\b\d[\d,]*\+)",
            re.IGNORECASE,
        ),
    ),
    (
        # a time in figures: "doors open 45 minutes before", "offline for 19 days", "chase at 14 days" tell
        # how long something takes far more often than they promise a speed, so they warn without blocking
        "number",
        "medium",
        re.compile(r"\b\d[\d,.]*\s?(?:hours|minutes|days|weeks|times)\b", re.IGNORECASE),
    ),
    (
        "ranking",
        "high",
        re.compile(
            r"(?:#\s?1\b|\bnumber[ -]one\b|\bno\.\s?1\b|\btop[- ](?:rated|ranked)\b|\bbest[- ]selling\b"
            r"|\b(?:industry|market)[- ]leading\b|\bworld[- ]class\b|\baward[- ]winning\b"
            # recognition: "Law Firm of the Year", "ranked Band 1", "a Royal Warrant", "two Michelin stars",
            # "the first in the county", "the jeweller of choice for three royal families"
            r"|\b(?:winner|winners)\s+of\b|\bawarded\s+(?:a|the)\b"
            r"|\branked\s+(?:band|tier|no\.?|number|#|top|first)\b|\broyal\s+warrant\b|\bmichelin\b"
            r"|\b(?:one|two|three)-star\b|\bof\s+choice\s+for\b"
            r"|\b(?:oldest|first|only)\s+(?:\w+\s+){0,3}(?:in|of)\s+(?:the\s+)?(?:country|county|region|city|uk|world"
            r"|britain|england|scotland|wales|ireland|europe|area|town|north|south|east|west)\b"
            r"|\bmost\s+(?:trusted|popular|loved|advanced|powerful"
            r"|reliable|accurate|secure|affordable|complete))",
            re.IGNORECASE,
        ),
    ),
    (
        # A bare superlative: "the fastest payroll", but as often "the best hour of the day", "the best guide is
        # rarely the one who talks most", "best approached by river". On the labelled copy it blocked more
        # on-brand posts than invented claims, so it lowers claimSupport and warns without blocking.
        "ranking",
        "medium",
        re.compile(
            # "your biggest question", "her best day": a person's own superlative, not a ranking
            r"(?<!\bmy\s)(?<!\byour\s)(?<!\bhis\s)(?<!\bher\s)(?<!\btheir\s)"
            r"\b(?:best|fastest|easiest|cheapest|smartest|simplest|safest|strongest|largest|biggest|warmest"
            r"|healthiest|lightest|toughest)\b(?=\s+\w+)"
            # "the best part of her Tuesday" is someone's experience, not a ranking against competitors
            r"(?!\s+(?:part|parts|thing|things|moment|moments|bit|day|days|time|times)\s+of\s+"
            r"(?:my|her|his|their|our|your|the)\b)",
            re.IGNORECASE,
        ),
    ),
    (
        # a standing among others, named as such: "the only carbon-neutral festival in Wales", "the UK's
        # highest-rated payroll provider", "Europe's top dark bar", "among the top 100", "featured in House & Garden"
        # (case-sensitive: the place or the title is a name)
        "ranking",
        "high",
        re.compile(
            r"\b[Tt]he (?:only|oldest|first|largest|biggest|highest[- ]rated|most [a-z]+) (?:[\w&'-]+ ){0,4}"
            r"(?:in|of|on) (?:the )?(?!(?:January|February|March|April|May|June|July|August|September|October"
            r"|November|December|Monday|Tuesday|Wednesday|Thursday|Friday|Saturday|Sunday)\b)[A-Z]"
            # "It's top right", "That's the best": a pronoun's "'s" is "is", not a possessive
            r"|\b(?!(?:It|That|There|Here|What|Who|She|He|Let|Where)'s)[A-Z][\w.]*'s (?:top|best|largest|biggest"
            r"|oldest|leading|highest[- ]rated|most [a-z]+)\b"
            # "Law Firm of the Year", not "the end of the year"
            r"|\bof the Year\b"
            r"|\b(?:among|in|one of) the top \d+\b|\b(?:featured|as seen) in (?:the )?[A-Z]"
            r"|\bmost (?:downloaded|awarded|recommended|reviewed|visited|frequently [a-z]+)\b"
        ),
    ),
    (
        # an authority vouching for the product: a claim only a proof point can back
        "endorsement",
        "high",
        re.compile(
            r"\b(?:designed|developed|created|approved|recommended|endorsed|backed|tested|vetted|trusted|used)\s+by\s+"
            r"(?:\w+\s+){0,2}(?:nutritionists?|dietitians?|doctors?|physicians?|experts?|scientists?|accountants?"
            r"|firms|professionals|dermatologists?|engineers|chefs|athletes|guides|analysts|economists)\b",
            re.IGNORECASE,
        ),
    ),
    (
        "guarantee",
        "high",
        re.compile(
            r"\b(?:guarantee[sd]?|guaranteeing|risk[- ]free|money[- ]back|zero[- ]risk|clinically proven"
            r"|scientifically proven|proven to|cures|cure\s+(?:for|your|the|all|any)"
            # promises of an outcome no one controls: "never worry again", "double your savings"
            r"|(?:we|i)\s+promise|promised?\s+(?:you|that)|for\s+life|never\s+(?:\w+\s+){1,4}again"
            r"|whatever\s+the\s+markets?(?:\s+do(?:es)?)?|in\s+any\s+market|(?:double|triple)s?\s+(?:your|the)"
            r"|will\s+(?:double|triple|transform|skyrocket)|(?:ensure|make\s+sure)\s+(?:that\s+)?\w+(?:'s|s')?\s+"
            r"(?:\w+\s+)?(?:grows?|rises?|succeeds?|wins?)|(?:grows?|rises?)\s+every\s+year)\b",
            re.IGNORECASE,
        ),
    ),
    (
        "comparison",
        "medium",
        re.compile(
            r"\b(?:\w+er|more|less|fewer)\s+than\s+(?:any|every|all|other|the\s+competition|competitors|ever)\b"
            r"|\b(?:outperform(?:s|ed)?|beat(?:s|ing)?\s+(?:every|all|any|the)|unlike\s+(?:other|any)"
            r"|nobody\s+else|no\s+one\s+else|no\s+other)\b",
            re.IGNORECASE,
        ),
    ),
    (
        "absolute",
        "low",
        re.compile(
            r"\b(?:never\s+(?:fail|fails|lose|loses|lost|break|breaks|leak|leaks|miss|misses)"
            r"|always\s+(?:work|works|win|wins|deliver|delivers)"
            r"|every\s+(?:single\s+)?(?:customer|client|user|one of them|time|investor)\s+\w+"
            r"|100\s?%\s+of\s+the\s+time|in\s+any\s+(?:storm|market|conditions|weather)|forever|instantly"
            r"|effortless(?:ly)?|no\s+exceptions)\b",
            re.IGNORECASE,
        ),
    ),
)
SEVERITY_RANK = {"high": 3, "medium": 2, "low": 1}
# A claim denied is no claim: "testing can't guarantee it suits everyone", "the value of shares isn't
# guaranteed", "not the fastest way to make dog food". A negation within the three words before the match.
NEGATED = re.compile(
    r"\b(?:not|no|never|cannot|can't|won't|isn't|aren't|doesn't|don't|didn't|nor|rarely|seldom|hardly|nobody"
    r"|no one)"
    r"(?:\s+\S+){0,2}\s*$",
    re.IGNORECASE,
)
NUMBER = re.compile(r"\d[\d,]*(?:\.\d+)?")
SCALE_WORDS = {"k": 1_000, "thousand": 1_000, "m": 1_000_000, "million": 1_000_000, "bn": 1e9, "billion": 1e9}
SCALED = re.compile(r"(\d[\d,]*(?:\.\d+)?)\s?(k|m|bn|thousand|million|billion)\b", re.IGNORECASE)


@dataclass(frozen=True, slots=True)
class Evidence:
    """A proof point or value proposition a claim may lean on."""

    text: str
    claim: str
    evidence: str
    verified: bool
    numbers: frozenset[float]
    stems: frozenset[str]


@dataclass(frozen=True, slots=True)
class Claim:
    """A claim found in the text and what supports it."""

    text: str
    start: int
    end: int
    kind: str
    severity: str
    supported: bool
    evidence: Evidence | None


def numbers_in(text: str) -> set[float]:
    """Every figure of a text as a number ("12,000", "12k" and "12 thousand" are the same)."""
    found: set[float] = set()
    for match in SCALED.finditer(text):
        found.add(float(match.group(1).replace(",", "")) * SCALE_WORDS[match.group(2).lower()])
    for match in NUMBER.finditer(text):
        try:
            found.add(float(match.group(0).replace(",", "")))
        except ValueError:
            continue
    return found


def build_evidence(proof_points: list[dict[str, object] | str], value_propositions: list[str]) -> list[Evidence]:
    """What claims are checked against: proof points (with their status) and value propositions."""
    result = []
    for point in proof_points:
        if isinstance(point, dict):
            claim = str(point.get("claim") or "").strip()
            evidence = str(point.get("evidence") or "").strip()
            verified = point.get("status", "verified") != "unverified"
        else:
            claim, evidence, verified = str(point).strip(), "", True
        if claim:
            text = f"{claim} ({evidence})" if evidence else claim
            result.append(
                Evidence(
                    text,
                    claim,
                    evidence,
                    verified,
                    frozenset(numbers_in(claim)),
                    frozenset(content_stems(claim)),
                )
            )
    for proposition in value_propositions:
        if proposition.strip():
            result.append(
                Evidence(
                    proposition,
                    proposition,
                    "",
                    True,
                    frozenset(numbers_in(proposition)),
                    frozenset(content_stems(proposition)),
                )
            )
    return result


def find_claims(text: str, evidence: list[Evidence]) -> list[Claim]:
    """Each sentence's strongest claim, judged supported when a proof point states the same thing."""
    claims = []
    for start, end in sentences(text):
        sentence = text[start:end]
        hits = []
        for kind, severity, pattern in CLAIM_PATTERNS:
            for match in pattern.finditer(sentence):
                if not NEGATED.search(sentence[: match.start()]):
                    hits.append((kind, severity, match))
        if not hits:
            continue
        figures: set[float] = set()
        for kind, _, match in hits:
            if kind in ("percentage", "number"):
                figures |= numbers_in(match.group(0))
        kind, severity, _ = max(hits, key=lambda hit: SEVERITY_RANK[hit[1]])
        support = _support(sentence, figures, evidence)
        claims.append(
            Claim(
                text=sentence[:300],
                start=start,
                end=min(end, start + 300),
                kind=kind,
                severity=severity,
                supported=support is not None and support.verified,
                evidence=support,
            )
        )
    return claims


def _support(sentence: str, figures: set[float], evidence: list[Evidence]) -> Evidence | None:
    sentence_stems = set(content_stems(sentence))
    best: tuple[float, Evidence] | None = None
    for item in evidence:
        shared = len(sentence_stems & item.stems)
        if figures:
            # a figure is supported only by evidence stating that same figure about the same subject
            if not (figures <= item.numbers) or shared == 0:
                continue
            score = 1.0 + shared
        else:
            if not item.stems:
                continue
            coverage = shared / len(item.stems)
            if coverage < 0.5 or shared < 2 and len(item.stems) > 1:
                continue
            score = coverage + shared / 10
        if best is None or score > best[0]:
            best = (score, item)
    return best[1] if best else None
