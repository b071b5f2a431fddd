"""What a tool declares on @tool: checked at registration, and the defaults the platform derives."""

from __future__ import annotations

import pytest

from toolhost.platform import scopes
from toolhost.platform.context import ToolContext
from toolhost.platform.registry import Registry, RegistryError, ToolInput, ToolOutput


class ReadNoteIn(ToolInput):
    html: str = ""


class ReadNoteOut(ToolOutput):
    text: str


def test_a_tool_without_a_category_is_read_or_posting_by_its_scope() -> None:
    for scope, category in ((scopes.READ, "read"), (scopes.WRITE, "posting")):
        registry = Registry()

        @registry.tool(module="notes", scope=scope, response_format=None)
        async def read_note(ctx: ToolContext, args: ReadNoteIn) -> ReadNoteOut:
            """Reads a note."""
            return ReadNoteOut(text=args.html)

        spec = registry.get("read_note")
        assert spec is not None
        assert (spec.category, spec.polling, spec.policy_exempt_fields, spec.public_api_server) == (
            category,
            False,
            frozenset(),
            False,
        )


def test_a_policy_exemption_must_name_an_argument() -> None:
    registry = Registry()
    with pytest.raises(RegistryError, match="'body' is not an argument"):

        @registry.tool(
            module="notes", scope=scopes.READ, response_format=None, policy_exempt_fields=frozenset({"body"})
        )
        async def read_note(ctx: ToolContext, args: ReadNoteIn) -> ReadNoteOut:
            """Reads a note."""
            return ReadNoteOut(text=args.html)


def test_a_tool_names_its_module() -> None:
    registry = Registry()
    with pytest.raises(RegistryError, match="names its module"):

        @registry.tool(module="", scope=scopes.READ, response_format=None)
        async def read_note(ctx: ToolContext, args: ReadNoteIn) -> ReadNoteOut:
            """Reads a note."""
            return ReadNoteOut(text=args.html)
