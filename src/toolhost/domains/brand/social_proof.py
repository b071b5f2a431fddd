"""Awards, certifications and press a site names: "Good Food Award 2024", "Certified B Corp", "As seen in ...".

They are read from the whole page, footer included (where badges usually sit), as the names the site gives
them; each is a claim the site makes, not a verified fact.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from toolhost.domains.brand.html_extract import PageFindings

CAPITALISED = r"(?:[A-Z][\w'\u2019&.-]*|of|the|for|and|in|&)"
YEAR = r"(?:19|20)\d{2}"
# "Good Food Award 2024", "2023 Coffee Review Roaster of the Year", "James Beard Award winner".
AWARD = re.compile(
    rf"(?:\b{YEAR}\s+)?\b[A-Z][\w'\u2019&.-]*(?:\s+{CAPITALISED}){{0,6}}?\s+"
    rf"(?:Awards?|Prize|Medal|(?:Roaster|Bakery|Product|Company|Startup|Brand|Shop|Cafe|Café) of the (?:Year|Day))"
    rf"(?:,?\s+{YEAR})?\b"
)
# "Our Awards", "See all awards": a section's title, not an award.
SECTION_WORD = re.compile(r"^(?:Our|Your|See|View|All|Recent|Latest|More)\b")
CERTIFICATION = re.compile(
    r"\bCertified\s+(?:[A-Z][\w-]*)(?:\s+[A-Z][\w-]*){0,3}"
    r"|\b(?:[A-Z][\w-]*\s+){1,3}(?:Certified|certified)\b"
    r"|\bUSDA Organic\b|\bISO/?\s?(?:IEC\s)?\d{4,5}(?::\d{4})?\b|\bSOC\s?[123](?:\s+Type\s+(?:II|I|1|2))?\b"
    r"|\bB Corp(?:oration)?\b|\bRainforest Alliance\b|\bPCI[- ]DSS\b"
)
# Words before "certified" that are not the certification's name ("We are certified").
NOT_A_NAME = re.compile(r"^(?:We|Our|All|Every|Is|Are|And|Fully|Proudly|Now|The)\s+", re.I)
# Words that make a name a recognition: an accreditation, a membership, a rating, a grant, a listing.
RECOGNITION_WORD = re.compile(
    r"\b(?:accredit\w*|certified|certification|registered|approved|members? of|provider|partner|trusted trader|"
    r"employer|fellowship|grant|recommended|rated|band \d|bib gourmand|michelin|guide (?:19|20)\d{2}|compliant)\b",
    re.I,
)
NAME_WORD = r"(?:[A-Z][\w'\u2019?&.-]*|[a-z]+[A-Z][\w-]*|\d+)"
NAME_RUN = rf"{NAME_WORD}(?:\s+(?:of|the|for|and|&|to)?\s*{NAME_WORD}){{0,6}}"
# In a sentence: the name before the word ("European Research Council Starting Grant", "Lexcel
# accreditation", "Chambers UK, Band 2") or after it ("Members of the British Dental Association").
NAMED_BEFORE = re.compile(
    rf"\b{NAME_RUN}(?:'s\s+{NAME_RUN})?,?\s+(?:Grant|Fellowship|Award|Prize|Medal|Employer|Provider|Trader|"
    rf"[Aa]ccreditation|[Aa]ccredited(?:\s+[A-Z]\w+)?|[Cc]ertified|[Rr]egistered|[Aa]pproved(?:\s+[a-z]+)?|"
    rf"Band\s+\d+|Bib Gourmand(?:\s+(?:19|20)\d{{2}})?|[Cc]ompliant)\b"
)
NAMED_AFTER = re.compile(
    rf"\b(?:Rated\s+\w+\s+by|Recommended|Registered with|Members? of|Accredited by|Approved by)\s+(?:the\s+)?"
    rf"{NAME_RUN}"
)
# A badge says little else, on its own line or between dots: "Gas Safe registered (no. 512398)".
BADGE_WORDS = 8
NUMBERED = re.compile(r"\s*(?:\((?:no|number|reg)[^)]*\)|\b(?:no|number|reg)\.?\s*\d[\d\s]*)\s*$", re.I)
PRESS_LEAD = re.compile(
    r"\b(?:as (?:seen|featured) (?:in|on)|featured (?:in|on)|written up in|covered (?:by|in)|reported (?:by|in)|"
    r"profiled (?:by|in))\s*:?\s*",
    re.I,
)
PRESS_NAME = re.compile(r"(?:[Tt]he\s+)?[A-Z][\w'\u2019.-]*(?:\s+(?:&\s+)?[A-Z][\w'\u2019.-]*){0,4}")


@dataclass(frozen=True, slots=True)
class Mention:
    """A name the site gives (an award, a certification, a publication) and the page that gives it."""

    name: str
    page: str


def _lines(page: PageFindings) -> list[str]:
    """The page's lines: the whole body's, element by element (footers and badges), then the main text's,
    where a sentence with <em> or <a> inside it stays one line."""
    lines: list[str] = []
    for source in (page.full_text, page.text):
        for line in re.split(r"\n|\s[\u00b7|\u2022]\s", source):
            line = re.sub(r"^[-*\u2022]\s+", "", line.strip())  # the main text marks list items "- "
            if line and line not in lines:
                lines.append(line)
    return lines


def _add(found: list[Mention], name: str, page: str) -> None:
    name = name.strip(" .,;:")
    lowered = name.lower()
    if len(name) < 3 or any(lowered in other.name.lower() for other in found):
        return
    found[:] = [other for other in found if other.name.lower() not in lowered]  # the fuller name wins
    found.append(Mention(name[:120], page))


def awards(pages: list[PageFindings]) -> list[Mention]:
    """Award names the pages state, with their year when given."""
    found: list[Mention] = []
    for page in pages:
        for line in _lines(page):
            for match in AWARD.finditer(line):
                if not SECTION_WORD.match(match.group(0)):
                    _add(found, match.group(0), page.url)
    return found[:10]


def certifications(pages: list[PageFindings]) -> list[Mention]:
    """Certifications and compliance marks the pages state: "Certified B Corp", "SOC 2 Type II"."""
    found: list[Mention] = []
    for page in pages:
        for line in _lines(page):
            for match in CERTIFICATION.finditer(line):
                name = NOT_A_NAME.sub("", match.group(0))
                if name.lower() != "certified":
                    _add(found, name, page.url)
    return found[:10]


def recognitions(pages: list[PageFindings]) -> list[Mention]:
    """Accreditations, memberships, ratings, grants and listings the pages state: a short badge line whole
    ("Which? Trusted Trader", "Members of the British Dental Association"), else the name beside its word
    inside a sentence ("funded by a European Research Council Starting Grant")."""
    found: list[Mention] = []
    for page in pages:
        for line in _lines(page):
            line = NUMBERED.sub("", re.sub(r"\s*\([^()]*\d[^()]*\)", "", line)).strip(" .;:")
            badge = re.sub(r"^(?:A|An|The)\s+", "", line)
            # a name besides the recognition word ("Band 1" in a fee table, "Registered charity" name nothing)
            named = re.search(r"[A-Z]", RECOGNITION_WORD.sub("", badge))
            badge_like = named and not SECTION_WORD.match(badge) and RECOGNITION_WORD.search(badge)
            if len(badge.split()) <= BADGE_WORDS and badge_like:
                _add(found, badge, page.url)
                continue
            for part in re.split(r"(?<=[.!?])\s+", line):
                for pattern in (NAMED_BEFORE, NAMED_AFTER):
                    for match in pattern.finditer(part):
                        name = re.sub(r"^(?:A|An)\s+", "", match.group(0))
                        if len(name.split()) >= 2:
                            _add(found, name, page.url)
    return found[:10]


def press_mentions(pages: list[PageFindings]) -> list[Mention]:
    """Publications the site says covered it: logos next to "As seen in", and names after "featured in"."""
    found: list[Mention] = []
    for page in pages:
        for name in page.press_names:
            _add(found, name, page.url)
        for line in _lines(page):
            for lead in PRESS_LEAD.finditer(line):
                rest = re.split(r"[.!?]", line[lead.end() :], maxsplit=1)[0]
                for part in re.split(r",\s*|\s+and\s+", rest):
                    if PRESS_NAME.fullmatch(part.strip()):
                        _add(found, re.sub(r"^the\s+", "", part.strip()), page.url)
    return found[:12]
