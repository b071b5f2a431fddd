"""Argument types shared by every tool's input model, carrying the catalogue's limits (CATALOG.md §1.1, §1.8)."""

from __future__ import annotations

import json
import math
import re
from datetime import date, datetime
from typing import Annotated, Any, Literal
from urllib.parse import urlsplit

from pydantic import AfterValidator, AwareDatetime, BeforeValidator, Field, StringConstraints, TypeAdapter
from pydantic import ValidationError as PydanticValidationError

from toolhost.platform.dates import as_utc, iso

UUID_REGEX = r"^[0-9a-fA-F]{8}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{12}$"
RECORD_MAX_BYTES = 256 * 1024
RECORD_MAX_DEPTH = 32

UUIDStr = Annotated[str, StringConstraints(pattern=UUID_REGEX), Field(description="UUID (8-4-4-4-12 hex)")]
Text = Annotated[str, StringConstraints(max_length=10_000)]
ShortText = Annotated[str, StringConstraints(max_length=1_000)]
# http(s), no whitespace, and no square bracket in the host part but around one IP literal: what urlsplit parses.
URL_PATTERN = r"^[hH][tT][tT][pP][sS]?://[^\s/?#\[\]]*(\[[0-9A-Fa-f:.]+\][^\s/?#\[\]]*)?([/?#]\S*)?$"


def _splits(value: str) -> str:
    # The pattern lets "[1.2.3]" through; urlsplit, which every service reading a URL calls, refuses it.
    try:
        urlsplit(value)
    except ValueError as error:
        raise ValueError(f"not a valid URL: {error}") from None
    return value


Url = Annotated[str, StringConstraints(max_length=2_048, pattern=URL_PATTERN), AfterValidator(_splits)]
DATE_PATTERN = r"^\d{4}-\d{2}-\d{2}$"
# A text with a character other than whitespace, in JSON Schema (unanchored): what a `value.strip()` check refuses.
NOT_BLANK_PATTERN = r"\S"


def _not_blank(value: str) -> str:
    if not value.strip():
        raise ValueError("must contain something besides whitespace")
    return value


# Text a tool works from (a prompt, a topic, content to rewrite): whitespace alone is nothing to work from.
NotBlank = AfterValidator(_not_blank)


def _date_text(value: Any) -> Any:
    # Only the YYYY-MM-DD text: pydantic alone would also take Unix timestamps and midnight date-times.
    if isinstance(value, str) and not re.fullmatch(DATE_PATTERN, value):
        raise ValueError("expected YYYY-MM-DD")
    return value


# A real calendar day (2026-02-30 is a validation_error), written as YYYY-MM-DD; the schema keeps the pattern.
CalendarDate = Annotated[
    date,
    BeforeValidator(_date_text),
    Field(description="YYYY-MM-DD", json_schema_extra={"pattern": DATE_PATTERN}),
]
DATETIME_START = re.compile(r"^\d{4}-\d{2}-\d{2}[Tt ]\d{2}:\d{2}")
DATETIME_EXAMPLE = "2026-03-02T09:30:00Z"
DATETIME_DESCRIPTION = f"ISO-8601 date-time with a UTC offset (Z allowed), e.g. {DATETIME_EXAMPLE}"


def _datetime_text(value: Any) -> Any:
    # Only ISO-8601 text: pydantic alone would also take Unix timestamps, as numbers or as digit strings.
    if isinstance(value, datetime):
        return value
    if not isinstance(value, str) or len(value) > 64 or not DATETIME_START.match(value):
        raise ValueError(f"expected an ISO-8601 date-time with a UTC offset, e.g. {DATETIME_EXAMPLE}")
    return value


# A real instant (2026-02-30T10:00:00Z or a time without an offset is a validation_error), read as UTC.
DateTimeWithOffset = Annotated[
    AwareDatetime,
    BeforeValidator(_datetime_text),
    AfterValidator(as_utc),
    Field(description=DATETIME_DESCRIPTION),
]
_DATETIME = TypeAdapter(DateTimeWithOffset)


