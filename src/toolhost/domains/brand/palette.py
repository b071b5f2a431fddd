"""Palette roles from evidence: where a site uses a colour says which role it plays, not how colourful it is.

A dark green can be a brand's primary and a bright orange only its buttons. So every colour a site shows is
a vote for a role, weighted by how strongly that use marks the role: the theme-color meta tag, header, nav
and logo backgrounds, heading and link colours vote primary; the page's body text colour votes text and its
background votes background; a call-to-action button votes accent. Near-identical shades are one colour
(CIEDE2000), and the role with the most weight behind a colour wins, each colour filling one role.
"""

from __future__ import annotations

from dataclasses import dataclass, field

from toolhost.domains.brand.colors import chroma, delta_e, lightness

MERGE_DISTANCE = 6.0  # CIEDE2000: closer colours are one brand colour in different shades of rounding
# Below this OKLCh chroma a colour is grey, white or black: it can be the text or the background, and it is
# a brand colour only when nothing colourful has any vote.
GREY_CHROMA = 0.02
COLOURFUL_CHROMA = 0.06
STATUS_SLOTS = ("success", "warning", "error")
# The painted area of one text colour (css_extract's PROPERTY_WEIGHT): less is borders and outlines only.
PAINTED_AREA = 1.0


@dataclass(frozen=True, slots=True)
class ColorVote:
    """One use of a colour: the role it argues for (None when it only shows the colour is painted), the
    weight of that argument, the painted area it stands for, and what showed it ("header background")."""

    hex: str
    role: str | None
    weight: float
    area: float
    source: str


@dataclass(frozen=True, slots=True)
class PaletteChoice:
    """The palette and, per slot, the kinds of evidence behind it (empty when only painted area chose it)."""

    palette: dict[str, str]
    evidence: dict[str, tuple[str, ...]]


@dataclass
class _Cluster:
    hex: str
    area: float = 0.0
    roles: dict[str, float] = field(default_factory=dict)
    sources: dict[str, set[str]] = field(default_factory=dict)

    def score(self, role: str) -> float:
        return self.roles.get(role, 0.0)


def _clusters(votes: list[ColorVote]) -> list[_Cluster]:
    by_hex: dict[str, _Cluster] = {}
    for vote in votes:
        cluster = by_hex.setdefault(vote.hex, _Cluster(vote.hex))
        cluster.area += vote.area
        if vote.role is not None:
            cluster.roles[vote.role] = cluster.roles.get(vote.role, 0.0) + vote.weight
            cluster.sources.setdefault(vote.role, set()).add(vote.source)
    merged: list[_Cluster] = []
    # The most argued-for shade names the cluster; lighter rounding variants of it join.
    for cluster in sorted(by_hex.values(), key=lambda item: -(sum(item.roles.values()) + item.area)):
        home = next((other for other in merged if delta_e(other.hex, cluster.hex) < MERGE_DISTANCE), None)
        if home is None:
            merged.append(cluster)
            continue
        home.area += cluster.area
        for role, weight in cluster.roles.items():
            home.roles[role] = home.roles.get(role, 0.0) + weight
            home.sources.setdefault(role, set()).update(cluster.sources[role])
    return merged


def _colourfulness(hex_color: str) -> float:
    """How far a colour can carry a brand role: 0.25 for greys, rising to 1 for clearly coloured ones."""
    return 0.25 + 0.75 * min(1.0, chroma(hex_color) / COLOURFUL_CHROMA)


def choose_palette(votes: list[ColorVote]) -> PaletteChoice:
    """Fills the palette slots from votes: text and background first (they are the page), then primary,
    accent (a button colour that is not the primary), secondary, muted text and the status colours."""
    clusters = _clusters(votes)
    palette: dict[str, str] = {}
    evidence: dict[str, tuple[str, ...]] = {}
    taken: set[int] = set()

    def take(slot: str, cluster: _Cluster | None, role: str | None = None) -> None:
        if cluster is None:
            return
        taken.add(id(cluster))
        palette[slot] = cluster.hex
        evidence[slot] = tuple(sorted(cluster.sources.get(role or slot, set())))

    def free() -> list[_Cluster]:
        return [cluster for cluster in clusters if id(cluster) not in taken]

    def best(role: str, candidates: list[_Cluster], weigh: bool = False) -> _Cluster | None:
        scored = [
            (cluster.score(role) * (_colourfulness(cluster.hex) if weigh else 1.0), cluster)
            for cluster in candidates
            if cluster.score(role) > 0
        ]
        return max(scored, key=lambda pair: pair[0])[1] if scored else None

    def by_area(candidates: list[_Cluster]) -> _Cluster | None:
        return max(candidates, key=lambda cluster: cluster.area) if candidates else None

    neutral = [cluster for cluster in clusters if chroma(cluster.hex) < COLOURFUL_CHROMA]
    dark = [cluster for cluster in neutral if lightness(cluster.hex) <= 0.45]
    take("text", best("text", clusters) or best("ink", dark) or by_area(dark))
    take(
        "background",
        best("background", free()) or by_area([c for c in free() if c in neutral and lightness(c.hex) >= 0.85]),
    )
    colourful = [cluster for cluster in free() if chroma(cluster.hex) >= GREY_CHROMA]
    primary = best("primary", colourful, weigh=True)
    if primary is None:
        # No use marks a primary: the most painted colourful colour is the brand's, a button's included. A
        # colour seen only in hairlines (borders, underlines) is a detail: such a site is monochrome, and
        # its ink is its primary, as a designer would name it.
        painted = [c for c in colourful if chroma(c.hex) >= COLOURFUL_CHROMA and c.area >= PAINTED_AREA]
        primary = by_area(painted)
        if primary is None and "text" in palette and by_area(colourful) is not None:
            palette["primary"], evidence["primary"] = palette["text"], ("text colour of a monochrome site",)
        else:
            take("primary", primary, "accent")
    else:
        take("primary", primary)
    accent_candidates = [cluster for cluster in free() if chroma(cluster.hex) >= GREY_CHROMA]
    take("accent", best("accent", accent_candidates))
    take("secondary", best("secondary", free()) or best("primary", [c for c in free() if c in colourful], True))
    if "accent" not in palette:
        take("accent", by_area([cluster for cluster in free() if chroma(cluster.hex) >= COLOURFUL_CHROMA]))
    if "secondary" not in palette:
        take("secondary", by_area([cluster for cluster in free() if chroma(cluster.hex) >= COLOURFUL_CHROMA]))
    take(
        "textSecondary",
        best("textSecondary", free())
        or by_area([c for c in free() if c in neutral and 0.45 < lightness(c.hex) < 0.85 and c.score("ink") > 0]),
        "textSecondary",
    )
    for slot in STATUS_SLOTS:
        take(slot, best(slot, free()))
    return PaletteChoice(palette=palette, evidence=evidence)
