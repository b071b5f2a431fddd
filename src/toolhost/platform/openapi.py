"""The OpenAPI 3.1 document of /v1, generated from the registry.

It describes what REST answers, body for body (platform/results.py, platform/rest.py): a success is the tool's
`{Tool}ToolResult`, whose structuredContent is the tool's output model; every error is an `ErrorResult`, at the
status of results.HTTP_STATUS, or at 200 for what a running handler reports. Every model keeps its class name
as its component name and title, so generated clients get one class per model under the name the code uses.
"""

from __future__ import annotations

from importlib.metadata import version as package_version
from typing import Any

from pydantic import BaseModel, ValidationError
from pydantic.json_schema import GenerateJsonSchema, JsonSchemaMode, JsonSchemaValue, models_json_schema
from pydantic_core import core_schema

from toolhost.config import Settings
from toolhost.platform import scopes
from toolhost.platform.registry import Registry, ToolOutput, ToolSpec
from toolhost.platform.results import HANDLER_REPORTED_TYPES, HTTP_STATUS

REFERENCE = "#/components/schemas/{model}"

ERROR_STATUSES = {
    "400": "validation_error or policy_block: arguments break the schema or the input policy",
    "401": "unauthenticated: missing, invalid, expired or revoked key or token",
    "402": "billing_error: not enough credits, trial ended, or a run budget reached",
    "403": "permission_denied: the credential lacks the tool's scope",
    "404": "not_found: unknown tool, or an id that does not exist for this caller",
    "413": "validation_error: the request body is over the limit",
    "429": "rate_limited: a rate-limit layer is exhausted; see Retry-After",
    "500": "server_error: logged with the request id the body carries",
}


def _reference(name: str) -> dict[str, str]:
    return {"$ref": REFERENCE.format(model=name)}


class _ToolSchemas(GenerateJsonSchema):
    """Pydantic's schemas, with what pydantic leaves out of them.

    Every field of a serialized model is required: execute() renders an output with `model_dump()`, which writes
    every field, defaults included, so a client may rely on each one being there (None where the model allows it).
    A dict whose keys are a union of literals (schedule_post's account_ids) says which keys it takes.
    """

    def dict_schema(self, schema: core_schema.DictSchema) -> JsonSchemaValue:
        json_schema = super().dict_schema(schema)
        if "propertyNames" in json_schema or "keys_schema" not in schema:
            return json_schema
        keys = {name: value for name, value in self.generate_inner(schema["keys_schema"]).items() if name != "title"}
        if "anyOf" in keys or "enum" in keys or "const" in keys:
            json_schema["propertyNames"] = keys
        return json_schema

    def field_is_required(
        self,
        field: core_schema.ModelField | core_schema.DataclassField | core_schema.TypedDictField,
        total: bool,
    ) -> bool:
        if self.mode == "serialization" and field["type"] != "typed-dict-field":
            return field.get("serialization_exclude_if") is None
        return super().field_is_required(field, total)


def _model_components(registry: Registry) -> tuple[dict[str, Any], dict[str, tuple[str, str]]]:
    """Every tool's input and output model and the models they nest, each one component named by its class.

    Returns the components and, per tool, the names of its input and output components. A model used both as
    input and as output with different schemas becomes `Name-Input` and `Name-Output` (pydantic's choice).
    """
    models: list[tuple[type[BaseModel], JsonSchemaMode]] = []
    for spec in registry.all():
        models += [(spec.input_model, "validation"), (spec.output_model, "serialization")]
    keys, schema = models_json_schema(models, ref_template=REFERENCE, schema_generator=_ToolSchemas)
    components: dict[str, Any] = schema.get("$defs", {})
    for name, definition in components.items():
        if "__" in name:
            # Pydantic qualifies the name with the module only when two different models share a class name.
            raise ValueError(f"two different models are named {definition.get('title')}: rename one of them")
        definition["title"] = name
    names = {
        spec.name: (
            keys[(spec.input_model, "validation")]["$ref"].rsplit("/", 1)[1],
            keys[(spec.output_model, "serialization")]["$ref"].rsplit("/", 1)[1],
        )
        for spec in registry.all()
    }
    return components, names


