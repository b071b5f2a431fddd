"""Colours: parsing, perceptual merging, role assignment, CIEDE2000 audits, WCAG contrast, design tokens."""

from __future__ import annotations

import json
from dataclasses import dataclass
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
MERGE_DISTANCE = 6.0  # CIEDE2000: closer colours are one brand colour in different shades of rounding


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


def chroma(hex_color: str) -> float:
    """Colourfulness (OKLCh chroma); near 0 for whites, greys and blacks."""
    return float(graphics.color(hex_color).convert("oklch").get("chroma"))


def lightness(hex_color: str) -> float:
    """Perceptual lightness 0-1 (OKLCh)."""
    return float(graphics.color(hex_color).convert("oklch").get("lightness"))


def delta_e(first: str, second: str) -> float:
    """CIEDE2000 distance in CIELAB (D65)."""
    return float(graphics.color(first).delta_e(second, method="2000"))


@dataclass
class WeightedColor:
    """A colour found on a site and how much weight the evidence gives it."""

    hex: str
    weight: float


def merge_colors(colors: list[WeightedColor]) -> list[WeightedColor]:
    """Near-duplicates merged (CIEDE2000 below MERGE_DISTANCE), heaviest first; the heavier shade is kept."""
    merged: list[WeightedColor] = []
    for color in sorted(colors, key=lambda item: -item.weight):
        for existing in merged:
            if delta_e(existing.hex, color.hex) < MERGE_DISTANCE:
                existing.weight += color.weight
                break
        else:
            merged.append(WeightedColor(color.hex, color.weight))
    return sorted(merged, key=lambda item: -item.weight)


def assign_roles(colors: list[WeightedColor], theme_color: str | None = None) -> dict[str, str]:
    """Palette roles from weighted colours: chromatic ones rank as primary/secondary/accent, neutrals as
    background and text by lightness; a theme-color meta tag is the strongest primary signal."""
    merged = merge_colors(colors)
    chromatic = [item.hex for item in merged if chroma(item.hex) >= 0.06]
    neutral = [item for item in merged if chroma(item.hex) < 0.06]
    if theme_color and chroma(theme_color) >= 0.06:
        chromatic = [theme_color] + [item for item in chromatic if delta_e(item, theme_color) >= MERGE_DISTANCE]
    palette: dict[str, str] = {}
    for slot, value in zip(("primary", "secondary", "accent"), chromatic, strict=False):
        palette[slot] = value
    light = [item for item in neutral if lightness(item.hex) >= 0.85]
    dark = [item for item in neutral if lightness(item.hex) <= 0.45]
    if light:
        palette["background"] = light[0].hex
    if dark:
        palette["text"] = dark[0].hex
        mid = [item for item in neutral if 0.45 < lightness(item.hex) < 0.85]
        if mid:
            palette["textSecondary"] = mid[0].hex
    for slot, hue_range in (("success", (120, 170)), ("warning", (40, 95)), ("error", (0, 30))):
        for value in chromatic[3:]:
            hue = float(graphics.color(value).convert("oklch").get("hue") or 0.0)
            if hue_range[0] <= hue <= hue_range[1] and value not in palette.values():
                palette[slot] = value
                break
    return palette


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


def audit(content_colors: list[str], palette: dict[str, Any], threshold: float) -> dict[str, Any]:
    """audit_brand_colors' payload: nearest brand colour per input, pass per threshold, palette contrast."""
    brand = palette_colors(palette)
    entries = []
    for raw in content_colors:
        color = to_hex(raw) or raw
        slot, distance = min(((name, delta_e(color, value)) for name, value in brand.items()), key=lambda x: x[1])
        entries.append(
            {
                "color": raw,
                "closestBrandColor": brand[slot],
                "closestBrandSlot": slot,
                "deltaE": round(distance, 2),
                "passed": distance <= threshold,
            }
        )
    passed = sum(1 for entry in entries if entry["passed"])
    score = round(100 * passed / len(entries)) if entries else 0
    return {
        "entries": entries,
        "overallScore": score,
        "passed": score >= 80,
        "contrast": contrast_pairs(brand),
    }


def contrast_pairs(brand: dict[str, str]) -> list[dict[str, Any]]:
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
        result.append(
            {
                "foreground": foreground,
                "background": back,
                "ratio": round(ratio, 2),
                "aa": ratio >= 4.5,
                "aaa": ratio >= 7.0,
            }
        )
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
