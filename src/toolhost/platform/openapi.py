"""The OpenAPI 3.1 document of /v1, generated from the registry."""

from __future__ import annotations

import copy
from importlib.metadata import version as package_version
from typing import Any

from toolhost.config import Settings
from toolhost.platform.registry import Registry, ToolSpec

BRAND_RUNTIME_TOOLS = ("get_brand_runtime", "explain_brand_system", "check_brand_consistency")
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


def _hoist_definitions(schema: dict[str, Any], components: dict[str, Any], prefix: str) -> dict[str, Any]:
    """Moves a pydantic schema's $defs into components, rewriting its references."""
    schema = copy.deepcopy(schema)
    definitions = schema.pop("$defs", {})
    renames = {name: f"{prefix}{name}" for name in definitions}

    def rewrite(node: Any) -> Any:
        if isinstance(node, dict):
            reference = node.get("$ref")
            if isinstance(reference, str) and reference.startswith("#/$defs/"):
                return {**node, "$ref": "#/components/schemas/" + renames[reference.removeprefix("#/$defs/")]}
            return {key: rewrite(value) for key, value in node.items()}
        if isinstance(node, list):
            return [rewrite(item) for item in node]
        return node

    for name, definition in definitions.items():
        components[renames[name]] = rewrite(definition)
    rewritten: dict[str, Any] = rewrite(schema)
    return rewritten


def _operation(spec: ToolSpec, components: dict[str, Any], settings: Settings) -> dict[str, Any]:
    prefix = "".join(part.capitalize() for part in spec.name.split("_"))
    request_schema = _hoist_definitions(spec.input_schema, components, prefix)
    output_schema = _hoist_definitions(spec.output_schema, components, prefix)
    components[f"{prefix}Input"] = request_schema
    components[f"{prefix}Output"] = output_schema
    responses: dict[str, Any] = {
        "200": {
            "description": "The tool executed: its result (isError true for conflict, upstream_error and "
            "errors the running tool reported).",
            "content": {
                "application/json": {
                    "schema": {
                        "allOf": [
                            {"$ref": "#/components/schemas/ToolResult"},
                            {
                                "type": "object",
                                "properties": {"structuredContent": {"$ref": f"#/components/schemas/{prefix}Output"}},
                            },
                        ]
                    }
                }
            },
        }
    }
    for status, description in ERROR_STATUSES.items():
        responses[status] = {
            "description": description,
            "content": {"application/json": {"schema": {"$ref": "#/components/schemas/ErrorResult"}}},
        }
    credits = spec.base_credits if spec.base_credits is not None else "variable"
    operation: dict[str, Any] = {
        "operationId": spec.name,
        "summary": spec.title,
        "description": f"{spec.description}\n\nScope: `{spec.scope}` · credits: {credits} · module: {spec.module}",
        "tags": [spec.module],
        "security": [{"bearer": [spec.scope]}, {"apiKey": []}],
        "requestBody": {
            "required": False,
            "content": {"application/json": {"schema": {"$ref": f"#/components/schemas/{prefix}Input"}}},
        },
        "responses": responses,
        "x-toolhost-scope": spec.scope,
        "x-toolhost-credits": credits,
    }
    if spec.name in BRAND_RUNTIME_TOOLS and settings.public_api_url:
        operation["servers"] = [
            {"url": f"{settings.api_root}/v1"},
            {"url": f"{settings.public_api_url.rstrip('/')}/v1", "description": "brand API host"},
        ]
    return operation


def openapi_document(registry: Registry, settings: Settings) -> dict[str, Any]:
    """One `POST /tools/{name}` path per tool, shared result and error schemas, bearer security."""
    components: dict[str, Any] = {
        "ToolResult": {
            "type": "object",
            "required": ["content", "isError"],
            "properties": {
                "content": {"type": "array", "items": {"type": "object"}},
                "structuredContent": {"type": "object"},
                "isError": {"type": "boolean"},
            },
        },
        "Error": {
            "type": "object",
            "required": ["error_type", "message", "request_id"],
            "properties": {
                "error_type": {
                    "type": "string",
                    "enum": [
                        "validation_error",
                        "policy_block",
                        "unauthenticated",
                        "billing_error",
                        "permission_denied",
                        "not_found",
                        "conflict",
                        "rate_limited",
                        "upstream_error",
                        "server_error",
                    ],
                },
                "message": {"type": "string"},
                "recover_with": {"type": "string"},
                "request_id": {"type": "string"},
                "field_errors": {
                    "type": "array",
                    "items": {
                        "type": "object",
                        "properties": {"path": {"type": "string"}, "message": {"type": "string"}},
                    },
                },
            },
            "additionalProperties": True,
        },
        "ErrorResult": {
            "allOf": [
                {"$ref": "#/components/schemas/ToolResult"},
                {
                    "type": "object",
                    "required": ["error"],
                    "properties": {"error": {"$ref": "#/components/schemas/Error"}},
                },
            ]
        },
    }
    paths = {
        f"/tools/{spec.name}": {"post": _operation(spec, components, settings)}
        for spec in sorted(registry.all(), key=lambda item: (item.module, item.name))
    }
    paths["/tools"] = {
        "get": {
            "operationId": "list_tools",
            "summary": "List the tools the caller's scopes can see",
            "parameters": [
                {"name": "module", "in": "query", "required": False, "schema": {"type": "string"}},
                {
                    "name": "scope",
                    "in": "query",
                    "required": False,
                    "schema": {
                        "type": "string",
                        "enum": [
                            "mcp:full",
                            "mcp:read",
                            "mcp:write",
                            "mcp:distribute",
                            "mcp:analytics",
                            "mcp:comments",
                            "mcp:autopilot",
                        ],
                    },
                },
                {"name": "q", "in": "query", "required": False, "schema": {"type": "string"}},
            ],
            "security": [{"bearer": []}, {"apiKey": []}],
            "responses": {
                "200": {
                    "description": "The tools, each with its schemas.",
                    "content": {"application/json": {"schema": {"type": "array", "items": {"type": "object"}}}},
                },
                "400": {
                    "description": "validation_error: an unknown scope value",
                    "content": {"application/json": {"schema": {"$ref": "#/components/schemas/ErrorResult"}}},
                },
                "401": {
                    "description": "unauthenticated",
                    "content": {"application/json": {"schema": {"$ref": "#/components/schemas/ErrorResult"}}},
                },
            },
        }
    }
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
