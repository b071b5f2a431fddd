"""Searches the tool registry for the caller."""

from __future__ import annotations

from typing import Any

from toolhost.domains.discovery.schemas import ScopeAvailability, SearchToolsOut
from toolhost.platform import scopes
from toolhost.platform.registry import Registry, ToolSpec
from toolhost.platform.results import ValidationFailed


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
    found = []
    for spec in registry.all():
        if module is not None and spec.module != module:
            continue
        if wanted is not None and not scopes.expand([spec.scope]) <= wanted:
            continue
        if needle and needle not in spec.name.lower() and needle not in spec.description.lower():
            continue
        found.append(spec)
    return found


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