def _result_components() -> dict[str, Any]:
    """The content blocks and the error shapes every operation shares."""
    return {
        "TextContent": {
            "type": "object",
            "description": "The call's text: a summary or the JSON envelope (response_format), or the error's JSON.",
            "required": ["type", "text"],
            "properties": {"type": {"const": "text"}, "text": {"type": "string"}},
            "additionalProperties": False,
        },
        "ResourceContent": {
            "type": "object",
            "description": "An embedded UI resource (the apps tools, CATALOG.md §19).",
            "required": ["type", "resource"],
            "properties": {
                "type": {"const": "resource"},
                "resource": _reference("EmbeddedResource"),
            },
            "additionalProperties": False,
        },
        "EmbeddedResource": {
            "type": "object",
            "required": ["uri", "mimeType", "text"],
            "properties": {"uri": {"type": "string"}, "mimeType": {"type": "string"}, "text": {"type": "string"}},
            "additionalProperties": False,
        },
        "ErrorType": {"type": "string", "enum": list(HTTP_STATUS)},
        "Error": {
            "type": "object",
            "description": "What went wrong and how to recover; error types add details of their own.",
            "required": ["error_type", "message", "request_id"],
            "properties": {
                "error_type": _reference("ErrorType"),
                "message": {"type": "string"},
                "recover_with": {"type": "string"},
                "request_id": {"type": "string"},
                "field_errors": {"type": "array", "items": _reference("FieldError")},
                "retry_after": {"type": "integer", "description": "rate_limited: seconds to wait (Retry-After)"},
                "required_scope": {"type": "string", "description": "permission_denied: the scope the tool needs"},
                "available_scopes": {
                    "type": "array",
                    "items": {"type": "string"},
                    "description": "permission_denied: the scopes the credential holds",
                },
            },
            "additionalProperties": True,
        },
        "FieldError": {
            "type": "object",
            "description": "One argument that broke the schema: its path (`posts[0].caption`) and why.",
            "required": ["path", "message"],
            "properties": {"path": {"type": "string"}, "message": {"type": "string"}},
            "additionalProperties": False,
        },
        "ErrorContent": {
            "type": "object",
            "description": "The structuredContent of an error result.",
            "required": ["error"],
            "properties": {"error": _reference("Error")},
            "additionalProperties": False,
        },
        "ErrorResult": {
            "type": "object",
            "description": "A failed call: the ToolResult of the error, with the same `error` object at top level.",
            "required": ["content", "structuredContent", "isError", "error"],
            "properties": {
                "content": {"type": "array", "items": _reference("TextContent"), "minItems": 1, "maxItems": 1},
                "structuredContent": _reference("ErrorContent"),
                "isError": {"const": True},
                "error": _reference("Error"),
            },
            "additionalProperties": False,
        },
        "ToolListing": {
            "type": "object",
            "required": [
                "name",
                "description",
                "module",
                "scope",
                "credits",
                "annotations",
                "input_schema",
                "output_schema",
            ],
            "properties": {
                "name": {"type": "string"},
                "description": {"type": "string"},
                "module": {"type": "string"},
                "scope": {"type": "string", "enum": list(scopes.ALL_SCOPES)},
                "credits": {"anyOf": [{"type": "integer"}, {"const": "variable"}]},
                "annotations": {"type": "object", "additionalProperties": True},
                "input_schema": {"type": "object", "additionalProperties": True},
                "output_schema": {"type": "object", "additionalProperties": True},
            },
        },
    }


def _success_result(spec: ToolSpec, output_name: str) -> dict[str, Any]:
    """The tool's successful ToolResult: its structuredContent is the tool's output model."""
    adds_blocks = spec.output_model.extra_content is not ToolOutput.extra_content
    block = {"anyOf": [_reference("TextContent"), _reference("ResourceContent")]} if adds_blocks else None
    return {
        "type": "object",
        "description": f"A successful {spec.name} call.",
        "required": ["content", "structuredContent", "isError"],
        "properties": {
            "content": {"type": "array", "items": block or _reference("TextContent"), "minItems": 1},
            "structuredContent": _reference(output_name),
            "isError": {"const": False},
        },
        "additionalProperties": False,
    }


# The headers an error answer always carries, by status (platform/rest.py, execution.py).
ERROR_HEADERS = {
    "401": {"WWW-Authenticate": {"required": True, "schema": {"const": "Bearer"}}},
    "429": {
        "Retry-After": {
            "required": True,
            "description": "Seconds to wait before calling again.",
            "schema": {"type": "string", "pattern": "^[0-9]+$"},
        }
    },
}


def _error_response(status: str, description: str) -> dict[str, Any]:
    response = {"description": description, "content": {"application/json": {"schema": _reference("ErrorResult")}}}
    if status in ERROR_HEADERS:
        response["headers"] = ERROR_HEADERS[status]
    return response


