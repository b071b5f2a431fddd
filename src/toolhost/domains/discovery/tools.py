"""The discovery tools."""

from __future__ import annotations

from toolhost.domains.discovery import service
from toolhost.domains.discovery.schemas import SearchToolsIn, SearchToolsOut
from toolhost.platform.context import ToolContext
from toolhost.platform.registry import registry, tool


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
        registry,
        held=ctx.principal.scopes,
        query=args.query,
        module=args.module,
        scope=args.scope,
        detail=args.detail,
        available_only=args.available_only,
    )
