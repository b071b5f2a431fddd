"""The builtin image model: a deterministic brand-graphic and typographic renderer on Pillow.

From the prompt it picks a layout (quote, statistic, list, announcement or headline), the phrase to set and
the words to emphasise; from the brand runtime the palette, the heading and body fonts and the logo. The
background is the reference image (cover-cropped under a 40 % darkening layer) or a palette gradient with
geometric accents. Rendering calls `checkpoint` between stages so a cancelled or timed-out job stops early.
"""

from __future__ import annotations

import hashlib
import io
import re
from collections.abc import Callable
from dataclasses import dataclass, field
from functools import lru_cache
from pathlib import Path
from typing import Any, Literal

from PIL import Image, ImageDraw, ImageFont, ImageOps

from toolhost.providers.text import analysis

Layout = Literal["quote", "stat", "list", "announcement", "headline"]
FontRole = Literal["heading", "body"]
Rgb = tuple[int, int, int]
FontType = ImageFont.FreeTypeFont | ImageFont.ImageFont

SIZES: dict[str, tuple[int, int]] = {
    "16:9": (1920, 1080),
    "9:16": (1080, 1920),
    "1:1": (1080, 1080),
    "4:3": (1440, 1080),
    "3:4": (1080, 1440),
}
DEFAULT_PALETTE: dict[str, str] = {
    "primary": "#1E3A8A",
    "secondary": "#0F172A",
    "accent": "#F59E0B",
}
# Reference images larger than this are refused before decoding (decompression bombs).
MAX_SOURCE_PIXELS = 40_000_000
FONT_DIRECTORIES = (
    Path("/usr/share/fonts"),
    Path("/usr/local/share/fonts"),
    Path.home() / ".fonts",
)
SERIF_HINTS = ("serif", "georgia", "times", "playfair", "merriweather", "lora", "garamond", "baskerville", "didot")
MONO_HINTS = ("mono", "code", "courier", "consolas")
CONDENSED_HINTS = ("condensed", "narrow", "oswald", "bebas", "anton", "league gothic")
DIRECTIVE = re.compile(
    r"^\s*(?:please\s+)?(?:create|generate|make|design|draw|render|produce|build)\s+"
    r"(?:me\s+)?(?:an?\s+|the\s+)?(?:[\w-]+\s+){0,3}?"
    r"(?:image|graphic|poster|banner|visual|picture|card|thumbnail|cover|post|illustration)s?"
    r"(?:\s+(?:of|for|about|announcing|showing|that says|saying|with|featuring|on))?\s*[:,-]?\s*",
    re.IGNORECASE,
)
QUOTED = re.compile(r"[\"“«]([^\"”»]{3,200})[\"”»]")
FIGURE = re.compile(r"(?<![\w.])([$€£]?\d[\d,.]*\s?(?:%|x|k|m|bn|million|billion|percent)?)(?![\w])", re.IGNORECASE)
LIST_MARKERS = re.compile(r"\b(?:steps?|tips|ways|reasons|lessons|rules|mistakes|checklist|how to)\b", re.IGNORECASE)
ANNOUNCE_MARKERS = re.compile(
    r"\b(?:launch(?:es|ing)?|announc\w*|introduc\w*|new|now available|coming soon|release[sd]?|event|webinar)\b",
    re.IGNORECASE,
)
QUOTE_MARKERS = re.compile(r"\b(?:quote|testimonial|said|says)\b", re.IGNORECASE)


class RenderCancelled(Exception):
    """Raised by a checkpoint: the job was cancelled or ran out of time; partial output is discarded."""


@dataclass(frozen=True, slots=True)
class Composition:
    """What the prompt asks for: the layout, the main phrase, supporting lines and emphasised words."""

    layout: Layout
    headline: str
    supporting: list[str]
    emphasis: frozenset[str]
    figure: str | None = None
    badge: str | None = None


