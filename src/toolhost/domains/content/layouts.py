"""The slide layouts (CATALOG.md §9): the one table of slide layouts, the fonts that set them, and the line
measurement the built-in carousel renderer sets slides by. Quality's visual gate predicts from the same table,
so a prediction matches the slide; content owns it because content renders the slides.

Everything here is pure (no database, no I/O beyond loading the font that ships with Pillow).
"""

from __future__ import annotations

import math
import re
from dataclasses import dataclass
from functools import lru_cache
from typing import Any, Literal

from PIL import ImageFont

CANVAS_WIDTH = 1080
CANVAS_HEIGHT = 1350

# The catalogue's fallback when a font cannot be loaded: every glyph is this many font sizes wide.
FALLBACK_GLYPH_WIDTH = 0.55

VisualStyle = Literal["dark-cinematic", "clean-editorial", "bold-authority"]
VISUAL_STYLES: tuple[str, ...] = VisualStyle.__args__  # type: ignore[attr-defined]

# generate_carousel / create_carousel `style` -> the visual style its slides are typeset in (CATALOG.md §2).
VISUAL_STYLE_OF_CAROUSEL_STYLE: dict[str, VisualStyle] = {
    "minimal": "clean-editorial",
    "professional": "clean-editorial",
    "bold": "bold-authority",
    "hormozi": "bold-authority",
    "playful": "dark-cinematic",
}


@dataclass(frozen=True, slots=True)
class FieldSpec:
    """One text field of a layout: its font size, the width it wraps in, and how many lines it may take."""

    font_size: int
    width_px: int
    expected_lines: int
    max_lines: int
    single_line: bool = False
    uppercase: bool = False

    def as_constraints(self) -> dict[str, Any]:
        """visual_gate_constraints' shape of this field (JSON, its optional keys present only when true)."""
        shown: dict[str, Any] = {
            "fontSize": self.font_size,
            "effectiveWidthPx": self.width_px,
            "maxLines": self.max_lines,
            "expectedLines": self.expected_lines,
        }
        if self.single_line:
            shown["singleLine"] = True
        if self.uppercase:
            shown["uppercase"] = True
        return shown


def _field(size: int, width: int, expected: int, maximum: int, *flags: str) -> FieldSpec:
    return FieldSpec(size, width, expected, maximum, single_line="single" in flags, uppercase="uppercase" in flags)


# CATALOG.md §9 "Visual gate": field: size px / width px / expected lines / max lines [flags].
LAYOUTS: dict[str, dict[str, FieldSpec]] = {
    "authority-statement": {
        "headline": _field(86, 920, 2, 3, "uppercase"),
        "subtitle": _field(28, 920, 2, 3),
    },
    "authority-cta": {
        "headline": _field(58, 920, 2, 3),
        "subtitle": _field(36, 920, 2, 2),
        "ctaButton": _field(20, 400, 1, 1, "single"),
        "url": _field(26, 920, 1, 1, "single"),
        "footer": _field(16, 920, 1, 2),
    },
    "editorial-content": {
        "title": _field(48, 968, 2, 3),
        "body": _field(23, 968, 3, 5),
        "bullet": _field(22, 944, 1, 2),
        "footnote": _field(17, 968, 1, 2),
    },
    "editorial-cta": {
        "title": _field(58, 920, 2, 3),
        "accentWord": _field(36, 920, 1, 2),
        "ctaText": _field(20, 400, 1, 1, "single"),
        "ctaUrl": _field(26, 920, 1, 1, "single"),
        "footnote": _field(16, 920, 1, 2),
    },
    "cinematic-hook": {
        "label": _field(18, 968, 1, 1, "single", "uppercase"),
        "headline": _field(72, 968, 2, 3),
        "accent": _field(56, 968, 1, 2),
        "cta": _field(17, 360, 1, 1, "single"),
    },
    "cinematic-content": {
        "label": _field(16, 968, 1, 1, "single", "uppercase"),
        "headline": _field(52, 968, 2, 3),
        "subtitle": _field(24, 968, 3, 4),
    },
    "cinematic-cta": {
        "headline": _field(58, 920, 2, 3),
        "accent": _field(36, 920, 1, 2),
        "cta": _field(20, 400, 1, 1, "single"),
        "subtitle": _field(18, 920, 1, 2),
    },
}

# Which slide key fills which layout field (CATALOG.md §9); slide keys not named here are not rendered.
FIELD_SOURCES: dict[str, dict[str, str]] = {
    "cinematic-hook": {"label": "visualDirection", "headline": "headline", "accent": "body"},
    "cinematic-content": {"label": "visualDirection", "headline": "headline", "subtitle": "body"},
    "cinematic-cta": {"headline": "headline", "accent": "body", "subtitle": "footnote"},
    "editorial-content": {"title": "headline", "body": "body"},  # bullet and footnote: slide_fields
    "editorial-cta": {"title": "headline", "accentWord": "accentWord", "footnote": "footnote"},
    "authority-statement": {"headline": "headline", "subtitle": "body"},
    "authority-cta": {"headline": "headline", "subtitle": "body", "footer": "footnote"},
}

CTA_LAYOUT_OF_STYLE: dict[str, str] = {
    "dark-cinematic": "cinematic-cta",
    "bold-authority": "authority-cta",
    "clean-editorial": "editorial-cta",
}

MAX_BULLETS = 3
BULLET_SENTENCE_MIN_CHARS = 10  # shorter sentences of a body are not turned into bullets


