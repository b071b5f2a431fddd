"""A config's schedule (weekdays + HH:MM in an IANA timezone) as a cron expression, and its due times.

croniter walks the expression in the config's own timezone, so "09:00 on Monday" stays 09:00 local across
daylight-saving changes (a time that does not exist on the day clocks go forward runs at the first minute after).
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from datetime import UTC, datetime, timedelta
from zoneinfo import ZoneInfo, ZoneInfoNotFoundError

WEEKDAYS = ("mon", "tue", "wed", "thu", "fri", "sat", "sun")
TIME_PATTERN = re.compile(r"^([01]\d|2[0-3]):([0-5]\d)$")


def zone(name: str) -> ZoneInfo:
    """The IANA timezone by name; ValueError for an unknown one (or a path-like name zoneinfo refuses)."""
    try:
        return ZoneInfo(name)
    except (ZoneInfoNotFoundError, ValueError) as error:
        raise ValueError(f"unknown timezone {name!r}: use an IANA name such as UTC or Europe/Paris") from error


def ordered_days(days: Sequence[str]) -> list[str]:
    """The weekdays without repeats, in week order."""
    return [day for day in WEEKDAYS if day in set(days)]


def cron_expression(days: Sequence[str], time: str) -> str:
    """The 5-field cron expression of weekdays + HH:MM; ValueError when the time is not a 24 h HH:MM."""
    match = TIME_PATTERN.match(time)
    if match is None:
        raise ValueError(f"schedule_time {time!r} is not a 24 h HH:MM time")
    expression = f"{int(match.group(2))} {int(match.group(1))} * * {','.join(ordered_days(days))}"
    from croniter import croniter  # imported on first use: with dateutil it holds ~1 MB an idle server does not need

    if not days or not croniter.is_valid(expression):
        raise ValueError(f"the schedule {expression!r} is not a valid weekly schedule")
    return expression


def next_due(days: Sequence[str], time: str, timezone: str, after: datetime) -> datetime:
    """The first due time strictly after `after`, in UTC."""
    from croniter import croniter  # on first use, as in cron_expression

    local = after.astimezone(zone(timezone))
    following: datetime = croniter(cron_expression(days, time), local).get_next(datetime)
    return following.astimezone(UTC)


def week_start(moment: datetime, timezone: str) -> datetime:
    """Monday 00:00 of `moment`'s week in the timezone, in UTC (when credits_used_this_week resets)."""
    local = moment.astimezone(zone(timezone))
    monday = (local - timedelta(days=local.weekday())).date()
    return datetime(monday.year, monday.month, monday.day, tzinfo=local.tzinfo).astimezone(UTC)
