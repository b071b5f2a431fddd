"""The scope hierarchy: mcp:full implies the six others; tiers cap what a credential may hold."""

from __future__ import annotations

from collections.abc import Iterable

FULL = "mcp:full"
READ = "mcp:read"
WRITE = "mcp:write"
DISTRIBUTE = "mcp:distribute"
ANALYTICS = "mcp:analytics"
COMMENTS = "mcp:comments"
AUTOPILOT = "mcp:autopilot"

LEAF_SCOPES = (READ, WRITE, DISTRIBUTE, ANALYTICS, COMMENTS, AUTOPILOT)
ALL_SCOPES = (FULL, *LEAF_SCOPES)

TIER_SCOPES: dict[str, frozenset[str]] = {
    "trial": frozenset({READ, WRITE, DISTRIBUTE, ANALYTICS}),
    "pro": frozenset({READ, WRITE, DISTRIBUTE, ANALYTICS}),
    "team": frozenset(LEAF_SCOPES),
    "agency": frozenset(LEAF_SCOPES),
}


class UnknownScope(ValueError):
    """A scope name outside ALL_SCOPES."""


def expand(scopes: Iterable[str]) -> frozenset[str]:
    """The leaf scopes a set of granted scopes means (mcp:full -> the six others)."""
    leaves: set[str] = set()
    for scope in scopes:
        if scope == FULL:
            leaves.update(LEAF_SCOPES)
        elif scope in LEAF_SCOPES:
            leaves.add(scope)
        else:
            raise UnknownScope(scope)
    return frozenset(leaves)


def parse(text: str) -> list[str]:
    """Scopes from a comma- or space-separated list, validated and in a stable order."""
    names = [part.strip() for part in text.replace(",", " ").split() if part.strip()]
    expand(names)
    return sorted(set(names), key=ALL_SCOPES.index)


def effective(granted: Iterable[str], tier: str) -> frozenset[str]:
    """What a credential may use now: its own scopes within its account tier's."""
    return expand(granted) & TIER_SCOPES[tier]


def tier_allows(granted: Iterable[str], tier: str) -> bool:
    """Whether a tier may hold these scopes at all (checked when a key or client is created)."""
    return expand(granted) <= TIER_SCOPES[tier]


def satisfies(held: frozenset[str], required: str) -> bool:
    """Whether leaf scopes `held` cover `required` (which may itself be mcp:full)."""
    return expand([required]) <= held


def display(held: frozenset[str]) -> list[str]:
    """Scopes for output: mcp:full when all six are held, else the leaves."""
    if held >= frozenset(LEAF_SCOPES):
        return [FULL]
    return [scope for scope in LEAF_SCOPES if scope in held]
