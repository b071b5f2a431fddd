"""Reading one HTML page with selectolax (and trafilatura for its main text): identity, logo, links, copy."""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from typing import TYPE_CHECKING
from urllib.parse import urljoin, urlsplit

from toolhost.domains.brand import phrases
from toolhost.domains.brand.claims import CLAIM_PATTERNS
from toolhost.domains.brand.colors import to_hex
from toolhost.providers.text.analysis import WORD, sentences

if TYPE_CHECKING:
    from selectolax.lexbor import LexborHTMLParser as HTMLParser
    from selectolax.lexbor import LexborNode as Node

SUBPAGE_KEYWORDS = (
    "about",
    "product",
    "pricing",
    "features",
    "blog",
    "company",
    "solutions",
    "services",
    "story",
    "shop",
    "menu",
    "press",
    "mission",
    "wholesale",
    "customers",
    "security",
)
# A publication's name: up to five capitalised words ("The Guardian", "Time Out", "Garden & Gun").
PUBLICATION = re.compile(r"(?:The\s+)?[A-Z][\w'\u2019.-]*(?:\s+(?:&\s+)?[A-Z][\w'\u2019.-]*){0,4}")
# Pages that say nothing about the brand: legal, account, cart, search, feeds, files.
UTILITY_PAGE = re.compile(
    r"privacy|terms|cookie|legal|login|log-in|signin|sign-in|signup|sign-up|register|account|cart|basket|"
    r"checkout|search|accessibility|sitemap|/feed|/rss|/tag/|/category/|/wp-|/cdn-cgi/|/foi\b|"
    r"\.(?:pdf|jpe?g|png|gif|svg|webp|zip|xml|json|txt|css|js)$",
    re.I,
)
# An element that introduces the publications that wrote about the brand; its logos' alt texts name them.
PRESS_INTRO = re.compile(r"^\s*(?:as (?:seen|featured) (?:in|on)|featured (?:in|on)|in the press|press)\s*:?\s*$", re.I)
TITLE_SEPARATORS = re.compile(r"\s+[|\u2013\u2014\-:\u00b7]\s+")
PAIN = re.compile(
    r"\b(?:tired of|struggl\w*|hard to|waste[sd]?|wasting|frustrat\w*|no more|without the|stop \w+ing|"
    r"hours (?:on|spent)|manual(?:ly)?|messy|stress\w*|painful|headache)\b",
    re.IGNORECASE,
)
AWARD = re.compile(r"\b(?:award|winner|won|named|rated|certified|editors'? choice|featured in|as seen)\b", re.I)
BENEFIT = re.compile(
    r"\b(?:helps? you|lets? you|so (?:you|your|it|they) \w+|without|in minutes|in days|saves?|faster|easier|"
    r"fresh|every (?:bag|order|batch|day|morning))\b",
    re.I,
)
# "We roast ...", "We help ...": what the brand does, said by itself ("we are" describes, it does not do).
WE_DO = re.compile(r"^we\s+(?:\w+ly\s+)?(?!are\b|were\b)\w+", re.I)


@dataclass
class PageFindings:
    """What one page says about the brand."""

    url: str
    title: str = ""
    site_name: str = ""
    description: str = ""
    theme_color: str | None = None
    headings: list[str] = field(default_factory=list)
    logo_candidates: list[tuple[int, str]] = field(default_factory=list)
    stylesheet_urls: list[str] = field(default_factory=list)
    style_blocks: list[str] = field(default_factory=list)
    inline_styles: list[tuple[str, str]] = field(default_factory=list)
    font_links: list[str] = field(default_factory=list)
    links: list[str] = field(default_factory=list)
    testimonials: list[str] = field(default_factory=list)
    press_names: list[str] = field(default_factory=list)
    text: str = ""
    full_text: str = ""


def _attr(node: Node, name: str) -> str:
    value = node.attributes.get(name)
    return value.strip() if isinstance(value, str) else ""


