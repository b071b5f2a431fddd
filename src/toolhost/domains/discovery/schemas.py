"""Inputs and outputs of the discovery tools (CATALOG.md §18)."""

from __future__ import annotations

from typing import Annotated, Any, Literal

from pydantic import Field, StringConstraints

from toolhost.platform.registry import ToolInput, ToolOutput


class SearchToolsIn(ToolInput):
    """Filters over the registry."""

    query: Annotated[str, StringConstraints(max_length=200)] | None = Field(
        default=None, description="Case-insensitive substring of a tool's name or description."
    )
    module: str | None = Field(default=None, description="A catalogue module, e.g. content, distribution.")
    scope: str | None = Field(default=None, description="A scope, e.g. mcp:read; mcp:full matches every tool.")
    detail: Literal["name", "summary", "full"] = "summary"
    available_only: bool = Field(default=False, description="Only tools the caller's scopes allow.")


class ScopeAvailability(ToolOutput):
    """The caller's scopes and how many matches they do not cover."""

    available: list[str]
    unavailable_matches: int


class SearchToolsOut(ToolOutput):
    """Matching tools at the requested detail."""

    toolCount: int
    scopes: ScopeAvailability
    tools: list[Any]


class SearchIn(ToolInput):
    """A free-text query over the documentation."""

    query: Annotated[str, StringConstraints(max_length=500)]


class SearchResult(ToolOutput):
    """A document found."""

    id: str
    title: str
    url: str


class SearchOut(ToolOutput):
    """At most ten documents, best first."""

    results: list[SearchResult]


class FetchIn(ToolInput):
    """Which document."""

    id: Annotated[str, StringConstraints(min_length=1, max_length=200)]


class FetchOut(ToolOutput):
    """A whole document."""

    id: str
    title: str
    text: str
    url: str
    metadata: dict[str, Any] | None = None
