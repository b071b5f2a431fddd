"""The builtin image model: a deterministic brand-graphic and typographic renderer on Pillow.

From the prompt its composition (`providers/frame_text.py`: the layout, the phrase to set and the words to
emphasise); from the brand runtime the palette, the heading and body fonts and the logo. The
background is the reference image (cover-cropped under a 40 % darkening layer) or a palette gradient with
geometric accents. Rendering calls `checkpoint` between stages so a cancelled or timed-out job stops early.
"""

from __future__ import annotations

import hashlib
import io
from collections.abc import Callable
from typing import Literal

from PIL import Image, ImageDraw

from toolhost.providers import frame_text, graphics
from toolhost.providers.graphics import BrandLook, FontType, Rgb

SIZES: dict[str, tuple[int, int]] = {
    "16:9": (1920, 1080),
    "9:16": (1080, 1920),
    "1:1": (1080, 1080),
    "4:3": (1440, 1080),
    "3:4": (1080, 1440),
}


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
        font = graphics.load_font(family, size, bold=bold)
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
    composition = frame_text.compose(prompt)
    checkpoint()
    image = graphics.background(size, look, reference, seed)
    checkpoint()
    draw = ImageDraw.Draw(image)
    text_color: Rgb = (
        (255, 255, 255)
        if reference is not None or graphics.luminance(graphics.mix(look.primary, look.secondary, 0.5)) < 0.4
        else (17, 17, 17)
    )
    backdrop = (0, 0, 0) if reference is not None else graphics.mix(look.primary, look.secondary, 0.5)
    emphasis_color = (
        look.accent if graphics.contrast(look.accent, backdrop) >= 2.5 else graphics.mix(look.accent, text_color, 0.5)
    )
    margin = round(min(width, height) * 0.08)
    box_width = width - 2 * margin
    unit = min(width, height)
    y = float(margin)
    align: Literal["left", "center"] = "center" if composition.layout in ("quote", "stat") else "left"
    if composition.badge:
        badge_font = graphics.load_font(look.body_font, unit // 30, bold=True)
        label_width = draw.textlength(composition.badge, font=badge_font)
        pad = unit // 60
        draw.rounded_rectangle(
            (margin, y, margin + label_width + 2 * pad, y + unit // 30 + 2 * pad), radius=pad, fill=look.accent
        )
        draw.text((margin + pad, y + pad * 0.8), composition.badge, font=badge_font, fill=backdrop)
        y += unit // 30 + 4 * pad
    if composition.layout == "quote":
        mark_font = graphics.load_font(look.heading_font, unit // 4, bold=True)
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
            number_font = graphics.load_font(look.heading_font, body_size, bold=True)
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
        font = graphics.load_font(look.heading_font, unit // 32, bold=True)
        draw.text((width - margin, height - margin), look.name[:60], font=font, fill=color, anchor="rb")
