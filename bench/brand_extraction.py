"""Does extract_brand read a site like a designer? Ten small sites of varied structure, per-field accuracy.

Run: `PYTHONPATH=src .venv/bin/python bench/brand_extraction.py [--verbose]`. Each site of
bench/data/brand_sites/ (a dentist, a law firm, a city library, a bike shop, a SaaS, a fashion label, a
charity, a plumber, a restaurant, a university lab; kept apart from the test sites of tests/data/brand_sites)
is served on 127.0.0.1 and read by the brand service's `extract`, the code behind the extract_brand tool, as
an agent's call would read it. The JSON beside each site says what a designer would take from it; it was
written with the site, before the extractor ever ran on it. Per field:

- primary, text and background colour: within ΔE2000 5 of the expected colour (mean ΔE printed too);
- audience: the expected "for X who Y" phrase found (most of its words; a site that names none: none given);
- awards and certifications, press: recall of the expected names, precision of what was reported;
- value propositions: the share that are whole sentences of the site (closing stop, found in its text, not a
  heading);
- preferred terms: the share that are whole phrases of the site (found between word boundaries, not opening
  or closing on a function word, not a heading cut short), and the recall of the expected terms;
- confidence ordering: of the pairs of sites of different richness (thin, medium, rich), the share where the
  richer site gets the higher overall confidence.
"""

from __future__ import annotations

import asyncio
import contextlib
import functools
import html
import json
import re
import sys
import threading
from collections.abc import Iterator
from dataclasses import dataclass, field
from http.server import SimpleHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any

from coloraide import Color

from toolhost.config import FetchSettings
from toolhost.domains.brand import service

SITES = Path(__file__).resolve().parent / "data" / "brand_sites"
DELTA_E_LIMIT = 5.0
RICHNESS = {"thin": 0, "medium": 1, "rich": 2}
# Words a whole noun phrase neither opens nor closes on (the bench's own list, not the extractor's).
FUNCTION_WORDS = frozenset(
    """
    a an the and or but of for to in on at by with from as is are was were be our your their its this that these
    those who which what when where how why not no so than then very more most every each all any some
    """.split()  # noqa: SIM905 - a word list reads better as words
)


class QuietHandler(SimpleHTTPRequestHandler):
    def log_message(self, format: str, *args: Any) -> None:
        return


@contextlib.contextmanager
def served(directory: Path) -> Iterator[str]:
    """The site's folder as static files on a free port of 127.0.0.1; yields its home page URL."""
    server = ThreadingHTTPServer(("127.0.0.1", 0), functools.partial(QuietHandler, directory=str(directory)))
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    try:
        yield f"http://127.0.0.1:{server.server_address[1]}/"
    finally:
        server.shutdown()
        server.server_close()


def visible_words(directory: Path) -> str:
    """The words of every page of a site, entities decoded, one space between words."""
    pages = []
    for path in sorted(directory.rglob("*.html")):
        source = re.sub(r"(?is)<(script|style)\b.*?</\1>", " ", path.read_text())
        pages.append(html.unescape(re.sub(r"<[^>]+>", " ", source)))
    return re.sub(r"\s+", " ", " ".join(pages))


def headings(directory: Path) -> list[str]:
    found = []
    for path in directory.rglob("*.html"):
        for inner in re.findall(r"(?is)<h[1-3][^>]*>(.*?)</h[1-3]>", path.read_text()):
            found.append(re.sub(r"\s+", " ", html.unescape(re.sub(r"<[^>]+>", " ", inner))).strip().lower())
    return found


def delta_e(found: str | None, expected: str) -> float | None:
    if not found:
        return None
    return float(Color(found).delta_e(Color(expected), method="2000"))


def words(text: str) -> list[str]:
    return re.findall(r"[a-z0-9']+", text.lower())


def names_match(found: str, expected: str) -> bool:
    """One recognition names the other ("Members of the British Dental Association" names the BDA)."""
    found_text, expected_text = " ".join(words(found)), " ".join(words(expected))
    return bool(found_text) and (expected_text in found_text or found_text in expected_text)


def audience_found(found: str, expected: str | None) -> bool:
    if expected is None:
        return not found.strip()
    wanted = set(words(expected)) - FUNCTION_WORDS
    got = set(words(found)) - FUNCTION_WORDS
    return bool(got) and len(wanted & got) >= 0.7 * len(wanted) and len(got) <= 2 * len(wanted)


def is_site_sentence(text: str, site_text: str, site_headings: list[str]) -> bool:
    flat = re.sub(r"\s+", " ", text).strip()
    return (
        flat.endswith((".", "!", "?"))
        and flat.lower() in site_text
        and flat.lower().rstrip(".!?") not in {heading.rstrip(".!?") for heading in site_headings}
    )


def is_whole_phrase(term: str, site_words: str, site_headings: list[str]) -> bool:
    """A term the site says as it is: between word boundaries, in its own case (a lower-cased name is not the
    name), not only ever after a figure ("hour emergency" of "24 hour emergency"), not opening or closing on a function
    word, not a heading cut short."""
    term = term.strip()
    parts = term.lower().split()
    if not parts or parts[0] in FUNCTION_WORDS or parts[-1] in FUNCTION_WORDS:
        return False
    first, rest = term[0], re.escape(term[1:])
    occurrences = list(re.finditer(rf"(?<![\w-])[{first.lower()}{first.upper()}]{rest}(?![\w-])", site_words))
    after_figure = [
        match
        for match in occurrences
        if match.group(0)[0].islower() and re.search(r"\d\s*$", site_words[: match.start()])
    ]
    if not occurrences or len(after_figure) == len(occurrences):
        return False
    # "coffee worth slowing" cut from the heading "Coffee worth slowing down for"
    lowered = term.lower()
    return not (len(parts) > 1 and any(heading.startswith(lowered + " ") for heading in site_headings))


