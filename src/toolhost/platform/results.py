"""ToolResult, the typed errors every layer raises, and the one table from error type to HTTP status."""

from __future__ import annotations

import json
from datetime import UTC, datetime
from typing import Any, ClassVar

import orjson

from toolhost.platform.dates import iso

TEXT_LIMIT = 100_000
TEXT_CUT_NOTE = "\n[output cut at 100,000 characters: narrow the request with filters or a smaller limit]"

HTTP_STATUS = {
    "validation_error": 400,
    "policy_block": 400,
    "unauthenticated": 401,
    "billing_error": 402,
    "permission_denied": 403,
    "not_found": 404,
    "conflict": 200,
    "rate_limited": 429,
    "upstream_error": 200,
    "server_error": 500,
}
# What a running handler reports means "the tool executed": 200 with isError (CATALOG.md §1.3).
HANDLER_REPORTED_TYPES = {"conflict", "upstream_error", "validation_error", "not_found"}


class ToolError(Exception):
    """A failure reported to the caller as an error result; subclasses fix the error_type."""

    error_type: ClassVar[str] = "server_error"

    def __init__(self, message: str, *, recover_with: str | None = None, **details: Any) -> None:
        super().__init__(message)
        self.message = message
        self.recover_with = recover_with
        self.details = details
        self.raised_by_handler = False

    def http_status(self) -> int:
        """The HTTP status of this error, given where it was raised."""
        if self.raised_by_handler and self.error_type in HANDLER_REPORTED_TYPES:
            return 200
        if self.error_type == "validation_error" and self.details.get("too_large"):
            return 413
        return HTTP_STATUS[self.error_type]

    def payload(self) -> dict[str, Any]:
        """The `error` object of the result."""
        body: dict[str, Any] = {"error_type": self.error_type, "message": self.message}
        if self.recover_with:
            body["recover_with"] = self.recover_with
        body.update({key: value for key, value in self.details.items() if key != "too_large"})
        return body


class ValidationFailed(ToolError):
    """Arguments break the schema or a catalogue rule."""

    error_type = "validation_error"


class PolicyBlocked(ToolError):
    """The input policy blocked the arguments."""

    error_type = "policy_block"


class Unauthenticated(ToolError):
    """No usable credential."""

    error_type = "unauthenticated"


class BillingFailed(ToolError):
    """Not enough credits, trial ended, cap or run budget reached."""

    error_type = "billing_error"


class PermissionDenied(ToolError):
    """The credential lacks the scope."""

    error_type = "permission_denied"


class NotFound(ToolError):
    """Unknown tool, or an id that does not exist for this caller."""

    error_type = "not_found"


class Conflict(ToolError):
    """The object's state forbids the action."""

    error_type = "conflict"


class RateLimited(ToolError):
    """A rate-limit layer is exhausted."""

    error_type = "rate_limited"


class UpstreamFailed(ToolError):
    """A provider, connector or fetched site failed."""

    error_type = "upstream_error"


class ServerFailed(ToolError):
    """Anything unexpected; the message never carries internals."""

    error_type = "server_error"


def envelope_text(payload: Any, version: str) -> str:
    """The `json` response_format text: the payload inside `{_meta, data}`."""
    meta = {"version": version, "timestamp": iso(datetime.now(UTC))}
    return indented_json({"_meta": meta, "data": payload})


def bare_text(payload: Any) -> str:
    """The text of bare tools: the payload itself as indented JSON."""
    return indented_json(payload)


def compact_json(value: Any) -> bytes:
    """JSON without spaces, non-ASCII kept, as Starlette's JSONResponse writes it (in C, through orjson)."""
    try:
        return orjson.dumps(value, option=orjson.OPT_NON_STR_KEYS)
    except orjson.JSONEncodeError:
        return json.dumps(value, ensure_ascii=False, separators=(",", ":")).encode()


def indented_json(value: Any) -> str:
    """JSON indented by two spaces, non-ASCII kept: what json.dumps(indent=2, ensure_ascii=False) writes.

    orjson writes it in C; the standard library falls back to its pure-Python encoder whenever it indents,
    and still writes what orjson refuses (integers beyond 64 bits).
    """
    try:
        return orjson.dumps(value, option=orjson.OPT_INDENT_2 | orjson.OPT_NON_STR_KEYS).decode()
    except orjson.JSONEncodeError:
        return json.dumps(value, indent=2, ensure_ascii=False)


def cap_text(text: str) -> str:
    """Cuts a text block at the catalogue's limit, saying so."""
    if len(text) <= TEXT_LIMIT:
        return text
    return text[: TEXT_LIMIT - len(TEXT_CUT_NOTE)] + TEXT_CUT_NOTE


def success_result(
    text: str, structured: dict[str, Any], extra_blocks: list[dict[str, Any]] | None = None
) -> dict[str, Any]:
    """A successful ToolResult."""
    content: list[dict[str, Any]] = [{"type": "text", "text": cap_text(text)}]
    content.extend(extra_blocks or [])
    return {"content": content, "structuredContent": structured, "isError": False}


def error_result(error: ToolError, request_id: str) -> dict[str, Any]:
    """An error ToolResult; the text block is the JSON of the error object whatever response_format says."""
    body = error.payload()
    body["request_id"] = request_id
    wrapped = {"error": body}
    return {
        "content": [{"type": "text", "text": indented_json(wrapped)}],
        "structuredContent": wrapped,
        "isError": True,
    }
