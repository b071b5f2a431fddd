"""The discovery tools."""

from __future__ import annotations

from toolhost.domains.discovery import documents, service
from toolhost.domains.discovery.schemas import (
    FetchIn,
    FetchOut,
    SearchIn,
    SearchOut,
    SearchResult,
    SearchToolsIn,
    SearchToolsOut,
)
from toolhost.platform.context import ToolContext
from toolhost.platform.registry import tool


@tool(
    module="discovery",
    scope="mcp:read",
    read_only=True,
    idempotent=True,
    response_format=None,
    text_shape="bare",
)
async def search_tools(ctx: ToolContext, args: SearchToolsIn) -> SearchToolsOut:
    """Finds tools by name, description, module or scope, and says which the caller's scopes allow.

    Use it to discover the right tool, and after a permission_denied with available_only=true to see
    what this key can do. detail=name lists names, summary adds descriptions, full adds schemas.
    """
    return service.search_tools(
        ctx.registry,
        held=ctx.principal.scopes,
        query=args.query,
        module=args.module,
        scope=args.scope,
        detail=args.detail,
        available_only=args.available_only,
    )


@tool(module="discovery", scope="mcp:read", read_only=True, idempotent=True, response_format=None, text_shape="bare")
async def search(ctx: ToolContext, args: SearchIn) -> SearchOut:
    """Searches toolhost's own documentation (guides and one page per tool) and returns up to ten ids.

    Use it to learn how toolhost works or how a tool behaves; read a result with fetch. It never
    searches account data.
    """
    corpus = documents.corpus(ctx.registry, ctx.settings.api_root)
    found = documents.search(corpus, args.query)
    return SearchOut(results=[SearchResult(id=item.id, title=item.title, url=item.url) for item in found])


@tool(module="discovery", scope="mcp:read", read_only=True, idempotent=True, response_format=None, text_shape="bare")
async def fetch(ctx: ToolContext, args: FetchIn) -> FetchOut:
    """Returns one documentation page by the id search gave (a guide such as quickstart, or tool:<name>)."""
    document = documents.fetch(documents.corpus(ctx.registry, ctx.settings.api_root), args.id)
    return FetchOut(
        id=document.id, title=document.title, text=document.text, url=document.url, metadata=document.metadata
    )