def _icon_size(node: Node) -> int:
    sizes = _attr(node, "sizes")
    match = re.match(r"(\d+)x(\d+)", sizes)
    return int(match.group(1)) if match else 16


def read_page(html: str, url: str) -> PageFindings:
    """A page's meta, headings, logo candidates, stylesheets, same-site links, testimonials, main text."""
    # Imported on first use: the lexbor parser holds ~2 MB that an idle server does not need.
    from selectolax.lexbor import LexborHTMLParser as HTMLParser

    tree = HTMLParser(html)
    page = PageFindings(url=url)
    title = tree.css_first("title")
    page.title = title.text(strip=True)[:300] if title else ""
    for meta in tree.css("meta"):
        key = (_attr(meta, "property") or _attr(meta, "name")).lower()
        content = _attr(meta, "content")[:1000]
        if key == "og:site_name":
            page.site_name = content
        elif key in ("description", "og:description") and not page.description:
            page.description = content
        elif key == "theme-color":
            page.theme_color = to_hex(content)
        elif key == "og:image" and content:
            page.logo_candidates.append((1, urljoin(url, content)))
    for link in tree.css("link"):
        rel = _attr(link, "rel").lower()
        href = _attr(link, "href")
        if not href:
            continue
        absolute = urljoin(url, href)
        if "stylesheet" in rel:
            if "fonts.googleapis.com" in href or "fonts.bunny.net" in href:
                page.font_links.append(href)
            else:
                page.stylesheet_urls.append(absolute)
        elif "apple-touch-icon" in rel:
            page.logo_candidates.append((3, absolute))
        elif "icon" in rel:
            page.logo_candidates.append((2 if _icon_size(link) >= 96 else 0, absolute))
    for image in tree.css("img"):
        marker = " ".join(_attr(image, name) for name in ("alt", "class", "id", "src")).lower()
        parent = image.parent
        if parent is not None:
            marker += " " + _attr(parent, "class").lower() + " " + _attr(parent, "id").lower()
        if "logo" in marker and _attr(image, "src"):
            page.logo_candidates.append((4, urljoin(url, _attr(image, "src"))))
    for style in tree.css("style"):
        page.style_blocks.append(style.text()[:2_000_000])
    for node in tree.css("[style]"):
        page.inline_styles.append((_selector(node), _attr(node, "style")[:2000]))
    # Pages written before CSS (or mailed as HTML) colour with attributes: <body bgcolor text link>,
    # <table bgcolor>, <font color>. They are the same evidence as the styles they stand for.
    for node in tree.css("[bgcolor], font[color], body[text], body[link]"):
        selector = _selector(node)
        for attribute, declaration in (("bgcolor", "background-color"), ("color", "color"), ("text", "color")):
            if _attr(node, attribute) and (attribute != "text" or node.tag == "body"):
                page.inline_styles.append((selector, f"{declaration}: {_attr(node, attribute)[:40]}"))
        if node.tag == "body" and _attr(node, "link"):
            page.inline_styles.append(("a", f"color: {_attr(node, 'link')[:40]}"))
    for heading in tree.css("h1, h2, h3"):
        text = heading.text(separator=" ", strip=True)
        if 3 <= len(text) <= 160 and text not in page.headings:
            page.headings.append(text)
    for anchor in tree.css("a[href]"):
        page.links.append(urljoin(url, _attr(anchor, "href")))
    for quote in tree.css("blockquote, [class*=testimonial], [class*=quote], [class*=review]"):
        text = quote.text(separator=" ", strip=True)
        if 20 <= len(text) <= 500 and text not in page.testimonials:
            page.testimonials.append(text)
    page.press_names = _press_names(tree)
    body = tree.body
    page.full_text = body.text(separator="\n", strip=True)[:200_000] if body else ""
    page.text = main_text(html, tree)
    return page


