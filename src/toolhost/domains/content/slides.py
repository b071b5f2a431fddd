"""The builtin carousel slide renderer: typesets one slide in the visual-gate layout it belongs to.

The line breaks come from the visual gate's own measurement (`layouts.wrap`), so the slide shows exactly the
lines visual_quality_check predicted. The brand's fonts set those lines: a line that is wider in the brand
font than the field's width shrinks that field's size instead of re-wrapping, and a block taller than the
canvas (1:1 is shorter than the gate's 1080x1350) scales every size down together, so the line count never
changes. Canvas, palette and logo follow the brand; everything is deterministic (same slide, same PNG).
"""

from __future__ import annotations

import io
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any
from urllib.parse import urlsplit

from PIL import Image, ImageDraw

from toolhost.domains.content import layouts
from toolhost.providers import graphics

SLIDE_SIZES: dict[str, tuple[int, int]] = {"1:1": (1080, 1080), "4:5": (1080, 1350), "9:16": (1080, 1920)}
LINE_SPACING = 1.2
FIELD_GAP = 0.6  # the space between two fields, in font sizes of the field below
HEADING_FIELDS = frozenset({"headline", "title"})
ACCENT_FIELDS = frozenset({"accent", "accentWord", "label"})
# The call-to-action fields of each closing layout: (button field, link field). The gate does not measure them
# (it only knows slide text), so they are cut to one line of their own spec before they are drawn.
CTA_FIELDS: dict[str, tuple[str, str | None]] = {
    "editorial-cta": ("ctaText", "ctaUrl"),
    "authority-cta": ("ctaButton", "url"),
    "cinematic-cta": ("cta", None),
}
PUNCTUATION = ".,!?:;\"'“”()"


@dataclass(frozen=True, slots=True)
class TypesetField:
    """One field of a slide as drawn: its layout spec and the lines it takes."""

    name: str
    spec: layouts.FieldSpec
    lines: list[str]


def typeset(
    slide: dict[str, Any], *, position: int, count: int, visual_style: str, cta_url: str | None = None
) -> tuple[str, list[TypesetField]]:
    """The layout of a slide and its fields' lines, exactly as the visual gate measures them."""
    layout = layouts.layout_for(slide, position=position, count=count, visual_style=visual_style)
    specs = layouts.LAYOUTS[layout]
    fields = [
        TypesetField(name=name, spec=specs[name], lines=layouts.wrap(text, specs[name]))
        for name, text in layouts.slide_fields(slide, layout)
    ]
    if layout in CTA_FIELDS:
        button, link = CTA_FIELDS[layout]
        cta_text = slide.get("ctaText")
        if isinstance(cta_text, str) and cta_text.strip():
            fitted = layouts.fit(" ".join(cta_text.split()), specs[button])
            if fitted:
                fields.append(TypesetField(name=button, spec=specs[button], lines=[fitted]))
        if link and cta_url:
            shown = cta_url.removeprefix("https://").removeprefix("http://").rstrip("/")
            fitted = layouts.fit(shown, specs[link]) or layouts.fit(urlsplit(cta_url).netloc, specs[link])
            if fitted:
                fields.append(TypesetField(name=link, spec=specs[link], lines=[fitted]))
    return layout, fields


def overflow(fields: list[TypesetField]) -> list[str]:
    """The fields that break their layout (more lines than allowed), as visual_quality_check would report."""
    problems = []
    for field in fields:
        allowed = 1 if field.spec.single_line else field.spec.max_lines
        if len(field.lines) > allowed:
            problems.append(f"{field.name} takes {len(field.lines)} lines, at most {allowed} fit")
    return problems


@dataclass(frozen=True, slots=True)
class Palette:
    """The colours of one visual style in a brand's palette."""

    top: graphics.Rgb
    bottom: graphics.Rgb
    text: graphics.Rgb
    accent: graphics.Rgb
    button_text: graphics.Rgb


def palette(look: graphics.BrandLook, visual_style: str) -> Palette:
    """clean-editorial: light page, primary text; bold-authority: the primary colour; dark-cinematic: night."""
    white, black = (255, 255, 255), (0, 0, 0)
    if visual_style == "clean-editorial":
        top, bottom = graphics.mix(look.primary, white, 0.94), graphics.mix(look.primary, white, 0.82)
    elif visual_style == "bold-authority":
        top, bottom = look.primary, look.secondary
    else:
        top, bottom = graphics.mix(look.secondary, black, 0.7), graphics.mix(look.primary, black, 0.8)
    backdrop = graphics.mix(top, bottom, 0.5)
    text = max(
        (graphics.mix(look.secondary, black, 0.5), white, (17, 17, 17)), key=lambda c: graphics.contrast(c, backdrop)
    )
    accent = look.accent if graphics.contrast(look.accent, backdrop) >= 2.5 else graphics.mix(look.accent, text, 0.6)
    button_text = max((white, (17, 17, 17)), key=lambda color: graphics.contrast(color, accent))
    return Palette(top=top, bottom=bottom, text=text, accent=accent, button_text=button_text)


def _background(size: tuple[int, int], colors: Palette) -> Image.Image:
    ramp = Image.linear_gradient("L").resize(size)
    return Image.composite(Image.new("RGB", size, colors.bottom), Image.new("RGB", size, colors.top), ramp)


def _family(look: graphics.BrandLook, field: str) -> tuple[str | None, bool]:
    return (look.heading_font, True) if field in HEADING_FIELDS else (look.body_font, field in ACCENT_FIELDS)


