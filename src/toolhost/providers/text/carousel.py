"""Carousel templates of the built-in composer: slide text sized for the visual gate."""

from __future__ import annotations

import random
import re
from typing import TYPE_CHECKING, Any

from toolhost.providers.text.compose import FIGURE, clause, clip, sentence, sentences, upper_first

if TYPE_CHECKING:
    from toolhost.providers.text.base import CarouselRequest
    from toolhost.providers.text.material import Material

# The tightest layouts (authority-statement headlines at 86 px, upper-cased; single-line CTA buttons) hold
# about this much text; staying under keeps every slide inside its expected lines.
HEADLINE_CHARS = 34
SUBHEADLINE_CHARS = 70
BODY_CHARS = 150
CTA_CHARS = 28


def _headline(text: str) -> str:
    return clip(upper_first(clause(text)), HEADLINE_CHARS)


def _body(text: str) -> str:
    return clip(sentence(text), BODY_CHARS)


def _emphasis(text: str) -> list[str]:
    words = [word for word in re.findall(r"[A-Za-z0-9%$]+", text) if len(word) > 4 or FIGURE.search(word)]
    return sorted(words, key=lambda word: (-bool(FIGURE.search(word)), -len(word)))[:2]


def _points(m: Material) -> list[tuple[str, str]]:
    """(headline, body) pairs from the brand and the request, most relevant first; nothing invented."""
    points: list[tuple[str, str]] = []
    for value in m.brand.value_propositions:
        points.append((value, f"For {m.topic}: {clause(value)}"))
    for pillar in m.brand.messaging_pillars:
        points.append((pillar, f"{upper_first(clause(pillar))}, applied to {m.topic}"))
    for name, _ in m.brand.content_pillars:
        points.append((name, f"How {clause(name)} shapes {m.topic}"))
    for detail in m.details:
        points.append((detail, detail))
    if m.aspiration:
        points.append((m.aspiration, f"The goal: {clause(m.aspiration)}"))
    return list(dict.fromkeys(points))


def _generic(m: Material, count: int) -> list[tuple[str, str]]:
    steps = [
        ("Name the real problem", f"Write down where {m.topic} gets stuck today"),
        ("Pick one change", f"Choose the smallest change to {m.topic} you can make this week"),
        ("Make it repeatable", "Turn what worked into a checklist the whole team can use"),
        ("Measure what moved", "Compare before and after, and keep only what helped"),
        ("Share what you learned", "Tell your team what changed and why"),
        ("Review on a rhythm", f"Come back to {m.topic} on a fixed schedule"),
        ("Keep it simple", "Drop anything that adds work without adding results"),
        ("Ask for feedback", "Ask the people affected what still gets in the way"),
    ]
    return steps[:count]


def _fill(m: Material, count: int, rng: random.Random) -> list[tuple[str, str]]:
    points = _points(m)
    if len(points) < count:
        points += [step for step in _generic(m, count) if step not in points]
    return points[:count]