def layout_for(slide: dict[str, Any], *, position: int, count: int, visual_style: str) -> str:
    """The layout a slide renders in: its type first, then its place in the deck, then the style.

    position is 0-based; count is the number of slides in the deck.
    """
    slide_type = str(slide.get("type") or "").strip().lower()
    is_first = position == 0
    if slide_type == "hook" or (is_first and visual_style == "dark-cinematic"):
        return "cinematic-hook"
    if slide_type == "cta" or position == count - 1:
        return CTA_LAYOUT_OF_STYLE.get(visual_style, "editorial-cta")
    if slide_type == "authority" or visual_style == "bold-authority":
        return "authority-statement"
    if visual_style == "dark-cinematic":
        return "cinematic-content"
    return "editorial-content"


def _text(value: Any) -> str:
    return value.strip() if isinstance(value, str) else ""


def _sentences(text: str) -> list[str]:
    return [part.strip() for part in re.split(r"(?<=[.!?])\s+", text) if part.strip()]


def slide_fields(slide: dict[str, Any], layout: str) -> list[tuple[str, str]]:
    """(layout field, text) pairs of a slide in a layout, in drawing order; empty fields are left out.

    editorial-content draws up to three bullets: the slide's bullets, else the sentences of its body.
    """
    pairs = [(field, _text(slide.get(source))) for field, source in FIELD_SOURCES.get(layout, {}).items()]
    if layout == "editorial-content":
        bullets = slide.get("bullets")
        if isinstance(bullets, list) and bullets:
            chosen = [_text(item) for item in bullets]
        else:
            chosen = [part for part in _sentences(_text(slide.get("body"))) if len(part) > BULLET_SENTENCE_MIN_CHARS]
        pairs += [("bullet", item) for item in chosen[:MAX_BULLETS]]
        pairs.append(("footnote", _text(slide.get("footnote")) or _text(slide.get("visualDirection"))))
    return [(field, text) for field, text in pairs if text]


@lru_cache(maxsize=64)
def font(size: int) -> ImageFont.FreeTypeFont | None:
    """The renderer's font at a pixel size: the TrueType font that ships inside Pillow, or None when
    Pillow was built without FreeType (measurement then falls back to 0.55 x size per glyph)."""
    try:
        loaded = ImageFont.load_default(size=size)
    except (TypeError, OSError):  # Pillow < 10.1 takes no size
        return None
    return loaded if isinstance(loaded, ImageFont.FreeTypeFont) else None


def text_width(text: str, size: int) -> float:
    """Rendered width of one line of text in pixels."""
    if font(size) is None:
        return len(text) * size * FALLBACK_GLYPH_WIDTH
    return _measured_width(text, size)


# Wrapping measures each growing line word by word, and fitting wraps the same prefixes again at each step of its
# search (a ten-slide carousel and its visual check: thousands of FreeType layouts, most of them repeats).
@lru_cache(maxsize=16_384)
def _measured_width(text: str, size: int) -> float:
    loaded = font(size)
    assert loaded is not None  # text_width measures only where the font loads
    return float(loaded.getlength(text))


def wrap(text: str, spec: FieldSpec) -> list[str]:
    """Greedy word wrap with single spaces; a word wider than the line is broken into line-sized pieces
    (ceil(len / chars per line) lines, chars per line from the word's own average glyph width)."""
    shown = text.upper() if spec.uppercase else text
    lines: list[str] = []
    current = ""
    for word in shown.split():
        candidate = f"{current} {word}" if current else word
        if text_width(candidate, spec.font_size) <= spec.width_px:
            current = candidate
            continue
        if current:
            lines.append(current)
            current = ""
        if text_width(word, spec.font_size) <= spec.width_px:
            current = word
            continue
        glyph = text_width(word, spec.font_size) / len(word)
        per_line = max(1, math.floor(spec.width_px / glyph))
        pieces = [word[start : start + per_line] for start in range(0, len(word), per_line)]
        lines += pieces[:-1]
        current = pieces[-1]
    if current:
        lines.append(current)
    return lines


def line_count(text: str, spec: FieldSpec) -> int:
    """How many lines a text takes in a field."""
    return len(wrap(text, spec))


def fit(text: str, spec: FieldSpec, max_lines: int | None = None) -> str:
    """The longest prefix of text, cut at a word boundary, that fits the field's lines (its maximum unless
    given); text that already fits comes back unchanged. Used by composers to size slide text."""
    limit = 1 if spec.single_line else (max_lines or spec.max_lines)
    if line_count(text, spec) <= limit:
        return text
    words = text.split()
    low, high = 0, len(words)
    while low < high:  # the most words that fit; line count grows with the prefix
        middle = (low + high + 1) // 2
        if line_count(" ".join(words[:middle]), spec) <= limit:
            low = middle
        else:
            high = middle - 1
    return " ".join(words[:low]).rstrip(",;:-\u2013\u2014")


def fit_slides(slides: list[dict[str, Any]], *, visual_style: str, keep_first_headline: bool = False) -> None:
    """Shortens, in place and at word boundaries, every slide field that would take more lines than its
    layout allows, so the deck passes the visual gate; `keep_first_headline` leaves a caller's hook as
    written. Bullets drawn from a body's sentences are not re-cut: a fitted body keeps them short."""
    for index, slide in enumerate(slides):
        layout = layout_for(slide, position=index, count=len(slides), visual_style=visual_style)
        sources = dict(FIELD_SOURCES[layout])
        if layout == "editorial-content":
            sources["footnote"] = "footnote"
        for field, source in sources.items():
            if keep_first_headline and index == 0 and source == "headline":
                continue
            value = slide.get(source)
            if isinstance(value, str) and value.strip():
                slide[source] = fit(" ".join(value.split()), LAYOUTS[layout][field])