@dataclass
class Tally:
    """Hits over trials for one field, with the misses named."""

    hits: int = 0
    trials: int = 0
    misses: list[str] = field(default_factory=list)

    def add(self, hit: bool, miss: str) -> None:
        self.trials += 1
        self.hits += hit
        if not hit:
            self.misses.append(miss)

    def line(self, name: str) -> str:
        share = f"{self.hits / self.trials:.0%}" if self.trials else "n/a"
        return f"{name:<34} {self.hits:>3}/{self.trials:<3} {share:>5}"


async def read_site(directory: Path) -> dict[str, Any]:
    settings = FetchSettings(allow=["127.0.0.1"], allow_http=True)
    with served(directory) as url:
        draft = await service.extract(fetch_settings=settings, url=url, html=None, text=None)
    return draft.brand_context


def main(verbose: bool) -> None:
    tallies: dict[str, Tally] = {
        name: Tally()
        for name in (
            "primary colour (dE2000 <= 5)",
            "text colour (dE2000 <= 5)",
            "background colour (dE2000 <= 5)",
            "audience",
            "awards and certifications: recall",
            "awards and certifications: precision",
            "press: recall",
            "press: precision",
            "value propositions are sentences",
            "preferred terms are whole phrases",
            "expected preferred terms: recall",
            "confidence ordering (pairs)",
        )
    }
    distances: dict[str, list[float]] = {"primary": [], "text": [], "background": []}
    confidences: list[tuple[str, str, float]] = []
    for expected_path in sorted(SITES.glob("*.json")):
        expected = json.loads(expected_path.read_text())
        directory = SITES / expected["site"]
        context = asyncio.run(read_site(directory))
        site_words, site_headings = visible_words(directory), headings(directory)
        site_text = site_words.lower()
        palette = context.get("colorPalette") or {}
        for role in ("primary", "text", "background"):
            distance = delta_e(palette.get(role), expected[role])
            if distance is not None:
                distances[role].append(distance)
            tallies[f"{role} colour (dE2000 <= 5)"].add(
                distance is not None and distance <= DELTA_E_LIMIT,
                f"{expected['site']}: {palette.get(role)} for {expected[role]}"
                + (f" (dE {distance:.1f})" if distance is not None else ""),
            )
        audience = (context.get("targetAudience") or {}).get("primary") or ""
        tallies["audience"].add(
            audience_found(audience, expected["audience"]),
            f"{expected['site']}: {audience!r} for {expected['audience']!r}",
        )
        proof = context.get("socialProof") or {}
        for kind, key, wanted in (
            ("awards and certifications", "awards", expected["awards"]),
            ("press", "pressMentions", expected["press"]),
        ):
            reported = [str(item) for item in proof.get(key) or []]
            for name in wanted:
                tallies[f"{kind}: recall"].add(
                    any(names_match(item, name) for item in reported), f"{expected['site']}: {name!r} not found"
                )
            known = [*expected["awards"], *expected["press"]]
            for item in reported:
                tallies[f"{kind}: precision"].add(
                    any(names_match(item, name) for name in known), f"{expected['site']}: {item!r} reported"
                )
        for proposition in context.get("valuePropositions") or []:
            tallies["value propositions are sentences"].add(
                is_site_sentence(proposition, site_text, site_headings), f"{expected['site']}: {proposition!r}"
            )
        preferred = (context.get("vocabularyRules") or {}).get("preferredTerms") or []
        for term in preferred:
            tallies["preferred terms are whole phrases"].add(
                is_whole_phrase(term, site_words, site_headings), f"{expected['site']}: {term!r}"
            )
        for term in expected["preferredTerms"]:
            tallies["expected preferred terms: recall"].add(
                any(term.lower() == found.lower() for found in preferred),
                f"{expected['site']}: {term!r} not among {preferred}",
            )
        overall = float((context.get("confidence") or {}).get("overall") or 0.0)
        confidences.append((expected["site"], expected["richness"], overall))
        if verbose:
            print(f"--- {expected['site']} ({expected['richness']}, confidence {overall:.2f})")
            print(f"    palette {palette}")
            print(f"    audience {audience!r}")
            print(f"    awards {proof.get('awards')} press {proof.get('pressMentions')}")
            print(f"    propositions {context.get('valuePropositions')}")
            print(f"    preferred {preferred}")
    for first in confidences:
        for second in confidences:
            if RICHNESS[first[1]] > RICHNESS[second[1]]:
                tallies["confidence ordering (pairs)"].add(
                    first[2] > second[2],
                    f"{first[0]} ({first[1]}, {first[2]:.2f}) not above {second[0]} ({second[1]}, {second[2]:.2f})",
                )
    print(f"sites: {len(confidences)}")
    for name, tally in tallies.items():
        print(tally.line(name))
    for role, values in distances.items():
        if values:
            print(f"mean dE2000 {role}: {sum(values) / len(values):.1f}")
    print("confidence: " + ", ".join(f"{site} {value:.2f}" for site, _, value in confidences))
    print("misses:")
    for name, tally in tallies.items():
        for miss in tally.misses:
            print(f"  {name}: {miss}")


if __name__ == "__main__":
    main(verbose="--verbose" in sys.argv)