def _selector(node: Node, depth: int = 3) -> str:
    """A CSS selector naming the element and up to `depth` ancestors: "header.site-header nav a.logo"."""
    compounds: list[str] = []
    current: Node | None = node
    while current is not None and len(compounds) <= depth and current.tag not in (None, "html", "-undef"):
        classes = "".join(f".{name}" for name in _attr(current, "class").split()[:4])
        identifier = f"#{_attr(current, 'id')}" if _attr(current, "id") else ""
        compounds.append(f"{current.tag}{classes}{identifier}")
        current = current.parent
    return " ".join(reversed(compounds))


def _press_names(tree: HTMLParser) -> list[str]:
    """Publications named by the logos and citations next to an "As seen in" or inside a press section."""
    containers = list(tree.css("[class~=press], [id=press], [class~=as-seen-in], [class~=featured-in]"))
    for node in tree.css("p, span, strong, em, h2, h3, h4, h5, h6, li, div"):
        if node.parent is not None and PRESS_INTRO.match(node.text(separator=" ", strip=True)[:60]):
            containers.append(node.parent)
    names: list[str] = []
    # A quotation's <cite> names where it was printed ("The Guardian"); a person is credited in prose instead.
    cited = [cite for cite in tree.css("blockquote cite") if PUBLICATION.fullmatch(cite.text(strip=True))]
    for container in [*containers, *cited]:
        items = [container] if container.tag == "cite" else container.css("img[alt], cite, li")
        for item in items:
            name = _attr(item, "alt") if item.tag == "img" else item.text(separator=" ", strip=True)
            name = re.sub(r"\s*\blogo$", "", name.strip(), flags=re.IGNORECASE)
            if 2 <= len(name) <= 80 and name not in names:
                names.append(name)
    return names[:12]


def main_text(html: str, tree: HTMLParser | None = None) -> str:
    """The page's main text (trafilatura), falling back to the body text without scripts and navigation."""
    import trafilatura  # imported on first use: with lxml and its URL and date helpers it holds ~13 MB

    extracted = trafilatura.extract(html, include_comments=False, include_tables=False, favor_recall=True)
    if extracted and len(extracted) > 200:
        return extracted
    if tree is None:
        from selectolax.lexbor import LexborHTMLParser as HTMLParser  # on first use, as in read_page

        tree = HTMLParser(html)
    for node in tree.css("script, style, noscript, nav, footer, svg"):
        node.decompose()
    body = tree.body
    fallback = body.text(separator="\n", strip=True) if body else ""
    return extracted if extracted and len(extracted) >= len(fallback) else fallback


def brand_name(pages: list[PageFindings]) -> tuple[str, float]:
    """og:site_name, else the brand part of the title (the part shared by several pages, or the shortest)."""
    for page in pages:
        if page.site_name:
            return page.site_name[:200], 0.9
    parts_by_page = [TITLE_SEPARATORS.split(page.title) for page in pages if page.title]
    if not parts_by_page:
        return "", 0.0
    if len(parts_by_page) > 1:
        shared = set(parts_by_page[0]).intersection(*parts_by_page[1:])
        if shared:
            return min(shared, key=len).strip()[:200], 0.8
    parts = parts_by_page[0]
    if len(parts) > 1:
        host = urlsplit(pages[0].url).hostname or ""
        for part in parts:
            if part.lower().replace(" ", "") in host.replace("-", ""):
                return part.strip()[:200], 0.8
        return min(parts, key=len).strip()[:200], 0.6
    return parts[0].strip()[:200], 0.5


