"""What a tool declares on @tool: checked at declaration, the defaults the platform derives, and the registries
the composition root builds from the declarations."""

from __future__ import annotations

from types import ModuleType

import pytest

from toolhost.catalog import build_registry
from toolhost.platform import scopes
from toolhost.platform.context import ToolContext
from toolhost.platform.registry import (
    ProjectMode,
    Registry,
    RegistryError,
    ToolInput,
    ToolOutput,
    declared_spec,
    object_lookup,
    tool,
)


class ReadNoteIn(ToolInput):
    html: str = ""
    note_id: str | None = None


class ReadNoteOut(ToolOutput):
    text: str


def _module(name: str, **declarations: object) -> ModuleType:
    """A tool module holding the declarations, as an imported one does."""
    module = ModuleType(name)
    vars(module).update(declarations)
    return module


def _notes_module(name: str, project: ProjectMode = "none") -> ModuleType:
    """A tool module declaring a read_note tool of its own."""
    object_id = "note_id" if project == "object" else None

    @tool(module="notes", scope=scopes.READ, response_format=None, project=project, object_id=object_id)
    async def read_note(ctx: ToolContext, args: ReadNoteIn) -> ReadNoteOut:
        """Reads a note."""
        return ReadNoteOut(text=args.html)

    return _module(name, read_note=read_note)


def test_a_tool_without_a_category_is_read_or_posting_by_its_scope() -> None:
    for scope, category in ((scopes.READ, "read"), (scopes.WRITE, "posting")):

        @tool(module="notes", scope=scope, response_format=None)
        async def read_note(ctx: ToolContext, args: ReadNoteIn) -> ReadNoteOut:
            """Reads a note."""
            return ReadNoteOut(text=args.html)

        spec = declared_spec(read_note)
        assert spec is not None
        assert (spec.category, spec.polling, spec.policy_exempt_fields, spec.public_api_server) == (
            category,
            False,
            frozenset(),
            False,
        )


def test_a_policy_exemption_must_name_an_argument() -> None:
    with pytest.raises(RegistryError, match="'body' is not an argument"):

        @tool(module="notes", scope=scopes.READ, response_format=None, policy_exempt_fields=frozenset({"body"}))
        async def read_note(ctx: ToolContext, args: ReadNoteIn) -> ReadNoteOut:
            """Reads a note."""
            return ReadNoteOut(text=args.html)


def test_a_tool_names_its_module() -> None:
    with pytest.raises(RegistryError, match="names its module"):

        @tool(module="", scope=scopes.READ, response_format=None)
        async def read_note(ctx: ToolContext, args: ReadNoteIn) -> ReadNoteOut:
            """Reads a note."""
            return ReadNoteOut(text=args.html)


def test_two_registries_built_in_one_process_share_nothing() -> None:
    first, second = build_registry(), build_registry()
    assert [spec.name for spec in first.all()] == [spec.name for spec in second.all()]
    assert len(first.all()) == 91

    spec = declared_spec(_notes_module("notes_tools").read_note)
    assert spec is not None
    first.add(spec)

    async def project_of_note(session: object, note_id: str, project_ids: object) -> None:
        return None

    first.add_object_lookup("note_id", project_of_note)

    assert first.get("read_note") is spec and len(first.all()) == 92
    assert second.get("read_note") is None and len(second.all()) == 91
    with pytest.raises(KeyError):
        second.object_lookup("note_id")
    assert build_registry().get("read_note") is None


def test_a_tool_name_declared_by_two_modules_is_refused() -> None:
    with pytest.raises(RegistryError, match="tool 'read_note' is registered twice"):
        Registry.from_modules([_notes_module("notes_tools"), _notes_module("more_notes_tools")])


def test_a_tool_another_module_imports_counts_once() -> None:
    notes = _notes_module("notes_tools")
    importer = _module("importing_tools", read_note=notes.read_note)
    assert [spec.name for spec in Registry.from_modules([notes, importer]).all()] == ["read_note"]


def test_an_object_tool_needs_its_object_lookup_declared() -> None:
    notes = _notes_module("notes_tools", project="object")
    with pytest.raises(RegistryError, match="read_note: no module declares the object lookup of 'note_id'"):
        Registry.from_modules([notes])

    async def project_of_note(session: object, note_id: str, project_ids: object) -> None:
        return None

    lookups = _module("note_lookups", NOTE_LOOKUP=object_lookup("note_id", project_of_note))
    registry = Registry.from_modules([notes, lookups])
    assert registry.object_lookup("note_id") is project_of_note


def test_a_tool_resolving_its_project_by_connected_accounts_needs_the_probe() -> None:
    with pytest.raises(RegistryError, match="read_note: project mode 'accounts' needs a connected-accounts probe"):
        Registry.from_modules([_notes_module("notes_tools", project="accounts")])