def _middle(request: CarouselRequest, m: Material, count: int, rng: random.Random) -> list[dict[str, Any]]:
    template = request.template_id
    slides: list[dict[str, Any]] = []
    if template == "myth-vs-reality":
        pains = list(m.brand.audience_pains) or [f"{m.topic} needs more effort"]
        points = _fill(m, count, rng)
        for index in range(count):
            if index % 2 == 0:
                myth = pains[(index // 2) % len(pains)]
                slides.append({"headline": "Myth", "body": _body(f"{clause(myth)} is just how {m.topic} works")})
            else:
                head, body = points[index // 2]
                slides.append({"headline": "Reality", "body": _body(body), "emphasisWords": _emphasis(head)})
        return slides
    if template == "before-after":
        before = list(m.brand.audience_pains) or [f"{m.topic} done by hand, every time"]
        after = (
            list(m.brand.audience_aspirations)
            or [clause(value) for value in m.brand.value_propositions]
            or [f"{m.topic} with a clear, repeatable process"]
        )
        for index in range(count):
            if index % 2 == 0:
                slides.append({"headline": "Before", "body": _body(before[(index // 2) % len(before)])})
            else:
                slides.append({"headline": "After", "body": _body(after[(index // 2) % len(after)])})
        return slides
    if template == "data-stats":
        figures = [part for part in sentences(request.topic + ". " + request.constraints) if FIGURE.search(part)]
        figures += [
            point.claim + (f" ({point.evidence})" if point.evidence else "")
            for point in m.brand.proof_points
            if FIGURE.search(point.claim)
        ]
        figures = list(dict.fromkeys(figures))
        for index in range(count):
            if index < len(figures):
                figure = re.search(r"[$€£]?\d[\d.,]*\s*(?:%|x|k|m|hours?|days?|minutes?|weeks?)?", figures[index])
                headline = figure.group(0).strip() if figure else _headline(figures[index])
                slides.append(
                    {
                        "headline": clip(headline, HEADLINE_CHARS),
                        "body": _body(figures[index]),
                        "emphasisWords": [headline],
                    }
                )
            else:
                head, body = _fill(m, count, rng)[index]
                slides.append({"headline": _headline(head), "body": _body(body)})
        return slides
    if template == "quote-collection":
        quotes = list(m.brand.testimonials)
        for index in range(count):
            if index < len(quotes):
                slides.append(
                    {
                        "headline": "In their words",
                        "body": clip(f"\u201c{clause(quotes[index])}\u201d", BODY_CHARS),
                    }
                )
            else:
                head, body = _fill(m, count, rng)[index]
                slides.append({"headline": _headline(head), "body": _body(body)})
        return slides
    points = _fill(m, count, rng)
    for index, (head, body) in enumerate(points):
        headline = _headline(head)
        if template == "step-by-step":
            headline = clip(f"Step {index + 1}: {clause(head)}", HEADLINE_CHARS)
        elif template == "educational-series":
            headline = clip(f"Lesson {index + 1}: {clause(head)}", HEADLINE_CHARS)
        elif template == "story-arc":
            stage = [
                "The setup",
                "The struggle",
                "The turn",
                "The change",
                "The result",
                "The lesson",
                "What's next",
                "Why it matters",
            ]
            slides.append(
                {
                    "headline": stage[index % len(stage)],
                    "subheadline": clip(upper_first(clause(head)), SUBHEADLINE_CHARS),
                    "body": _body(body),
                }
            )
            continue
        slides.append({"headline": headline, "body": _body(body), "emphasisWords": _emphasis(head)})
    return slides


def build(request: CarouselRequest, topic: str, hook: str, m: Material, rng: random.Random) -> list[dict[str, Any]]:
    """The slides, numbered: the hook, the template's middle slides, then the CTA."""
    hook_parts = sentences(hook) or [hook]
    if request.hook:
        # A hook the caller wrote is used verbatim (CATALOG.md §2 generate_carousel).
        first: dict[str, Any] = {"headline": request.hook}
    else:
        first = {"headline": clip(hook_parts[0], HEADLINE_CHARS * 2)}
        if len(hook_parts) > 1:
            first["subheadline"] = clip(" ".join(hook_parts[1:]), SUBHEADLINE_CHARS)
    first["emphasisWords"] = _emphasis(hook_parts[0])
    middle = _middle(request, m, request.slide_count - 2, rng)
    cta_text = clip(
        request.cta_text
        or ("Follow for more" if request.platform in {"instagram", "tiktok"} else "Save and share this"),
        CTA_CHARS,
    )
    last: dict[str, Any] = {
        "headline": clip(f"Ready to improve {m.topic}?", HEADLINE_CHARS * 2),
        "ctaText": cta_text,
    }
    if request.cta_url:
        last["body"] = request.cta_url
    slides = [first, *middle, last]
    for number, slide in enumerate(slides, start=1):
        slide["slideNumber"] = number
    return [{"slideNumber": slide.pop("slideNumber"), **slide} for slide in slides]