def same_site_links(page: PageFindings, limit: int) -> list[str]:
    """Up to `limit` links on the same site whose path names about, product, pricing, blog and the like."""
    host = (urlsplit(page.url).hostname or "").removeprefix("www.")
    ranked: list[tuple[int, str]] = []
    seen = {page.url.rstrip("/")}
    for link in page.links:
        parts = urlsplit(link)
        if parts.scheme not in ("http", "https") or (parts.hostname or "").removeprefix("www.") != host:
            continue
        clean = f"{parts.scheme}://{parts.netloc}{parts.path}".rstrip("/")
        if clean in seen:
            continue
        path = parts.path.lower()
        rank = next((rank for rank, keyword in enumerate(SUBPAGE_KEYWORDS) if keyword in path), None)
        if rank is None and path.strip("/") and not UTILITY_PAGE.search(path):
            # A page of the site's own ("/treatments", "/workshop.html", "/people") after the named ones,
            # in the order the page links them (its navigation first)
            rank = len(SUBPAGE_KEYWORDS) + len(ranked)
        if rank is not None:
            ranked.append((rank, clean))
            seen.add(clean)
    return [link for _, link in sorted(ranked)[:limit]]


def copy_sentences(text: str) -> list[str]:
    """The sentences of a text, trimmed."""
    return [text[start:end].strip() for start, end in sentences(text) if len(WORD.findall(text[start:end])) >= 3]


def value_propositions(pages: list[PageFindings]) -> list[str]:
    """Sentences that say what the brand does for people: a benefit ("so you can", "without", "save") or
    what "we" do. Headings are names of sections, not propositions, and are left out."""
    benefits: list[str] = []
    statements: list[str] = []
    for page in pages:
        headings = set(page.headings)
        for sentence in copy_sentences(page.text):
            if sentence in headings or len(sentence) > 200 or len(sentence.split()) < 6 or sentence.endswith("?"):
                continue
            if PAIN.search(sentence) or sentence in benefits or sentence in statements:
                continue
            if BENEFIT.search(sentence):
                benefits.append(sentence)
            elif WE_DO.match(sentence):
                statements.append(sentence)
    return (benefits + statements)[:6]


def proof_points(pages: list[PageFindings]) -> list[dict[str, str]]:
    """Sentences stating figures or awards, kept as unverified claims with the page they came from."""
    found: list[dict[str, str]] = []
    figure_patterns = [pattern for kind, _, pattern in CLAIM_PATTERNS if kind in ("percentage", "number")]
    for page in pages:
        for sentence in copy_sentences(page.text):
            if len(sentence) > 220:
                continue
            stated = any(pattern.search(sentence) for pattern in figure_patterns) or AWARD.search(sentence)
            if stated and all(item["claim"] != sentence for item in found):
                found.append({"claim": sentence, "evidence": f"stated on {page.url}", "status": "unverified"})
    return found[:10]


def audience(pages: list[PageFindings]) -> tuple[str, list[str]]:
    """Who the copy says it is for ("for home brewers who care about ...", "we help small bakeries", "built
    for data teams"), the group named most plainly and most often; and the copy's problem sentences."""
    weight: dict[str, int] = {}
    best: dict[str, phrases.AudienceStatement] = {}
    pains: list[str] = []
    for page in pages:
        for statement in phrases.audience_statements("\n".join([page.description, page.text])):
            group = statement.people.lower()
            weight[group] = weight.get(group, 0) + statement.strength
            if group not in best or statement.strength > best[group].strength:
                best[group] = statement
        for sentence in copy_sentences(page.text):
            if PAIN.search(sentence) and len(sentence) <= 200 and sentence not in pains:
                pains.append(sentence)
    # A single passing "for X" ("one pasta for vegetarians", "patterns for high-street brands") names no
    # audience: the group needs a plainer statement ("for X who Y", "we help X") or a second mention.
    plain = {group: value for group, value in weight.items() if value >= 2}
    primary = best[max(plain, key=lambda group: plain[group])].phrase if plain else ""
    return primary, pains[:5]


def best_logo(pages: list[PageFindings]) -> tuple[str | None, float]:
    """The strongest logo candidate: an image marked logo, an apple-touch-icon, a large icon, og:image."""
    candidates = [candidate for page in pages[:1] for candidate in page.logo_candidates]
    if not candidates:
        return None, 0.0
    rank, url = max(candidates, key=lambda candidate: candidate[0])
    return url[:2048], {4: 0.85, 3: 0.75, 2: 0.65, 1: 0.5, 0: 0.4}[rank]
