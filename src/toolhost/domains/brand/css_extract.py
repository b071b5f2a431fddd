"""Reading a site's CSS with tinycss2: colours weighted by frequency and painted area, fonts, type scale."""

from __future__ import annotations

import re
from collections import Counter
from dataclasses import dataclass, field

import tinycss2
from tinycss2.ast import AtRule, Declaration, FunctionBlock, HashToken, IdentToken, Node, QualifiedRule

from toolhost.domains.brand.colors import PALETTE_SLOTS, WeightedColor, to_hex

# Painted area per property: a background covers more than a text colour, a border least.
PROPERTY_WEIGHT = {
    "background": 3.0,
    "background-color": 3.0,
    "color": 1.0,
    "fill": 1.5,
    "stroke": 0.5,
    "border-color": 0.5,
    "border": 0.5,
    "border-top": 0.3,
    "border-bottom": 0.3,
    "outline-color": 0.3,
    "box-shadow": 0.2,
    "text-decoration-color": 0.3,
    "accent-color": 2.0,
}
# Selectors that show the brand: buttons and calls to action, headers and heroes, links.
PROMINENT = re.compile(r"\b(?:btn|button|cta|primary|brand|hero|header|nav|banner|accent|highlight)\b|^a\b|\sa\b", re.I)
HEADING_SELECTOR = re.compile(r"(?:^|[\s,>+~])h[1-3]\b|\.(?:title|heading|headline|display)\b", re.I)
BODY_SELECTOR = re.compile(r"(?:^|[\s,])(?:body|html|p|:root)\b|\.(?:body|content|text)\b", re.I)
GENERIC_FAMILIES = {
    "serif",
    "sans-serif",
    "monospace",
    "cursive",
    "fantasy",
    "system-ui",
    "ui-sans-serif",
    "ui-serif",
    "ui-monospace",
    "inherit",
    "initial",
    "unset",
    "-apple-system",
    "blinkmacsystemfont",
    "emoji",
    "math",
    "revert",
}
NOT_COLORS = {"inherit", "initial", "unset", "revert", "transparent", "currentcolor", "none", "auto"}
SIZE_HEADINGS = re.compile(r"^\s*(h[1-6])\s*$", re.I)
VAR_REFERENCE = re.compile(r"var\(\s*(--[\w-]+)\s*(?:,\s*([^)]+))?\)")


@dataclass
class CssFindings:
    """Everything the stylesheets said about colour and type."""

    colors: list[WeightedColor] = field(default_factory=list)
    role_hints: dict[str, str] = field(default_factory=dict)
    heading_fonts: Counter[str] = field(default_factory=Counter)
    body_fonts: Counter[str] = field(default_factory=Counter)
    all_fonts: Counter[str] = field(default_factory=Counter)
    font_faces: set[str] = field(default_factory=set)
    weights: set[int] = field(default_factory=set)
    scale: dict[str, str] = field(default_factory=dict)
    rule_count: int = 0


def first_family(value: str) -> str | None:
    """The first non-generic family of a font-family value."""
    for part in value.split(","):
        family = part.strip().strip("\"'").strip()
        if family and family.lower() not in GENERIC_FAMILIES and not family.startswith("var("):
            return family[:100]
    return None


def _color_candidates(tokens: list[Node]) -> list[str]:
    found = []
    for token in tokens:
        if isinstance(token, HashToken):
            found.append("#" + token.value)
        elif isinstance(token, FunctionBlock) and token.lower_name in {
            "rgb",
            "rgba",
            "hsl",
            "hsla",
            "hwb",
            "lab",
            "lch",
            "oklab",
            "oklch",
            "color",
        }:
            found.append(tinycss2.serialize([token]))
        elif isinstance(token, IdentToken) and token.lower_value not in NOT_COLORS:
            found.append(token.value)
    return found


def _resolve_vars(value: str, variables: dict[str, str], depth: int = 0) -> str:
    if depth > 5 or "var(" not in value:
        return value

    def substitute(match: re.Match[str]) -> str:
        return variables.get(match.group(1), match.group(2) or "")

    return _resolve_vars(VAR_REFERENCE.sub(substitute, value), variables, depth + 1)


def _declarations(rule: QualifiedRule | AtRule) -> list[Declaration]:
    if rule.content is None:
        return []
    parsed = tinycss2.parse_blocks_contents(rule.content, skip_whitespace=True, skip_comments=True)
    return [item for item in parsed if isinstance(item, Declaration)]


def _rules(nodes: list[Node]) -> list[QualifiedRule | AtRule]:
    rules: list[QualifiedRule | AtRule] = []
    for node in nodes:
        if isinstance(node, QualifiedRule):
            rules.append(node)
        elif isinstance(node, AtRule):
            if node.lower_at_keyword in {"media", "supports", "layer", "container"} and node.content is not None:
                rules.extend(_rules(tinycss2.parse_rule_list(node.content, skip_whitespace=True, skip_comments=True)))
            elif node.lower_at_keyword == "font-face":
                rules.append(node)
    return rules