@dataclass(frozen=True, slots=True)
class BrandLook:
    """The brand runtime's visual layer, resolved to colours and font files."""

    primary: Rgb
    secondary: Rgb
    accent: Rgb
    heading_font: str | None
    body_font: str | None
    name: str | None = None
    logo: Image.Image | None = field(default=None, compare=False)


def hex_to_rgb(value: Any, fallback: str) -> Rgb:
    """`#rrggbb` / `#rgb` as an RGB triple; anything else is the fallback colour."""
    text = value.strip().lstrip("#") if isinstance(value, str) else ""
    if len(text) == 3:
        text = "".join(character * 2 for character in text)
    if len(text) != 6 or not re.fullmatch(r"[0-9a-fA-F]{6}", text):
        text = fallback.lstrip("#")
    return (int(text[0:2], 16), int(text[2:4], 16), int(text[4:6], 16))


def luminance(color: Rgb) -> float:
    """WCAG relative luminance."""

    def channel(value: int) -> float:
        scaled = value / 255
        return scaled / 12.92 if scaled <= 0.03928 else ((scaled + 0.055) / 1.055) ** 2.4

    red, green, blue = (channel(value) for value in color)
    return 0.2126 * red + 0.7152 * green + 0.0722 * blue


def contrast(first: Rgb, second: Rgb) -> float:
    """WCAG contrast ratio of two colours."""
    lighter, darker = sorted((luminance(first), luminance(second)), reverse=True)
    return (lighter + 0.05) / (darker + 0.05)


def mix(first: Rgb, second: Rgb, amount: float) -> Rgb:
    """`amount` of the way from the first colour to the second."""
    return (
        round(first[0] + (second[0] - first[0]) * amount),
        round(first[1] + (second[1] - first[1]) * amount),
        round(first[2] + (second[2] - first[2]) * amount),
    )


def brand_look(runtime: dict[str, Any] | None, logo: Image.Image | None = None) -> BrandLook:
    """The palette and fonts of a brand runtime (get_brand_runtime's payload); toolhost's defaults without one."""
    visual = (runtime or {}).get("visual") or {}
    palette = visual.get("colorPalette") or {}
    typography = visual.get("typography") or {}
    primary = hex_to_rgb(palette.get("primary"), DEFAULT_PALETTE["primary"])
    # The gradient runs from the primary to the secondary colour, or to a deep shade of the primary (a light
    # `background` colour would wash the text out).
    secondary = hex_to_rgb(palette.get("secondary"), "#{:02x}{:02x}{:02x}".format(*mix(primary, (0, 0, 0), 0.55)))
    accent = hex_to_rgb(palette.get("accent"), DEFAULT_PALETTE["accent"])
    return BrandLook(
        primary=primary,
        secondary=secondary,
        accent=accent,
        heading_font=typography.get("headingFont") if isinstance(typography.get("headingFont"), str) else None,
        body_font=typography.get("bodyFont") if isinstance(typography.get("bodyFont"), str) else None,
        name=(runtime or {}).get("name"),
        logo=logo,
    )


def _words(text: str) -> list[str]:
    return re.findall(r"[\w'’$€£%.,-]+", text)


def _clean(text: str) -> str:
    return re.sub(r"\s+", " ", text).strip(" .,:;-")


def _shorten(text: str, max_words: int) -> str:
    words = text.split()
    return " ".join(words[:max_words]) if len(words) > max_words else text


