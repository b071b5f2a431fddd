"""Searches the tool registry for the caller."""

from __future__ import annotations

import functools
from dataclasses import dataclass
from typing import Any

from toolhost.domains.discovery.schemas import ScopeAvailability, SearchToolsOut
from toolhost.platform import scopes
from toolhost.platform.registry import Registry, ToolSpec
from toolhost.platform.results import ValidationFailed


@dataclass(frozen=True, slots=True)
class _Entry:
    spec: ToolSpec
    name: str
    description: str
    implied_scopes: frozenset[str]


# A server holds one registry; the bound keeps the registries a test run builds, one per platform, from piling up.
@functools.lru_cache(maxsize=4)
def _index(registry: Registry, tool_count: int) -> tuple[_Entry, ...]:
    # Built once per registry (and again only if tools were added since), searched on every call.
    return tuple(
        _Entry(
            spec=spec,
            name=spec.name.lower(),
            description=spec.description.lower(),
            implied_scopes=scopes.expand([spec.scope]),
        )
        for spec in registry.all()
    )


def matching_tools(registry: Registry, *, query: str | None, module: str | None, scope: str | None) -> list[ToolSpec]:
    """Tools whose name or description contains `query`, in `module`, needing a scope within `scope`."""
    wanted: frozenset[str] | None = None
    if scope is not None:
        try:
            wanted = scopes.expand([scope])
        except scopes.UnknownScope as error:
            raise ValidationFailed(
                f"unknown scope {scope!r}; one of {', '.join(scopes.ALL_SCOPES)}",
                field_errors=[{"path": "scope", "message": "unknown scope"}],
            ) from error
    needle = query.lower() if query else None
    return [
        entry.spec
        for entry in _index(registry, len(registry.all()))
        if (module is None or entry.spec.module == module)
        and (wanted is None or entry.implied_scopes <= wanted)
        and (not needle or needle in entry.name or needle in entry.description)
    ]


def search_tools(
    registry: Registry,
    *,
    held: frozenset[str],
    query: str | None,
    module: str | None,
    scope: str | None,
    detail: str,
    available_only: bool,
) -> SearchToolsOut:
    """The search_tools payload for a caller holding `held`."""
    matches = matching_tools(registry, query=query, module=module, scope=scope)
    available = [spec for spec in matches if scopes.satisfies(held, spec.scope)]
    shown = available if available_only else matches
    tools: list[Any]
    if detail == "name":
        tools = [spec.name for spec in shown]
    elif detail == "summary":
        tools = [
            {
                "name": spec.name,
                "description": spec.description.split("\n\n")[0],
                "required_scope": spec.scope,
                "available": scopes.satisfies(held, spec.scope),
                "module": spec.module,
            }
            for spec in shown
        ]
    else:
        tools = [{**spec.listing(), "available": scopes.satisfies(held, spec.scope)} for spec in shown]
    return SearchToolsOut(
        toolCount=len(shown),
        scopes=ScopeAvailability(available=scopes.display(held), unavailable_matches=len(matches) - len(available)),
        tools=tools,
    )
