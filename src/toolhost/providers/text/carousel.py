"""Carousel slides of the built-in writer: on the topic, one whole sentence per body, steps that are steps.

Headlines are labels the template names ("Step 2", "Myth", "The numbers") or short facts; bodies are
sentences from the brief and the brand, each short enough for the tightest layout of the visual gate.
"""

from __future__ import annotations

import random
import re
from typing import TYPE_CHECKING, Any

from toolhost.providers.text import phrasing
from toolhost.providers.text.compose import FIGURE, clip, cut_at_sentence, sentences

if TYPE_CHECKING:
    from toolhost.providers.text.base import CarouselRequest
    from toolhost.providers.text.builtin import Draft

# The tightest layouts (authority-statement headlines at 86 px, upper-cased; single-line CTA buttons) hold
# about this much text; staying under keeps every slide inside its expected lines.
HEADLINE_CHARS = 34
SUBHEADLINE_CHARS = 70
BODY_CHARS = 150
CTA_CHARS = 28
LABELS = {
    "value": "What you get",
    "proof": "The numbers",
    "pain": "The problem",
    "goal": "The goal",
    "testimonial": "In their words",
    "detail": "The details",
    "statement": "The short version",
    "step": "Try this",
}
STAGES = ("The setup", "The struggle", "The turn", "The change", "The result", "The lesson", "What's next", "Why")


def _body(text: str) -> str:
    return text if len(text) <= BODY_CHARS else cut_at_sentence(text, BODY_CHARS)


def _emphasis(text: str) -> list[str]:
    words = [word for word in re.findall(r"[A-Za-z0-9%$£]+", text) if len(word) > 4 or FIGURE.search(word)]
    return sorted(words, key=lambda word: (-bool(FIGURE.search(word)), -len(word)))[:2]


def _points(draft: Draft, hook: str) -> list[tuple[str, str]]:
    """(source, sentence) pairs on the topic: what the prompt said, then the brand's facts that bear on it;
    nothing the hook already says."""
    request = draft.brief
    points: list[tuple[str, str]] = []
    if request.statement:
        points.append(("statement", phrasing.sentence(request.statement)))
    for detail in request.details:
        text = phrasing.detail_sentence(detail, request.subject)
        if text:
            points.append(("detail", text))
    # A how-to is its steps (as many as it asked for): they come before the brand's facts, which follow.
    found = phrasing.steps(request, draft.brand, request.steps or 6)
    steps = [("step", step) for step in found or phrasing.routine_steps(request.steps or 6)]
    if request.wants_steps:
        points += steps
    stems = draft.stems
    ranked = phrasing.relevant(draft.facts, stems, sources=("value", "proof", "pain", "goal", "testimonial"), limit=8)
    points += [(fact.source, fact.text) for fact in ranked if len(fact.text) <= BODY_CHARS * 2]
    if not request.wants_steps:
        points += steps
    unique: list[tuple[str, str]] = []
    for source, text in points:
        if not phrasing.overlaps(text, hook) and not any(phrasing.overlaps(text, other) for _, other in unique):
            unique.append((source, text))
    return unique


MYTH_FRAMES = ("{pain}, and nothing can change that", "{pain}, and that is just how it is", "{pain}, whatever you do")


