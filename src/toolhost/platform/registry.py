"""The tool registry and what tool modules declare for it.

`@tool` builds a tool's frozen spec once, at import, and attaches it to the handler; `object_lookup` and
`connected_accounts_probe` declare the rest as module-level values. No registry exists until the composition
root builds one from its list of tool modules (`Registry.from_modules`), so two registries never share state.
"""

from __future__ import annotations

import inspect
import re
import typing
from collections.abc import Awaitable, Callable, Iterable, Sequence
from dataclasses import dataclass, field
from types import ModuleType
from typing import TYPE_CHECKING, Any, Literal, TypeVar

from pydantic import BaseModel, ConfigDict

from toolhost.platform import scopes

if TYPE_CHECKING:
    from sqlalchemy.ext.asyncio import AsyncSession

    from toolhost.platform.context import ToolContext

ProjectMode = Literal[
    "strict", "accounts", "object", "optional", "none", "object_or_accounts", "object_or_optional", "object_or_strict"
]
ResponseFormat = Literal["text", "json"]
TextShape = Literal["envelope", "bare", "summary"]
Category = Literal["generation", "posting", "upload", "read"]

ACRONYMS = {
    "youtube": "YouTube",
    "tiktok": "TikTok",
    "mcp": "MCP",
    "url": "URL",
    "ai": "AI",
    "api": "API",
    "id": "ID",
}

InputT = TypeVar("InputT", bound=BaseModel)
OutputT = TypeVar("OutputT", bound="ToolOutput")
Handler = Callable[["ToolContext", Any], Awaitable["ToolOutput"]]
ObjectLookup = Callable[["AsyncSession", str, Sequence[Any]], Awaitable[Any]]
# (session, candidate project ids, platform or None) -> the ids among them with a usable connected account.
ConnectedAccountsProbe = Callable[["AsyncSession", Sequence[Any], "str | None"], Awaitable[set[Any]]]


class ToolInput(BaseModel):
    """Base of every tool's arguments: unknown top-level names are ignored (CATALOG.md §1.8)."""

    model_config = ConfigDict(extra="ignore")


class ToolOutput(BaseModel):
    """Base of every tool's payload (structuredContent)."""

    model_config = ConfigDict(extra="forbid")

    def summary(self) -> str:
        """The short human text of `response_format: text`; tools override it where wording matters."""
        lines = []
        for name, value in self.model_dump(mode="json").items():
            if isinstance(value, list):
                lines.append(f"{name}: {len(value)} item(s)")
            elif not isinstance(value, dict) and value is not None:
                lines.append(f"{name}: {value}")
        return "\n".join(lines) or "Done."

    def envelope_data(self, payload: dict[str, Any]) -> Any:
        """What the `json` envelope carries as `data`: the payload, unless a tool unwraps it."""
        return payload

    def extra_content(self) -> list[dict[str, Any]]:
        """Content blocks after the text block (the apps tools' `resource` UI, CATALOG.md §1.2); none by default."""
        return []


@dataclass(frozen=True, slots=True)
class Idempotency:
    """How a tool whose calls carry an idempotency key answers a repeat before any credit moves (CATALOG.md §1.7).

    execute() calls `claim(ctx, args)` once the project is resolved and the rate limits passed, before the
    credit hold: it returns the output stored under the call's key (the call answers it and costs nothing), or
    claims the key for this call and returns None, waiting first while another call holding the key finishes.
    The handler stores its answer under the claimed key in its last unit of work. When the call fails,
    execute() calls `release(ctx, args)` so a retry runs afresh; the claim of a process that died lapses.
    """

    claim: Callable[[ToolContext, Any], Awaitable[ToolOutput | None]]
    release: Callable[[ToolContext, Any], Awaitable[None]]


@dataclass(frozen=True, slots=True)
class ToolSpec:
    """Everything the platform knows about one tool; the JSON Schemas are computed once here."""

    name: str
    description: str
    module: str
    scope: str
    credits: int | Callable[[Any], int]
    read_only: bool
    destructive: bool
    idempotent: bool
    open_world: bool
    project: ProjectMode
    object_id: str | None
    response_format: ResponseFormat | None
    text_shape: TextShape
    assets: Callable[[Any], int] | None
    units: Callable[[Any], int] | None
    resume_argument: str | None
    category: Category
    polling: bool
    policy_exempt_fields: frozenset[str]
    public_api_server: bool
    idempotency: Idempotency | None
    handler: Handler
    input_model: type[BaseModel]
    output_model: type[ToolOutput]
    input_schema: dict[str, Any] = field(repr=False)
    output_schema: dict[str, Any] = field(repr=False)

    @property
    def title(self) -> str:
        """The name in Title Case with the catalogue's acronyms."""
        return " ".join(ACRONYMS.get(word, word.capitalize()) for word in self.name.split("_"))

    @property
    def base_credits(self) -> int | None:
        """The fixed cost, or None when it depends on the arguments."""
        return self.credits if isinstance(self.credits, int) else None

    def annotations(self) -> dict[str, Any]:
        """The MCP annotations, all four hints explicit."""
        return {
            "title": self.title,
            "readOnlyHint": self.read_only,
            "destructiveHint": self.destructive,
            "idempotentHint": self.idempotent,
            "openWorldHint": self.open_world,
        }

    def listing(self) -> dict[str, Any]:
        """The entry of GET /v1/tools."""
        return {
            "name": self.name,
            "description": self.description,
            "module": self.module,
            "scope": self.scope,
            "credits": self.base_credits if self.base_credits is not None else "variable",
            "annotations": self.annotations(),
            "input_schema": self.input_schema,
            "output_schema": self.output_schema,
        }


