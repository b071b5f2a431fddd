"""Argument types shared by every tool's input model, carrying the catalogue's limits (CATALOG.md §1.1, §1.8)."""

from __future__ import annotations

import json
import math
import re
from datetime import date
from typing import Annotated, Any, Literal

from pydantic import AfterValidator, BeforeValidator, Field, StringConstraints

UUID_REGEX = r"^[0-9a-fA-F]{8}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{12}$"
RECORD_MAX_BYTES = 256 * 1024
RECORD_MAX_DEPTH = 32

UUIDStr = Annotated[str, StringConstraints(pattern=UUID_REGEX), Field(description="UUID (8-4-4-4-12 hex)")]
Text = Annotated[str, StringConstraints(max_length=10_000)]
ShortText = Annotated[str, StringConstraints(max_length=1_000)]
Url = Annotated[str, StringConstraints(max_length=2_048, pattern=r"^[hH][tT][tT][pP][sS]?://\S+$")]
DATE_PATTERN = r"^\d{4}-\d{2}-\d{2}$"


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
SocialPlatform = Literal[
    "youtube", "tiktok", "instagram", "twitter", "linkedin", "facebook", "threads", "bluesky", "mastodon"
]
SOCIAL_PLATFORMS: tuple[str, ...] = SocialPlatform.__args__  # type: ignore[attr-defined]
# C11: the publishing platforms plus the stores a connection can be made to (CATALOG.md §1.5).
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


Record = Annotated[dict[str, Any], AfterValidator(check_record)]
SmallRecord = Annotated[dict[str, Any], AfterValidator(_check_edited_post)]
