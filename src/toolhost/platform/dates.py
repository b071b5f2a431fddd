"""Timestamps at the edges: how every output writes one, and how stored or imported text is read back.

Tool inputs never come through here: an input model declares a date with `fields.CalendarDate` and a time with
`fields.DateTimeWithOffset` (or `fields.DateTimeText` inside a record kept as JSON), so pydantic checks it (an
impossible date such as 2026-02-30 is a validation_error naming the field) before the handler runs. What is read
here is text that arrived by other ways (feed items, swipe-file rows, imported CSV files, plans stored before
those checks), with the standard library's ISO-8601 reader, which takes `Z` for UTC since Python 3.11.
"""

from __future__ import annotations

from datetime import UTC, datetime
from typing import overload


def as_utc(moment: datetime) -> datetime:
    """The same instant in UTC; a naive value is read as UTC, as the database columns store it."""
    return moment.replace(tzinfo=UTC) if moment.tzinfo is None else moment.astimezone(UTC)


@overload
def iso(moment: datetime) -> str: ...


@overload
def iso(moment: None) -> None: ...


@overload
def iso(moment: datetime | None) -> str | None: ...


def iso(moment: datetime | None) -> str | None:
    """UTC ISO-8601 with `Z` (`2026-03-02T09:30:00Z`), the form every output uses; None stays None."""
    if moment is None:
        return None
    return as_utc(moment).isoformat().replace("+00:00", "Z")


def parse_iso(text: str) -> datetime:
    """An ISO-8601 date-time (`Z`, `z` or an offset, or none: then naive); ValueError when it is not one."""
    text = text.strip()
    # RFC 3339 allows a lower-case z, which the standard library's reader refuses.
    return datetime.fromisoformat(text[:-1] + "Z" if text.endswith("z") else text)
