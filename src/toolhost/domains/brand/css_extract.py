"""Reading a site's CSS with tinycss2: each colour as a vote for the role its selector shows, fonts, type scale."""

from __future__ import annotations

import re
from collections import Counter
from dataclasses import dataclass, field

import tinycss2
from tinycss2.ast import AtRule, Declaration, FunctionBlock, HashToken, IdentToken, Node, QualifiedRule

from toolhost.domains.brand.colors import to_hex
from toolhost.domains.brand.palette import ColorVote

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
PAINT = frozenset({"background", "background-color", "fill"})
INK = frozenset({"color"})
# What the last compound of a selector styles, tried in this order (a ".btn" inside a header is a button).
SUBJECTS: tuple[tuple[str, re.Pattern[str]], ...] = (
    ("success", re.compile(r"success", re.I)),
    ("warning", re.compile(r"warning|caution", re.I)),
    ("error", re.compile(r"error|danger|invalid", re.I)),
    (
        "button",
        re.compile(
            r"^(?:button|input)\b|[.#](?:[\w-]*-)?(?:btn|button)\b|[.#]cta(?:$|[^\w-]|-(?:button|btn|link))|type=.?submit",
            re.I,
        ),
    ),
    ("logo", re.compile(r"[.#][\w-]*(?:logo|brand)\b", re.I)),
    (
        "header",
        re.compile(r"^(?:header|nav)\b|[.#][\w-]*(?:header|navbar|nav|masthead|topbar|top-bar|menubar)\b", re.I),
    ),
    ("hero", re.compile(r"[.#][\w-]*(?:hero|banner|jumbotron|splash)\b", re.I)),
    ("footer", re.compile(r"^footer\b|[.#][\w-]*footer\b", re.I)),
    ("heading", re.compile(r"^h[1-3]\b|[.#][\w-]*(?:title|heading|headline)\b", re.I)),
    ("link", re.compile(r"^a\b", re.I)),
    ("muted", re.compile(r"[.#][\w-]*(?:muted|subtle|caption|meta|secondary)\b|^small\b|^figcaption\b", re.I)),
    ("body", re.compile(r"^(?:html|body|main|p|article|:root)\b|[.#](?:content|prose|body|page)\b", re.I)),
)
# Ancestors whose surface is coloured: text on them contrasts with it rather than shows the brand.
SURFACES = frozenset({"button", "header", "hero", "footer"})
# (subject, paint or ink) -> the role it argues for, its weight, what the evidence is called.
ROLE_EVIDENCE: dict[tuple[str, str], tuple[str, float, str]] = {
    ("header", "paint"): ("primary", 4.0, "header background"),
    ("logo", "paint"): ("primary", 3.0, "logo colour"),
    ("logo", "ink"): ("primary", 2.0, "logo colour"),
    ("hero", "paint"): ("primary", 2.5, "hero background"),
    ("footer", "paint"): ("primary", 1.0, "footer background"),
    ("heading", "ink"): ("primary", 2.5, "heading colour"),
    ("link", "ink"): ("primary", 2.0, "link colour"),
    ("button", "paint"): ("accent", 3.0, "button background"),
    ("body", "paint"): ("background", 3.0, "page background"),
    ("body", "ink"): ("text", 3.0, "body text colour"),
    ("muted", "ink"): ("textSecondary", 2.0, "muted text colour"),
    **{
        (status, kind): (status, 2.0, f"{status} styles")
        for status in ("success", "warning", "error")
        for kind in ("paint", "ink")
    },
}
# Custom property names that say a role: --color-primary, --brand-600, --ink, --surface.
NAMED_ROLES: tuple[tuple[str, re.Pattern[str]], ...] = (
    ("textSecondary", re.compile(r"(?:text|ink|fg|foreground)-?(?:secondary|muted|subtle|light)|muted", re.I)),
    ("primary", re.compile(r"primary|brand|main\b", re.I)),
    ("secondary", re.compile(r"secondary", re.I)),
    ("accent", re.compile(r"accent|highlight", re.I)),
    ("success", re.compile(r"success|positive", re.I)),
    ("warning", re.compile(r"warning|caution", re.I)),
    ("error", re.compile(r"error|danger|destructive|negative", re.I)),
    ("background", re.compile(r"\b(?:bg|background|surface|canvas|paper)\b", re.I)),
    ("text", re.compile(r"\b(?:text|ink|fg|foreground|body-color)\b", re.I)),
)
NAMED_WEIGHT = 4.0
STATE = re.compile(r":(?:hover|focus|active|visited|focus-visible|focus-within|disabled)\b", re.I)
COMBINATOR = re.compile(r"\s*[>+~]\s*|\s+")
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
# A rule that restyles the page for a dark theme (".dark", "[data-theme=dark]", "html.dark-mode"): the site's
# colours are its default (light) ones, so a dark block must neither redefine a variable nor vote.
DARK_THEME = re.compile(
    r"^(?:html|body|:root)?(?:\.(?:dark|dark-mode|dark-theme|theme-dark)|\[data-(?:bs-)?theme=[\"']?dark[\"']?\])"
    r"(?![\w-])",
    re.I,
)
DARK_MEDIA = re.compile(r"prefers-color-scheme\s*:\s*dark", re.I)
VAR_REFERENCE = re.compile(r"var\(\s*(--[\w-]+)\s*(?:,\s*([^)]+))?\)")