def compose(prompt: str) -> Composition:
    """Reads the layout, phrases and emphasis out of a prompt (deterministic: same prompt, same result)."""
    quoted = QUOTED.search(prompt)
    body = DIRECTIVE.sub("", prompt, count=1).strip()
    sentences = [_clean(part) for part in re.split(r"(?<=[.!?])\s+|\n+|;\s*", body) if _clean(part)]
    if not sentences:
        sentences = [_clean(prompt) or "Untitled"]
    figure_match = FIGURE.search(body)
    figure = (
        figure_match.group(1).strip() if figure_match and any(ch.isdigit() for ch in figure_match.group(1)) else None
    )
    if quoted and (QUOTE_MARKERS.search(prompt) or len(quoted.group(1).split()) >= 4):
        layout: Layout = "quote"
        headline = _clean(quoted.group(1))
        supporting = [sentence for sentence in sentences if quoted.group(1) not in sentence][:1]
    elif LIST_MARKERS.search(body) and (re.search(r"(?:^|\n)\s*(?:\d+[.)]|[-*•])\s+", prompt) or "," in body):
        layout = "list"
        headline, supporting = _list_parts(prompt, body)
    elif figure is not None and len(figure.rstrip("%")) <= 12:
        layout = "stat"
        headline = _shorten(sentences[0], 14)
        supporting = sentences[1:2]
    elif ANNOUNCE_MARKERS.search(body):
        layout = "announcement"
        headline = _clean(quoted.group(1)) if quoted else _shorten(sentences[0], 10)
        supporting = [sentence for sentence in sentences[1:] if sentence != headline][:1]
    else:
        layout = "headline"
        headline = _clean(quoted.group(1)) if quoted else _shorten(sentences[0], 10)
        supporting = [sentence for sentence in sentences[1:] if sentence != headline][:1]
    badge = None
    if layout == "announcement":
        marker = ANNOUNCE_MARKERS.search(body)
        badge = (marker.group(0) if marker else "new").upper()
        if badge.startswith(("LAUNCH", "INTRODUC", "ANNOUNC")):
            badge = "NEW"
    return Composition(
        layout=layout,
        headline=headline[:160],
        supporting=[_shorten(line, 24)[:200] for line in supporting],
        emphasis=_emphasis(headline, body, figure),
        figure=figure if layout == "stat" else None,
        badge=badge,
    )


def _list_parts(prompt: str, body: str) -> tuple[str, list[str]]:
    items = [_clean(match) for match in re.findall(r"(?:^|\n)\s*(?:\d+[.)]|[-*•])\s+([^\n]+)", prompt) if _clean(match)]
    if items:
        title = _clean(re.split(r"\n", DIRECTIVE.sub("", prompt, count=1), maxsplit=1)[0])
        return _shorten(title, 10), [_shorten(item, 10) for item in items[:5]]
    title, _, rest = body.partition(":")
    if not rest:
        title, rest = re.split(r",", body, maxsplit=1)[0], body
        parts = [_clean(part) for part in re.split(r",|\band\b", rest)[1:]]
    else:
        parts = [_clean(part) for part in re.split(r",|\band\b", rest)]
    return _shorten(_clean(title), 10), [_shorten(part, 10) for part in parts if part][:5]


def _emphasis(headline: str, body: str, figure: str | None) -> frozenset[str]:
    """Up to three headline words to set in the accent colour: figures, then the prompt's most repeated terms."""
    candidates = [word for word in _words(headline) if word.strip(".,").lower() not in analysis.STOPWORDS]
    counts: dict[str, int] = {}
    for word in _words(body.lower()):
        key = word.strip(".,")
        if key and key not in analysis.STOPWORDS:
            counts[key] = counts.get(key, 0) + 1
    chosen: list[str] = []
    for word in candidates:
        key = word.strip(".,").lower()
        if any(character.isdigit() for character in key) or (figure and key in figure.lower()):
            chosen.append(key)
    ranked = sorted(
        {word.strip(".,").lower() for word in candidates},
        key=lambda key: (-counts.get(key, 0), -len(key), key),
    )
    for key in ranked:
        if len(chosen) >= 3:
            break
        if key not in chosen and len(key) > 3:
            chosen.append(key)
    return frozenset(chosen[:3])


@lru_cache(maxsize=1)
def _installed_fonts() -> dict[str, Path]:
    fonts: dict[str, Path] = {}
    for directory in FONT_DIRECTORIES:
        if directory.is_dir():
            for path in sorted(directory.rglob("*.[ot]tf")):
                fonts.setdefault(path.stem.lower().replace(" ", "").replace("_", ""), path)
    return fonts