class RegistryError(TypeError):
    """A tool definition that cannot be served; raised at import, or when a registry is built."""


def _inline_schema(model: type[BaseModel], mode: Literal["validation", "serialization"]) -> dict[str, Any]:
    schema = model.model_json_schema(mode=mode)
    schema.pop("title", None)
    return schema


# The attribute of a handler that holds the spec @tool built for it.
SPEC_ATTRIBUTE = "tool_spec"


def declared_spec(handler: object) -> ToolSpec | None:
    """The spec @tool attached to a handler, or None for anything else."""
    spec = getattr(handler, SPEC_ATTRIBUTE, None)
    return spec if isinstance(spec, ToolSpec) else None


@dataclass(frozen=True, slots=True)
class ObjectLookupDeclaration:
    """A tool module's word on how to find the project of the object an id argument (e.g. plan_id) names."""

    argument: str
    lookup: ObjectLookup


@dataclass(frozen=True, slots=True)
class ConnectedAccountsProbeDeclaration:
    """A tool module's word on which projects have usable connected accounts (the `accounts` mode)."""

    probe: ConnectedAccountsProbe


def object_lookup(argument: str, lookup: ObjectLookup) -> ObjectLookupDeclaration:
    """Declares the lookup of an id argument; bind it to a module-level name so the registry finds it."""
    return ObjectLookupDeclaration(argument=argument, lookup=lookup)


def connected_accounts_probe(probe: ConnectedAccountsProbe) -> ConnectedAccountsProbeDeclaration:
    """Declares the connected-accounts probe; bind it to a module-level name so the registry finds it."""
    return ConnectedAccountsProbeDeclaration(probe=probe)


class Registry:
    """Owns name -> ToolSpec, the object lookups the `object` project mode uses and the connected-accounts probe."""

    def __init__(self) -> None:
        self._tools: dict[str, ToolSpec] = {}
        self._object_lookups: dict[str, ObjectLookup] = {}
        self.connected_accounts_probe: ConnectedAccountsProbe | None = None

    @classmethod
    def from_modules(cls, modules: Iterable[ModuleType]) -> Registry:
        """A registry of every tool, object lookup and probe the modules hold, in the modules' order.

        A declaration another module imports is the same object, and counts once. Every tool's object
        lookup must be declared, and the probe wherever a tool resolves its project by connected accounts:
        a declaration left unbound would otherwise go unnoticed until a call needed it.
        """
        declarations: dict[int, object] = {}
        for module in modules:
            for value in vars(module).values():
                if declared_spec(value) is not None or isinstance(
                    value, ObjectLookupDeclaration | ConnectedAccountsProbeDeclaration
                ):
                    declarations.setdefault(id(value), value)
        registry = cls()
        for value in declarations.values():
            if isinstance(value, ObjectLookupDeclaration):
                registry.add_object_lookup(value.argument, value.lookup)
            elif isinstance(value, ConnectedAccountsProbeDeclaration):
                registry.set_connected_accounts_probe(value.probe)
            elif (spec := declared_spec(value)) is not None:
                registry.add(spec)
        for spec in registry.all():
            if spec.object_id is not None and spec.object_id not in registry._object_lookups:
                raise RegistryError(f"{spec.name}: no module declares the object lookup of {spec.object_id!r}")
            if spec.project in ("accounts", "object_or_accounts") and registry.connected_accounts_probe is None:
                raise RegistryError(f"{spec.name}: project mode {spec.project!r} needs a connected-accounts probe")
        return registry

    def add(self, spec: ToolSpec) -> None:
        """Registers a spec; a second tool of the same name is a programming error."""
        if spec.name in self._tools:
            raise RegistryError(f"tool {spec.name!r} is registered twice")
        self._tools[spec.name] = spec

    def get(self, name: str) -> ToolSpec | None:
        """The tool of that name, if any."""
        return self._tools.get(name)

    def all(self) -> list[ToolSpec]:
        """Every tool, in registration order."""
        return list(self._tools.values())

    def add_object_lookup(self, argument: str, lookup: ObjectLookup) -> None:
        """Says how to find the project of the object an argument (e.g. plan_id) names."""
        if argument in self._object_lookups:
            raise RegistryError(f"object lookup for {argument!r} is registered twice")
        self._object_lookups[argument] = lookup

    def object_lookup(self, argument: str) -> ObjectLookup:
        """The lookup registered for an id argument."""
        return self._object_lookups[argument]

    def set_connected_accounts_probe(self, probe: ConnectedAccountsProbe) -> None:
        """Says which projects have usable connected accounts (the `accounts` mode; the distribution domain)."""
        if self.connected_accounts_probe is not None:
            raise RegistryError("the connected-accounts probe is registered twice")
        self.connected_accounts_probe = probe