@dataclass
class CssFindings:
    """Everything the stylesheets said about colour and type."""

    votes: list[ColorVote] = field(default_factory=list)
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
            if not DARK_THEME.match(tinycss2.serialize(node.prelude).strip()):
                rules.append(node)
        elif isinstance(node, AtRule):
            if node.lower_at_keyword == "media" and DARK_MEDIA.search(tinycss2.serialize(node.prelude)):
                continue
            if node.lower_at_keyword in {"media", "supports", "layer", "container"} and node.content is not None:
                rules.extend(_rules(tinycss2.parse_rule_list(node.content, skip_whitespace=True, skip_comments=True)))
            elif node.lower_at_keyword == "font-face":
                rules.append(node)
    return rules


def read_css(
    sources: list[str], inline_styles: list[tuple[str, str]], findings: CssFindings | None = None
) -> CssFindings:
    """Colours and fonts from stylesheet texts and (element selector, style="") pairs; custom properties are
    resolved, and those named for a role (--color-primary, --brand-600, --ink) vote for it."""
    findings = findings or CssFindings()
    parsed = [_rules(tinycss2.parse_stylesheet(source, skip_whitespace=True, skip_comments=True)) for source in sources]
    variables: dict[str, str] = {}
    for rules in parsed:
        for rule in rules:
            if isinstance(rule, QualifiedRule):
                for declaration in _declarations(rule):
                    if declaration.name.startswith("--"):
                        variables[declaration.name] = tinycss2.serialize(declaration.value).strip()
    findings.votes.extend(_named_votes(variables))
    for rules in parsed:
        for rule in rules:
            findings.rule_count += 1
            if isinstance(rule, AtRule):
                _read_font_face(rule, findings)
                continue
            selector = tinycss2.serialize(rule.prelude).strip()
            _read_declarations(selector, _declarations(rule), variables, findings)
    for selector, style in inline_styles:
        declarations = [
            item
            for item in tinycss2.parse_blocks_contents(style, skip_whitespace=True)
            if isinstance(item, Declaration)
        ]
        _read_declarations(selector, declarations, variables, findings)
    return findings


def _named_votes(variables: dict[str, str]) -> list[ColorVote]:
    named: list[tuple[str, str, str]] = []
    for name, value in variables.items():
        color = to_hex(_resolve_vars(value, variables))
        words = name.lstrip("-")
        if color is None or re.search(r"(?:foreground|-fg|-on|contrast)$", words, re.I):
            continue  # --primary-foreground is the text drawn on the primary, not the primary
        role = next((role for role, pattern in NAMED_ROLES if pattern.search(words)), None)
        if role is not None:
            named.append((role, color, name))
    # A scale (--brand-50 ... --brand-900) shares one vote: the site names the family, its use picks the shade.
    family_size: dict[str, int] = {}
    for role, _, _ in named:
        family_size[role] = family_size.get(role, 0) + 1
    return [
        ColorVote(color, role, NAMED_WEIGHT / family_size[role], 0.0, f"custom property {name}")
        for role, color, name in named
    ]


def subject_of(selector: str) -> tuple[str | None, bool, bool]:
    """What one selector styles (button, header, heading, link, body, ...), whether it sits on a coloured
    surface (inside a header, hero, footer or button), and whether it is a state (:hover, :focus)."""
    compounds = [part for part in COMBINATOR.split(selector.strip()) if part]
    if not compounds:
        return None, False, False
    last = compounds[-1]
    state = bool(STATE.search(last))
    plain = STATE.sub("", last)

    def kind(compound: str) -> str | None:
        return next((name for name, pattern in SUBJECTS if pattern.search(compound)), None)

    on_surface = any(kind(STATE.sub("", compound)) in SURFACES for compound in compounds[:-1])
    return kind(plain), on_surface, state


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
    subjects = {subject_of(part) for part in selector.split(",")}
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
                    findings.votes.extend(_usage_votes(color, name, subjects))
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


def _usage_votes(color: str, property_name: str, subjects: set[tuple[str | None, bool, bool]]) -> list[ColorVote]:
    """One colour declaration's votes: its painted area, and the role its selectors show, once per role."""
    area = PROPERTY_WEIGHT[property_name]
    kind = "paint" if property_name in PAINT else "ink" if property_name in INK else None
    votes: list[ColorVote] = []
    roles: set[str] = set()
    for subject, on_surface, state in subjects:
        if state:
            continue  # a hover shade restates its base colour
        evidence = ROLE_EVIDENCE.get((subject or "", kind or ""))
        if evidence is None or (on_surface and kind == "ink"):
            continue
        role, weight, source = evidence
        if role not in roles:
            roles.add(role)
            votes.append(ColorVote(color, role, weight, 0.0, source))
    if kind == "ink" and not roles and not any(state for _, _, state in subjects):
        votes.append(ColorVote(color, "ink", 1.0, 0.0, "text colour"))
    votes.append(ColorVote(color, None, 0.0, area * (0.3 if all(state for _, _, state in subjects) else 1.0), "area"))
    return votes


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