def font_file(family: str | None, *, bold: bool) -> Path | None:
    """The installed file closest to a brand font family: itself when installed, else a DejaVu of its kind."""
    fonts = _installed_fonts()
    name = (family or "").lower()
    compact = re.sub(r"[^a-z0-9]", "", name)
    if compact:
        for candidate in ((f"{compact}-bold", f"{compact}bold") if bold else ()) + (f"{compact}-regular", compact):
            if candidate in fonts:
                return fonts[candidate]
    if any(hint in name for hint in MONO_HINTS):
        base = "dejavusansmono"
    elif any(hint in name for hint in CONDENSED_HINTS):
        base = "dejavusanscondensed"
    elif any(hint in name for hint in SERIF_HINTS) and "sans" not in name:
        base = "dejavuserif"
    else:
        base = "dejavusans"
    return fonts.get(f"{base}-bold" if bold else base) or fonts.get(base)


def load_font(family: str | None, size: int, *, bold: bool) -> FontType:
    """A font of the brand family (or its nearest installed kind) at a pixel size."""
    path = font_file(family, bold=bold)
    if path is not None:
        return ImageFont.truetype(str(path), size)
    return ImageFont.load_default(size=size)


def _gradient(size: tuple[int, int], start: Rgb, end: Rgb) -> Image.Image:
    vertical = Image.linear_gradient("L")
    # Half vertical, half horizontal: a diagonal ramp from the top-left corner to the bottom-right one.
    mask = Image.blend(vertical, vertical.rotate(90), 0.5).resize(size)
    return Image.composite(Image.new("RGB", size, end), Image.new("RGB", size, start), mask)