def tool(
    *,
    module: str,
    scope: str,
    credits: int | Callable[[Any], int] = 0,
    read_only: bool = False,
    destructive: bool = False,
    idempotent: bool = False,
    open_world: bool = False,
    project: ProjectMode = "none",
    object_id: str | None = None,
    response_format: ResponseFormat | None = "text",
    text_shape: TextShape = "envelope",
    assets: Callable[[Any], int] | None = None,
    units: Callable[[Any], int] | None = None,
    resume_argument: str | None = None,
    category: Category | None = None,
    polling: bool = False,
    policy_exempt_fields: frozenset[str] = frozenset(),
    public_api_server: bool = False,
    idempotency: Idempotency | None = None,
) -> Callable[
    [Callable[[ToolContext, InputT], Awaitable[OutputT]]],
    Callable[[ToolContext, InputT], Awaitable[OutputT]],
]:
    """Declares a handler `async def name(ctx, args: NameIn) -> NameOut`: builds its spec, checked here, and
    attaches it to the handler, which it returns otherwise unchanged (`declared_spec` reads it back).

    `credits` is the cost: a number, or a function of the validated arguments; `units` counts the
    billable units (slides, seconds, posts) an operator's `credits.costs` override multiplies;
    `assets` counts the assets a call produces for the per-run budget; a call that sets
    `resume_argument` waits again on earlier work and takes no rate-limit token.

    `category` is the per-category rate-limit bucket (CATALOG.md §1.10); without it a tool that needs
    only `mcp:read` is `read` and any other `posting`. A `polling` tool checks on earlier work, so the
    hourly layer counts it 0.2. `policy_exempt_fields` are arguments the input policy passes over
    (e.g. a page's raw HTML, which quotes anything). A `public_api_server` tool's OpenAPI operation
    also lists the operator's `public_api_url`. A tool with `idempotency` answers repeats of a request from
    what its first call stored, before any credit moves (see Idempotency).
    """

    def declare(
        handler: Callable[[ToolContext, InputT], Awaitable[OutputT]],
    ) -> Callable[[ToolContext, InputT], Awaitable[OutputT]]:
        name = handler.__name__
        # Which modules exist is the composition root's to say (catalog.MODULES); here only that there is one.
        if not module:
            raise RegistryError(f"{name}: a tool names its module")
        if scope not in scopes.ALL_SCOPES:
            raise RegistryError(f"{name}: unknown scope {scope!r}")
        description = inspect.cleandoc(handler.__doc__ or "")
        if not description:
            raise RegistryError(f"{name}: a tool needs a docstring; it is what agents read")
        if project.startswith("object") and object_id is None:
            raise RegistryError(f"{name}: project mode {project!r} needs object_id")
        hints = typing.get_type_hints(handler)
        parameters = list(inspect.signature(handler).parameters)
        if len(parameters) != 2 or not inspect.iscoroutinefunction(handler):
            raise RegistryError(f"{name}: a handler is `async def {name}(ctx, args)`")
        input_model = hints.get(parameters[1])
        output_model = hints.get("return")
        if not (isinstance(input_model, type) and issubclass(input_model, ToolInput)):
            raise RegistryError(f"{name}: args must be annotated with a ToolInput model")
        if not (isinstance(output_model, type) and issubclass(output_model, ToolOutput)):
            raise RegistryError(f"{name}: the return annotation must be a ToolOutput model")
        pascal = "".join(part.capitalize() for part in name.split("_"))
        if input_model.__name__.lower() != f"{pascal}In".lower():
            raise RegistryError(f"{name}: its input model is named {pascal}In")
        for argument in (object_id, resume_argument, *sorted(policy_exempt_fields)):
            if argument is not None and argument not in input_model.model_fields:
                raise RegistryError(f"{name}: {argument!r} is not an argument")
        has_format = "response_format" in input_model.model_fields
        if has_format != (response_format is not None):
            raise RegistryError(f"{name}: response_format argument and declaration disagree")
        spec = ToolSpec(
            name=name,
            description=description,
            module=module,
            scope=scope,
            credits=credits,
            read_only=read_only,
            destructive=destructive,
            idempotent=idempotent,
            open_world=open_world,
            project=project,
            object_id=object_id,
            response_format=response_format,
            text_shape=text_shape,
            assets=assets,
            units=units,
            resume_argument=resume_argument,
            category=category or ("read" if scope == scopes.READ else "posting"),
            polling=polling,
            policy_exempt_fields=policy_exempt_fields,
            public_api_server=public_api_server,
            idempotency=idempotency,
            handler=handler,
            input_model=input_model,
            output_model=output_model,
            input_schema=_inline_schema(input_model, "validation"),
            output_schema=_inline_schema(output_model, "serialization"),
        )
        setattr(handler, SPEC_ATTRIBUTE, spec)
        return handler

    return declare


UUID_PATTERN = re.compile(r"^[0-9a-fA-F]{8}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{12}$")