def _datetime_as_text(value: Any) -> str:
    try:
        return iso(_DATETIME.validate_python(value))
    except PydanticValidationError as error:
        raise ValueError(error.errors(include_url=False)[0]["msg"].removeprefix("Value error, ")) from None


# The same check for a date-time kept as JSON text (inside records stored as given), written as UTC with Z.
DateTimeText = Annotated[
    str,
    BeforeValidator(_datetime_as_text),
    Field(description=DATETIME_DESCRIPTION, json_schema_extra={"format": "date-time"}),
]
# CATALOG.md §1.5's P9 and pinterest, a value added after it: agents written for the nine never send it, and an
# input enum that grows accepts everything it accepted before.
SocialPlatform = Literal[
    "youtube", "tiktok", "instagram", "twitter", "linkedin", "facebook", "threads", "bluesky", "mastodon", "pinterest"
]
SOCIAL_PLATFORMS: tuple[str, ...] = SocialPlatform.__args__  # type: ignore[attr-defined]
# C11 (and pinterest): the publishing platforms plus the stores a connection can be made to (CATALOG.md §1.5).
ConnectionPlatform = Literal[
    "youtube",
    "tiktok",
    "instagram",
    "twitter",
    "linkedin",
    "facebook",
    "threads",
    "bluesky",
    "mastodon",
    "pinterest",
    "shopify",
    "etsy",
]
CONNECTION_PLATFORMS: tuple[str, ...] = ConnectionPlatform.__args__  # type: ignore[attr-defined]
Confirm = Annotated[Literal[True], Field(description="Must be JSON true.")]
TextFormat = Annotated[Literal["text", "json"], Field(description="text: a short summary; json: the data")]


def _depth(value: Any) -> int:
    if isinstance(value, dict):
        return 1 + max((_depth(item) for item in value.values()), default=0)
    if isinstance(value, list):
        return 1 + max((_depth(item) for item in value), default=0)
    return 0


def _finite(value: Any) -> bool:
    if isinstance(value, float):
        return math.isfinite(value)
    if isinstance(value, dict):
        return all(_finite(item) for item in value.values())
    if isinstance(value, list):
        return all(_finite(item) for item in value)
    return True


def check_record(value: dict[str, Any], max_bytes: int = RECORD_MAX_BYTES) -> dict[str, Any]:
    """A free JSON object within the record limits: serialized size, nesting depth, finite numbers."""
    if _depth(value) > RECORD_MAX_DEPTH:
        raise ValueError(f"nested deeper than {RECORD_MAX_DEPTH} levels")
    if not _finite(value):
        raise ValueError("numbers must be finite")
    if len(json.dumps(value, ensure_ascii=False).encode()) > max_bytes:
        raise ValueError(f"larger than {max_bytes // 1024} KB serialized")
    return value


def _check_edited_post(value: dict[str, Any]) -> dict[str, Any]:
    return check_record(value, 64 * 1024)


def when_given(field: str, schema: dict[str, Any] | None = None) -> dict[str, Any]:
    """JSON Schema of an object that has `field`, matching `schema` (not null unless said): a cross-field rule's part.

    An input model states the rules its validators check across fields in its `json_schema_extra` with these
    (`allOf`, `anyOf`, `if`/`then`), so the OpenAPI document carries them.
    """
    return {"required": [field], "properties": {field: schema or {"not": {"type": "null"}}}}


def _record_limits(max_bytes: int) -> dict[str, Any]:
    # JSON Schema has no keyword for a serialized size or a nesting depth: extensions say them to tools that read them.
    return {"x-max-serialized-bytes": max_bytes, "x-max-depth": RECORD_MAX_DEPTH}


Record = Annotated[
    dict[str, Any], AfterValidator(check_record), Field(json_schema_extra=_record_limits(RECORD_MAX_BYTES))
]
SmallRecord = Annotated[
    dict[str, Any], AfterValidator(_check_edited_post), Field(json_schema_extra=_record_limits(64 * 1024))
]