def _body_required(spec: ToolSpec) -> bool:
    """Whether a call needs a body: a missing body means {}, which some input models refuse."""
    try:
        spec.input_model.model_validate({})
    except ValidationError:
        return True
    return False


def _operation(spec: ToolSpec, input_name: str, result_name: str, settings: Settings) -> dict[str, Any]:
    reported = ", ".join(sorted(HANDLER_REPORTED_TYPES))
    responses: dict[str, Any] = {
        "200": {
            "description": "The tool executed: its result, or an ErrorResult (isError true) for what the running "
            f"tool reported ({reported}).",
            "content": {
                "application/json": {"schema": {"oneOf": [_reference(result_name), _reference("ErrorResult")]}}
            },
        }
    }
    for status, description in ERROR_STATUSES.items():
        responses[status] = _error_response(status, description)
    credits = spec.base_credits if spec.base_credits is not None else "variable"
    operation: dict[str, Any] = {
        "operationId": spec.name,
        "summary": spec.title,
        "description": f"{spec.description}\n\nScope: `{spec.scope}` · credits: {credits} · module: {spec.module}",
        "tags": [spec.module],
        "security": [{"bearer": [spec.scope]}, {"apiKey": []}],
        "requestBody": {
            "required": _body_required(spec),
            "content": {"application/json": {"schema": _reference(input_name)}},
        },
        "responses": responses,
        "x-toolhost-scope": spec.scope,
        "x-toolhost-credits": credits,
    }
    if spec.public_api_server and settings.public_api_url:
        operation["servers"] = [
            {"url": f"{settings.api_root}/v1"},
            {"url": f"{settings.public_api_url.rstrip('/')}/v1", "description": "brand API host"},
        ]
    return operation


def _list_tools_operation() -> dict[str, Any]:
    return {
        "operationId": "list_tools",
        "summary": "List the tools the caller's scopes can see",
        "parameters": [
            {"name": "module", "in": "query", "required": False, "schema": {"type": "string"}},
            {
                "name": "scope",
                "in": "query",
                "required": False,
                "schema": {"type": "string", "enum": list(scopes.ALL_SCOPES)},
            },
            {"name": "q", "in": "query", "required": False, "schema": {"type": "string"}},
        ],
        "security": [{"bearer": []}, {"apiKey": []}],
        "responses": {
            "200": {
                "description": "The tools, each with its schemas.",
                "content": {"application/json": {"schema": {"type": "array", "items": _reference("ToolListing")}}},
            },
            "400": _error_response("400", "validation_error: an unknown scope value"),
            "401": _error_response("401", ERROR_STATUSES["401"]),
            "429": _error_response("429", "rate_limited: too many calls without a valid credential from this address"),
        },
    }


def openapi_document(registry: Registry, settings: Settings) -> dict[str, Any]:
    """One `POST /tools/{name}` path per tool, shared result and error schemas, bearer security."""
    components, model_names = _model_components(registry)

    def add(name: str, schema: dict[str, Any]) -> None:
        if name in components:
            raise ValueError(f"the component name {name} is taken by a model: rename the model")
        components[name] = {"title": name, **schema}

    for name, schema in _result_components().items():
        add(name, schema)
    specs = sorted(registry.all(), key=lambda item: (item.module, item.name))
    paths: dict[str, Any] = {}
    for spec in specs:
        input_name, output_name = model_names[spec.name]
        result_name = "".join(part.capitalize() for part in spec.name.split("_")) + "ToolResult"
        add(result_name, _success_result(spec, output_name))
        paths[f"/tools/{spec.name}"] = {"post": _operation(spec, input_name, result_name, settings)}
    paths["/tools"] = {"get": _list_tools_operation()}
    return {
        "openapi": "3.1.0",
        "info": {
            "title": "toolhost",
            "version": package_version("toolhost"),
            "description": "Hosted tool execution for AI content work: every tool is `POST /tools/{name}` "
            "with its arguments as a JSON object, answered with a ToolResult.",
        },
        "servers": [{"url": f"{settings.api_root}/v1"}],
        "paths": paths,
        "components": {
            "schemas": components,
            "securitySchemes": {
                "bearer": {
                    "type": "http",
                    "scheme": "bearer",
                    "description": "An API key (thk_live_...) or an OAuth access token from POST /oauth/token.",
                },
                "apiKey": {"type": "apiKey", "in": "header", "name": "X-API-Key"},
            },
        },
    }
