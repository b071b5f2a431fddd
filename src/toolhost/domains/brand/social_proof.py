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
PRESS_LEAD = re.compile(
    r"\b(?:as (?:seen|featured) (?:in|on)|featured (?:in|on)|written up in|covered by)\s*:?\s*", re.I
)
PRESS_NAME = re.compile(r"(?:The\s+)?[A-Z][\w'\u2019.-]*(?:\s+(?:&\s+)?[A-Z][\w'\u2019.-]*){0,4}")


@dataclass(frozen=True, slots=True)
class Mention:
    """A name the site gives (an award, a certification, a publication) and the page that gives it."""

    name: str
    page: str


def _lines(page: PageFindings) -> list[str]:
    return [line.strip() for line in re.split(r"\n|\s[\u00b7|\u2022]\s", page.full_text or page.text) if line.strip()]


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
                        _add(found, part, page.url)
    return found[:12]
