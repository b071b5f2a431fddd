"""Colours: parsing, CIEDE2000 audits, WCAG contrast, design tokens (palette roles are in palette.py)."""

from __future__ import annotations

import json
from dataclasses import dataclass
from functools import lru_cache
from typing import Any

from toolhost.providers import graphics

PALETTE_SLOTS = (
    "primary",
    "secondary",
    "accent",
    "background",
    "success",
    "warning",
    "error",
    "text",
    "textSecondary",
)
TOKEN_NAMES = {slot: ("text-secondary" if slot == "textSecondary" else slot) for slot in PALETTE_SLOTS}


def to_hex(value: str) -> str | None:
    """A CSS colour (hex, name, rgb(), hsl(), ...) as opaque `#rrggbb`; None when it is not one."""
    text = value.strip()
    if not text or len(text) > 100:
        return None
    try:
        color = graphics.color(text)
    except ValueError:
        return None
    if color.alpha() < 0.5:
        return None  # transparent paint is not a brand colour
    srgb = color.convert("srgb").fit("srgb")
    srgb.set("alpha", 1)
    return srgb.to_string(hex=True)


@lru_cache(maxsize=4096)
def chroma(hex_color: str) -> float:
    """Colourfulness (OKLCh chroma); near 0 for whites, greys and blacks."""
    return float(graphics.color(hex_color).convert("oklch").get("chroma"))


@lru_cache(maxsize=4096)
def lightness(hex_color: str) -> float:
    """Perceptual lightness 0-1 (OKLCh)."""
    return float(graphics.color(hex_color).convert("oklch").get("lightness"))


def delta_e(first: str, second: str) -> float:
    """CIEDE2000 distance in CIELAB (D65)."""
    return float(graphics.color(first).delta_e(second, method="2000"))


def palette_colors(palette: dict[str, Any]) -> dict[str, str]:
    """The slots of a colorPalette that hold a `#` hex colour."""
    result = {}
    for slot in PALETTE_SLOTS:
        value = palette.get(slot)
        if isinstance(value, str) and value.strip().startswith("#"):
            normalized = to_hex(value)
            if normalized:
                result[slot] = normalized
    return result


@dataclass(frozen=True, slots=True)
class ColorMatch:
    """One audited colour: the nearest palette colour, its slot, the CIEDE2000 distance and the verdict."""

    color: str
    closest_brand_color: str
    closest_brand_slot: str
    delta_e: float
    passed: bool


@dataclass(frozen=True, slots=True)
class ContrastPair:
    """The WCAG contrast of a foreground on a background, and whether it meets AA and AAA."""

    foreground: str
    background: str
    ratio: float
    aa: bool
    aaa: bool


@dataclass(frozen=True, slots=True)
class ColorAudit:
    """audit_brand_colors' result: each colour's match, the share that passed (0-100), the contrast pairs."""

    entries: list[ColorMatch]
    overall_score: int
    passed: bool
    contrast: list[ContrastPair]


def audit(content_colors: list[str], palette: dict[str, Any], threshold: float) -> ColorAudit:
    """The nearest brand colour per input, pass per threshold, and the palette's contrast."""
    brand = palette_colors(palette)
    entries = []
    for raw in content_colors:
        color = to_hex(raw) or raw
        slot, distance = min(((name, delta_e(color, value)) for name, value in brand.items()), key=lambda x: x[1])
        entries.append(ColorMatch(raw, brand[slot], slot, round(distance, 2), distance <= threshold))
    passed = sum(1 for entry in entries if entry.passed)
    score = round(100 * passed / len(entries)) if entries else 0
    return ColorAudit(entries=entries, overall_score=score, passed=score >= 80, contrast=contrast_pairs(brand))


def contrast_pairs(brand: dict[str, str]) -> list[ContrastPair]:
    """WCAG contrast of the palette's text colours on its background (and of white/black on primary)."""
    pairs: list[tuple[str, str]] = []
    background = brand.get("background", "#ffffff")
    for foreground in ("text", "textSecondary", "primary", "accent"):
        if foreground in brand:
            pairs.append((brand[foreground], background))
    if "primary" in brand:
        on_primary = (
            "#ffffff"
            if graphics.contrast("#ffffff", brand["primary"]) >= graphics.contrast("#000000", brand["primary"])
            else "#000000"
        )
        pairs.append((on_primary, brand["primary"]))
    result = []
    for foreground, back in dict.fromkeys(pairs):
        ratio = graphics.contrast(foreground, back)
        result.append(ContrastPair(foreground, back, round(ratio, 2), ratio >= 4.5, ratio >= 7.0))
    return result


def export_tokens(fmt: str, palette: dict[str, Any], typography: dict[str, Any]) -> str:
    """The palette and fonts as css, tailwind, figma or dtcg tokens, one naming across formats."""
    colors = {TOKEN_NAMES[slot]: value for slot, value in palette_colors(palette).items()}
    fonts = {
        name: str(typography[key]).strip()
        for name, key in (("heading", "headingFont"), ("body", "bodyFont"))
        if isinstance(typography.get(key), str) and str(typography[key]).strip()
    }
    if fmt == "css":
        lines = [f"  --brand-{name}: {value};" for name, value in colors.items()]
        lines += [f"  --brand-font-{name}: {_css_font(value)};" for name, value in fonts.items()]
        return ":root {\n" + "\n".join(lines) + "\n}\n"
    if fmt == "tailwind":
        theme: dict[str, Any] = {"colors": {f"brand-{name}": value for name, value in colors.items()}}
        theme["fontFamily"] = {f"brand-{name}": [value] for name, value in fonts.items()}
        return json.dumps({"theme": {"extend": theme}}, indent=2)
    if fmt == "figma":
        figma: dict[str, Any] = {"color": {name: {"value": value, "type": "color"} for name, value in colors.items()}}
        figma["fontFamily"] = {name: {"value": value, "type": "fontFamilies"} for name, value in fonts.items()}
        return json.dumps(figma, indent=2)
    dtcg: dict[str, Any] = {"color": {name: {"$type": "color", "$value": value} for name, value in colors.items()}}
    dtcg["fontFamily"] = {name: {"$type": "fontFamily", "$value": [value]} for name, value in fonts.items()}
    return json.dumps({"brand": dtcg}, indent=2)


def _css_font(family: str) -> str:
    cleaned = family.replace('"', "").replace("\\", "").replace(";", "").replace("}", "")
    generic = {"serif", "sans-serif", "monospace", "cursive", "fantasy", "system-ui"}
    return cleaned if cleaned.lower() in generic else f'"{cleaned}"'