def _accents(image: Image.Image, look: BrandLook, seed: bytes) -> None:
    """Geometric accents in the accent colour, placed from the prompt's hash (same prompt, same picture)."""
    width, height = image.size
    unit = min(width, height)
    overlay = Image.new("RGBA", image.size, (0, 0, 0, 0))
    draw = ImageDraw.Draw(overlay)
    ring = unit * (0.35 + seed[0] / 255 * 0.25)
    center_x = width * (0.75 + seed[1] / 255 * 0.3)
    center_y = height * (-0.05 + seed[2] / 255 * 0.3)
    draw.ellipse(
        (center_x - ring, center_y - ring, center_x + ring, center_y + ring),
        outline=(*look.accent, 230),
        width=max(6, unit // 90),
    )
    dot = unit * (0.08 + seed[3] / 255 * 0.06)
    dot_x, dot_y = width * (0.05 + seed[4] / 255 * 0.15), height * (0.8 + seed[5] / 255 * 0.15)
    draw.ellipse((dot_x - dot, dot_y - dot, dot_x + dot, dot_y + dot), fill=(*look.accent, 200))
    stripe = unit // 40
    for index in range(3):
        offset = index * stripe * 2.2
        draw.polygon(
            [
                (width - unit * 0.35 + offset, height),
                (width - unit * 0.35 + offset + stripe, height),
                (width + offset + stripe, height - unit * 0.35),
                (width + offset, height - unit * 0.35),
            ],
            fill=(*look.accent, 140),
        )
    image.paste(Image.alpha_composite(image.convert("RGBA"), overlay).convert("RGB"))


def open_reference(data: bytes) -> Image.Image:
    """A reference image's pixels, refusing decompression bombs and non-images (ValueError)."""
    try:
        source = Image.open(io.BytesIO(data))
        if source.width * source.height > MAX_SOURCE_PIXELS:
            raise ValueError("the reference image is too large")
        source.load()
    except (OSError, Image.DecompressionBombError) as error:
        raise ValueError("the reference image could not be read") from error
    return ImageOps.exif_transpose(source).convert("RGB")


def background(size: tuple[int, int], look: BrandLook, reference: Image.Image | None, seed: bytes) -> Image.Image:
    """The backdrop of a graphic: the reference cover-cropped under 40 % black, or the gradient with accents."""
    if reference is not None:
        cropped = ImageOps.fit(reference, size, method=Image.Resampling.LANCZOS)
        return Image.blend(cropped, Image.new("RGB", size, (0, 0, 0)), 0.4)
    image = _gradient(size, look.primary, look.secondary)
    _accents(image, look, seed)
    return image


def _wrap(draw: ImageDraw.ImageDraw, words: list[str], font: FontType, width: float) -> list[list[str]]:
    lines: list[list[str]] = []
    current: list[str] = []
    for word in words:
        trial = " ".join([*current, word])
        if current and draw.textlength(trial, font=font) > width:
            lines.append(current)
            current = [word]
        else:
            current.append(word)
    if current:
        lines.append(current)
    return lines


def _fit(
    draw: ImageDraw.ImageDraw,
    text: str,
    family: str | None,
    box: tuple[float, float],
    *,
    start: int,
    bold: bool,
    max_lines: int,
) -> tuple[FontType, list[list[str]], int]:
    """The largest size (down to a floor) at which the text wraps into the box within `max_lines`."""
    words = text.split() or [" "]
    size = start
    while True:
        font = load_font(family, size, bold=bold)
        lines = _wrap(draw, words, font, box[0])
        line_height = int(size * 1.18)
        if (len(lines) <= max_lines and line_height * len(lines) <= box[1]) or size <= 18:
            return font, lines[:max_lines], line_height
        size = int(size * 0.9)


def _draw_lines(
    draw: ImageDraw.ImageDraw,
    lines: list[list[str]],
    font: FontType,
    line_height: int,
    origin: tuple[float, float],
    *,
    color: Rgb,
    emphasis_color: Rgb,
    emphasis: frozenset[str],
    align: Literal["left", "center"],
    width: float,
) -> float:
    """Draws word by word so emphasised words take the accent colour; returns the y below the block."""
    x0, y = origin
    space = draw.textlength(" ", font=font)
    for line in lines:
        line_width = draw.textlength(" ".join(line), font=font)
        x = x0 + (width - line_width) / 2 if align == "center" else x0
        for word in line:
            fill = emphasis_color if word.strip(".,!?:;\"'“”").lower() in emphasis else color
            draw.text((x, y), word, font=font, fill=fill)
            x += draw.textlength(word, font=font) + space
        y += line_height
    return y


def render(
    prompt: str,
    *,
    aspect_ratio: str,
    look: BrandLook,
    reference: Image.Image | None = None,
    checkpoint: Callable[[], None] = lambda: None,
) -> bytes:
    """Renders the prompt as a PNG at the aspect ratio's catalogue size."""
    size = SIZES[aspect_ratio]
    width, height = size
    seed = hashlib.sha256(prompt.encode()).digest()
    composition = compose(prompt)
    checkpoint()
    image = background(size, look, reference, seed)
    checkpoint()
    draw = ImageDraw.Draw(image)
    text_color: Rgb = (
        (255, 255, 255)
        if reference is not None or luminance(mix(look.primary, look.secondary, 0.5)) < 0.4
        else (17, 17, 17)
    )
    backdrop = (0, 0, 0) if reference is not None else mix(look.primary, look.secondary, 0.5)
    emphasis_color = look.accent if contrast(look.accent, backdrop) >= 2.5 else mix(look.accent, text_color, 0.5)
    margin = round(min(width, height) * 0.08)
    box_width = width - 2 * margin
    unit = min(width, height)
    y = float(margin)
    align: Literal["left", "center"] = "center" if composition.layout in ("quote", "stat") else "left"
    if composition.badge:
        badge_font = load_font(look.body_font, unit // 30, bold=True)
        label_width = draw.textlength(composition.badge, font=badge_font)
        pad = unit // 60
        draw.rounded_rectangle(
            (margin, y, margin + label_width + 2 * pad, y + unit // 30 + 2 * pad), radius=pad, fill=look.accent
        )
        draw.text((margin + pad, y + pad * 0.8), composition.badge, font=badge_font, fill=backdrop)
        y += unit // 30 + 4 * pad
    if composition.layout == "quote":
        mark_font = load_font(look.heading_font, unit // 4, bold=True)
        draw.text((width / 2, y), "“", font=mark_font, fill=look.accent, anchor="mt")
        y += unit // 5
    if composition.layout == "stat" and composition.figure:
        figure_font, figure_lines, figure_height = _fit(
            draw,
            composition.figure,
            look.heading_font,
            (box_width, height * 0.3),
            start=unit // 3,
            bold=True,
            max_lines=1,
        )
        y = height * 0.18
        y = (
            _draw_lines(
                draw,
                figure_lines,
                figure_font,
                figure_height,
                (margin, y),
                color=look.accent,
                emphasis_color=look.accent,
                emphasis=frozenset(),
                align="center",
                width=box_width,
            )
            + unit * 0.03
        )
    checkpoint()
    if composition.layout == "list":
        title_box = (box_width, height * 0.25)
    elif composition.layout == "stat":
        title_box = (box_width, height * 0.75 - y)
    else:
        title_box = (box_width, height * 0.55 - (y - margin))
    heading_font, heading_lines, heading_height = _fit(
        draw,
        composition.headline,
        look.heading_font,
        title_box,
        start=unit // 9,
        bold=True,
        max_lines=5,
    )
    if composition.layout == "headline" and reference is None:
        y = max(y, height * 0.5 - heading_height * len(heading_lines) / 2 - unit * 0.05)
    y = _draw_lines(
        draw,
        heading_lines,
        heading_font,
        heading_height,
        (margin, y),
        color=text_color,
        emphasis_color=emphasis_color,
        emphasis=composition.emphasis,
        align=align,
        width=box_width,
    )
    if align == "left" and composition.layout != "list":
        draw.rectangle((margin, y + unit * 0.02, margin + unit * 0.12, y + unit * 0.02 + unit // 90), fill=look.accent)
        y += unit * 0.05
    checkpoint()
    body_size = unit // 24
    if composition.layout == "list":
        y += unit * 0.03
        for index, item in enumerate(composition.supporting, start=1):
            number_font = load_font(look.heading_font, body_size, bold=True)
            draw.text((margin, y), f"{index:02d}", font=number_font, fill=look.accent)
            item_font, item_lines, item_height = _fit(
                draw,
                item,
                look.body_font,
                (box_width - body_size * 2.2, body_size * 2.6),
                start=body_size,
                bold=False,
                max_lines=2,
            )
            y = (
                _draw_lines(
                    draw,
                    item_lines,
                    item_font,
                    item_height,
                    (margin + body_size * 2.2, y),
                    color=text_color,
                    emphasis_color=emphasis_color,
                    emphasis=frozenset(),
                    align="left",
                    width=box_width,
                )
                + unit * 0.02
            )
    else:
        for line in composition.supporting:
            body_font, body_lines, body_height = _fit(
                draw,
                line,
                look.body_font,
                (box_width, height * 0.2),
                start=body_size,
                bold=False,
                max_lines=3,
            )
            y = _draw_lines(
                draw,
                body_lines,
                body_font,
                body_height,
                (margin, y + unit * 0.02),
                color=text_color,
                emphasis_color=emphasis_color,
                emphasis=frozenset(),
                align=align,
                width=box_width,
            )
    checkpoint()
    _sign(image, draw, look, margin, text_color)
    output = io.BytesIO()
    image.save(output, format="PNG", optimize=False)
    return output.getvalue()


def _sign(image: Image.Image, draw: ImageDraw.ImageDraw, look: BrandLook, margin: int, color: Rgb) -> None:
    """The logo bottom-right when the profile has one, else the brand name as a small wordmark."""
    width, height = image.size
    unit = min(width, height)
    if look.logo is not None:
        logo = look.logo.convert("RGBA")
        logo.thumbnail((int(unit * 0.18), int(unit * 0.1)))
        image.paste(logo, (width - margin - logo.width, height - margin - logo.height), logo)
    elif look.name:
        font = load_font(look.heading_font, unit // 32, bold=True)
        draw.text((width - margin, height - margin), look.name[:60], font=font, fill=color, anchor="rb")