def _sizes(draw: ImageDraw.ImageDraw, fields: list[TypesetField], look: graphics.BrandLook) -> list[int]:
    """Each field's size: its spec's, shrunk until its widest gate line fits its width in the brand font."""
    sizes = []
    for field in fields:
        family, bold = _family(look, field.name)
        size = field.spec.font_size
        widest = max(draw.textlength(line, font=graphics.load_font(family, size, bold=bold)) for line in field.lines)
        if widest > field.spec.width_px:
            size = max(8, int(size * field.spec.width_px / widest))
        sizes.append(size)
    return sizes


def _block_height(fields: list[TypesetField], sizes: list[int]) -> float:
    height = 0.0
    for index, (field, size) in enumerate(zip(fields, sizes, strict=True)):
        if index:
            height += size * FIELD_GAP
        height += len(field.lines) * size * LINE_SPACING
    return height


def render(
    fields: list[TypesetField],
    *,
    aspect_ratio: str,
    look: graphics.BrandLook,
    visual_style: str,
    emphasis: frozenset[str] = frozenset(),
    checkpoint: Callable[[], None] = lambda: None,
) -> bytes:
    """The slide as a PNG: the fields' lines top to bottom, centred vertically, logo bottom-right."""
    size = SLIDE_SIZES[aspect_ratio]
    width, height = size
    colors = palette(look, visual_style)
    image = _background(size, colors)
    draw = ImageDraw.Draw(image)
    margin = round(width * 0.07)
    reserved_for_logo = round(min(width, height) * 0.12)
    checkpoint()
    sizes = _sizes(draw, fields, look)
    available = height - 2 * margin - reserved_for_logo
    block = _block_height(fields, sizes)
    if block > available:
        # Shorter canvases scale every field alike; the lines stay those the gate predicted.
        scale = available / block
        sizes = [max(8, int(value * scale)) for value in sizes]
        block = _block_height(fields, sizes)
    y = margin + max(0.0, (available - block) / 2)
    # One left edge for the whole slide: the widest field of the layout, centred on the canvas.
    column = (width - max(field.spec.width_px for field in fields)) / 2 if fields else margin
    if visual_style != "clean-editorial":
        draw.rectangle((0, 0, round(width * 0.015), height), fill=colors.accent)
    for index, (field, font_size) in enumerate(zip(fields, sizes, strict=True)):
        checkpoint()
        if index:
            y += font_size * FIELD_GAP
        family, bold = _family(look, field.name)
        font = graphics.load_font(family, font_size, bold=bold)
        left = column
        line_height = font_size * LINE_SPACING
        if field.name in ("ctaText", "ctaButton", "cta"):
            line_width = draw.textlength(field.lines[0], font=font)
            pad = font_size * 0.6
            draw.rounded_rectangle(
                (left, y - pad / 2, left + line_width + 2 * pad, y + line_height + pad / 2),
                radius=round(pad),
                fill=colors.accent,
            )
            draw.text((left + pad, y), field.lines[0], font=font, fill=colors.button_text)
            y += line_height + pad
            continue
        base = colors.accent if field.name in ACCENT_FIELDS else colors.text
        if field.name == "bullet":
            # The bullet's text keeps its measured width; the marker sits in the indent the layout leaves.
            radius = font_size * 0.18
            center_y = y + line_height / 2
            draw.ellipse((left, center_y - radius, left + 2 * radius, center_y + radius), fill=colors.accent)
            left += layouts.LAYOUTS["editorial-content"]["body"].width_px - field.spec.width_px
        space = draw.textlength(" ", font=font)
        for line in field.lines:
            x = left
            for word in line.split(" "):
                fill = colors.accent if word.strip(PUNCTUATION).lower() in emphasis else base
                draw.text((x, y), word, font=font, fill=fill)
                x += draw.textlength(word, font=font) + space
            y += line_height
    checkpoint()
    _sign(image, draw, look, margin, colors.text)
    output = io.BytesIO()
    image.save(output, format="PNG")
    return output.getvalue()


def _sign(
    image: Image.Image, draw: ImageDraw.ImageDraw, look: graphics.BrandLook, margin: int, color: graphics.Rgb
) -> None:
    """The logo bottom-right, or the brand name as a small wordmark there when the profile has no logo."""
    width, height = image.size
    unit = min(width, height)
    if look.logo is not None:
        logo = look.logo.convert("RGBA")
        logo.thumbnail((int(unit * 0.18), int(unit * 0.09)))
        image.paste(logo, (width - margin - logo.width, height - margin - logo.height), logo)
    elif look.name:
        font = graphics.load_font(look.heading_font, unit // 36, bold=True)
        draw.text((width - margin, height - margin), look.name[:60], font=font, fill=color, anchor="rb")


def style_prefix(runtime: dict[str, Any] | None, *, has_logo: bool) -> str:
    """An image provider's prompt prefix: up to 5 palette colours, a logo note, and the top 3 tone words."""
    visual = (runtime or {}).get("visual") or {}
    colors = [value for value in (visual.get("colorPalette") or {}).values() if isinstance(value, str)][:5]
    tone = [word for word in ((runtime or {}).get("voice") or {}).get("tone") or [] if isinstance(word, str)][:3]
    parts = []
    if colors:
        parts.append("Brand colours " + ", ".join(colors))
    parts.append("leave the bottom-right corner clear for the logo" if has_logo else "no logo")
    if tone:
        parts.append("tone " + ", ".join(tone))
    return "; ".join(parts) + "."
