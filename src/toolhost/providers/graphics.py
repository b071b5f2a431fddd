"""The graphics toolkit every renderer draws with: colours, contrast, brand looks, fonts and backdrops.

Images, carousel slides and video frames (content and video domains) and the brand's colour audits share it,
so it sits below the domains. Colour maths is coloraide's, WCAG contrast included, in this one place.
"""

from __future__ import annotations

import io
import re
from dataclasses import dataclass, field
from functools import lru_cache
from pathlib import Path
from typing import TYPE_CHECKING, Any

from PIL import Image, ImageDraw, ImageFont, ImageOps

if TYPE_CHECKING:
    from coloraide import Color

Rgb = tuple[int, int, int]
FontType = ImageFont.FreeTypeFont | ImageFont.ImageFont

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


def color(value: str | Rgb) -> Color:
    """A coloraide colour of a CSS colour string or an 8-bit RGB triple.

    coloraide is imported on first use: it holds ~4 MB that an idle server does not need.
    """
    from coloraide import Color

    if isinstance(value, str):
        return Color(value)
    return Color("srgb", [channel / 255 for channel in value])


def luminance(value: str | Rgb) -> float:
    """WCAG relative luminance (0 black, 1 white)."""
    return float(color(value).luminance())


def contrast(first: str | Rgb, second: str | Rgb) -> float:
    """WCAG 2.1 contrast ratio of two colours (1 to 21, whichever is lighter)."""
    return float(color(first).contrast(color(second), method="wcag21"))


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