def _middle(request: CarouselRequest, draft: Draft, hook: str, count: int) -> list[dict[str, Any]]:
    template = request.template_id
    points = _points(draft, hook)
    by_source = {source: [text for kind, text in points if kind == source] for source in LABELS}
    if template == "step-by-step" and draft.brief.action == "tips":
        wanted = min(count, draft.brief.steps or count)
        steps = phrasing.steps(draft.brief, draft.brand, wanted) or phrasing.routine_steps(wanted)
        numbered: list[dict[str, Any]] = [
            {"headline": f"Step {number}", "body": _body(step), "emphasisWords": _emphasis(step)}
            for number, step in enumerate(steps, start=1)
        ]
        # Past the number of steps asked for, the topic's other points fill the slides, unnumbered.
        rest = [(source, text) for source, text in points if source != "step" and text not in steps]
        return numbered + [
            {"headline": LABELS[source], "body": _body(text)} for source, text in rest[: count - len(numbered)]
        ]
    if template in ("myth-vs-reality", "before-after"):
        # Pairs while the brand has pains to set against its answers; the rest are the topic's other points.
        pains = by_source["pain"]
        answers = (
            (by_source["value"] + by_source["proof"] + by_source["step"])
            if template == "myth-vs-reality"
            else (by_source["goal"] + by_source["value"] + by_source["step"])
        )
        first, second = ("Myth", "Reality") if template == "myth-vs-reality" else ("Before", "After")
        slides: list[dict[str, Any]] = []
        used: list[str] = []
        for pair in range(min(len(pains), len(answers), count // 2)):
            pain = pains[pair]
            if template == "myth-vs-reality":
                pain = phrasing.sentence(MYTH_FRAMES[pair % len(MYTH_FRAMES)].format(pain=phrasing.clause(pain)))
            slides.append({"headline": first, "body": _body(pain)})
            slides.append({"headline": second, "body": _body(answers[pair]), "emphasisWords": _emphasis(answers[pair])})
            used += [pains[pair], answers[pair]]
        rest = [(source, text) for source, text in points if text not in used]
        for source, text in rest[: count - len(slides)]:
            slides.append({"headline": LABELS[source], "body": _body(text)})
        return slides
    if template == "data-stats":
        figures = [text for _, text in points if FIGURE.search(text)]
        figures += [
            text
            for text in sentences(request.constraints)
            if FIGURE.search(text) and not text.lower().startswith("how to")
        ]
        figures = list(dict.fromkeys(figures))
        others = [(source, text) for source, text in points if text not in figures]
        slides = []
        for index in range(count):
            if index < len(figures):
                figure = re.search(r"[$€£]?\d[\d.,]*\s*(?:%|x|k|m|hours?|days?|minutes?|weeks?|g)?", figures[index])
                headline = figure.group(0).strip() if figure else LABELS["proof"]
                slides.append(
                    {
                        "headline": clip(headline, HEADLINE_CHARS),
                        "body": _body(figures[index]),
                        "emphasisWords": [headline],
                    }
                )
            else:
                source, text = others[(index - len(figures)) % len(others)]
                slides.append({"headline": LABELS[source], "body": _body(text)})
        return slides
    if template == "quote-collection":
        quotes = by_source["testimonial"]
        ordered = [("testimonial", text) for text in quotes] + [item for item in points if item[1] not in quotes]
        return [{"headline": LABELS[source], "body": _body(text)} for source, text in ordered[:count]]
    slides = []
    step_number = 0
    for index, (source, text) in enumerate(points[:count]):
        if template == "story-arc":
            slides.append({"headline": STAGES[index % len(STAGES)], "body": _body(text)})
        elif template == "educational-series":
            slides.append({"headline": f"Lesson {index + 1}", "body": _body(text), "emphasisWords": _emphasis(text)})
        else:
            step_number += source == "step"
            headline = f"Step {step_number}" if source == "step" and draft.brief.wants_steps else LABELS[source]
            slides.append({"headline": headline, "body": _body(text), "emphasisWords": _emphasis(text)})
    return slides


def build(request: CarouselRequest, draft: Draft, hook: str, rng: random.Random) -> list[dict[str, Any]]:
    """The slides, numbered: the hook, the template's middle slides, then the CTA."""
    hook_parts = sentences(hook) or [hook]
    if request.hook:
        # A hook the caller wrote is used verbatim (CATALOG.md §2 generate_carousel).
        first: dict[str, Any] = {"headline": request.hook}
    else:
        first = {"headline": hook_parts[-1] if len(hook_parts[0]) > HEADLINE_CHARS * 2 else hook_parts[0]}
        if len(hook_parts) > 1 and len(hook_parts[0]) <= HEADLINE_CHARS * 2:
            rest = " ".join(hook_parts[1:])
            if len(rest) <= SUBHEADLINE_CHARS:
                first["subheadline"] = rest
    first["emphasisWords"] = _emphasis(first["headline"])
    middle = _middle(request, draft, hook, request.slide_count - 2)
    cta_text = clip(
        request.cta_text
        or ("Follow for more" if request.platform in {"instagram", "tiktok"} else "Save and share this"),
        CTA_CHARS,
    )
    closing = phrasing.call_to_action(draft.brief, draft.sector, None, rng) or draft.brief.question
    last: dict[str, Any] = {
        "headline": closing if len(closing) <= HEADLINE_CHARS * 2 else "What do you think?",
        "ctaText": cta_text,
    }
    if request.cta_url:
        last["body"] = request.cta_url
    slides = [first, *middle, last]
    return [{"slideNumber": number, **slide} for number, slide in enumerate(slides, start=1)]