def read_css(sources: list[str], inline_styles: list[str], findings: CssFindings | None = None) -> CssFindings:
    """Colours and fonts from stylesheet texts and style="" attributes; custom properties are resolved."""
    findings = findings or CssFindings()
    parsed = [_rules(tinycss2.parse_stylesheet(source, skip_whitespace=True, skip_comments=True)) for source in sources]
    variables: dict[str, str] = {}
    for rules in parsed:
        for rule in rules:
            if isinstance(rule, QualifiedRule):
                for declaration in _declarations(rule):
                    if declaration.name.startswith("--"):
                        variables[declaration.name] = tinycss2.serialize(declaration.value).strip()
    for name, value in variables.items():
        color = to_hex(_resolve_vars(value, variables))
        if color is None:
            continue
        lowered = name.lower()
        for slot in PALETTE_SLOTS:
            if slot.lower() in lowered.replace("-", "") and slot not in findings.role_hints:
                findings.role_hints[slot] = color  # --color-primary says what the site calls primary
        if "brand" in lowered and "primary" not in findings.role_hints:
            findings.role_hints["primary"] = color
    for rules in parsed:
        for rule in rules:
            findings.rule_count += 1
            if isinstance(rule, AtRule):
                _read_font_face(rule, findings)
                continue
            selector = tinycss2.serialize(rule.prelude).strip()
            _read_declarations(selector, _declarations(rule), variables, findings)
    for style in inline_styles:
        declarations = [
            item
            for item in tinycss2.parse_blocks_contents(style, skip_whitespace=True)
            if isinstance(item, Declaration)
        ]
        _read_declarations("[style]", declarations, variables, findings)
    return findings


def _read_font_face(rule: AtRule, findings: CssFindings) -> None:
    for declaration in _declarations(rule):
        value = tinycss2.serialize(declaration.value).strip()
        if declaration.lower_name == "font-family":
            family = first_family(value)
            if family:
                findings.font_faces.add(family)
        elif declaration.lower_name == "font-weight":
            for number in re.findall(r"\b[1-9]00\b", value):
                findings.weights.add(int(number))


def _read_declarations(
    selector: str, declarations: list[Declaration], variables: dict[str, str], findings: CssFindings
) -> None:
    prominent = 2.5 if PROMINENT.search(selector) else 1.0
    for declaration in declarations:
        name = declaration.lower_name
        value = tinycss2.serialize(declaration.value).strip()
        if name.startswith("--"):
            continue
        if "var(" in value:
            value = _resolve_vars(value, variables)
        if name in PROPERTY_WEIGHT:
            tokens = tinycss2.parse_component_value_list(value, skip_comments=True)
            for candidate in _color_candidates(tokens):
                color = to_hex(candidate)
                if color:
                    findings.colors.append(WeightedColor(color, PROPERTY_WEIGHT[name] * prominent))
        elif name == "font-family":
            family = first_family(value)
            if family:
                findings.all_fonts[family] += 1
                if HEADING_SELECTOR.search(selector):
                    findings.heading_fonts[family] += 1
                if BODY_SELECTOR.search(selector):
                    findings.body_fonts[family] += 1
        elif name == "font-weight":
            for number in re.findall(r"\b[1-9]00\b", value):
                findings.weights.add(int(number))
        elif name == "font-size":
            heading = SIZE_HEADINGS.match(selector)
            if heading and len(value) <= 40:
                findings.scale[heading.group(1).lower()] = value


def google_font_families(href: str) -> list[str]:
    """Families named in a Google Fonts stylesheet URL (read from the URL, nothing fetched)."""
    families = []
    for match in re.finditer(r"family=([^&:]+)", href):
        families.append(match.group(1).replace("+", " ").strip()[:100])
    return families


def typography(findings: CssFindings, linked_families: list[str]) -> dict[str, object]:
    """Heading and body fonts (by the selectors that use them), weights and the h1-h6 scale."""
    body = findings.body_fonts.most_common(1)
    heading = findings.heading_fonts.most_common(1)
    ranked = [family for family, _ in findings.all_fonts.most_common()] + sorted(findings.font_faces)
    ranked += linked_families
    body_font = body[0][0] if body else (ranked[0] if ranked else "")
    heading_font = heading[0][0] if heading else body_font
    return {
        "headingFont": heading_font,
        "bodyFont": body_font,
        "weights": sorted(findings.weights),
        "scale": [f"{level}: {findings.scale[level]}" for level in sorted(findings.scale)],
    }
