"""`toolhost metrics import FILE`: an operator's CSV or JSON of snapshots, checked whole before anything is stored."""

from __future__ import annotations

import csv
import io
import json
import math
import uuid
from datetime import UTC, datetime
from typing import Any

from sqlalchemy import or_, select
from sqlalchemy.ext.asyncio import AsyncSession

from toolhost.db.base import utcnow
from toolhost.domains.analytics import insights, metrics
from toolhost.domains.distribution.models import Post
from toolhost.platform.dates import parse_iso

MAX_ROWS = 100_000
MAX_BYTES = 50 * 1024 * 1024
WHOLE = ("views", "likes", "comments", "shares", "saves")


class ImportRejected(ValueError):
    """The file cannot be imported; `problems` lists each bad row (nothing was stored)."""

    def __init__(self, problems: list[str]) -> None:
        super().__init__("; ".join(problems[:20]))
        self.problems = problems


def parse(content: bytes, *, file_name: str) -> list[dict[str, Any]]:
    """The rows of a JSON array (or {"snapshots": [...]}) or a CSV with a header line, as the file has them:
    import_snapshots checks every row before anything is stored."""
    if len(content) > MAX_BYTES:
        raise ImportRejected([f"the file is over {MAX_BYTES // (1024 * 1024)} MB"])
    try:
        text = content.decode("utf-8-sig")
    except UnicodeDecodeError as error:
        raise ImportRejected(["the file is not UTF-8 text"]) from error
    if file_name.lower().endswith(".json") or text.lstrip().startswith(("[", "{")):
        try:
            document = json.loads(text)
        except ValueError as error:
            raise ImportRejected([f"not valid JSON: {error}"]) from error
        rows = document.get("snapshots") if isinstance(document, dict) else document
        if not isinstance(rows, list) or not all(isinstance(row, dict) for row in rows):
            raise ImportRejected(['JSON must be an array of objects or {"snapshots": [...]}'])
    else:
        rows = list(csv.DictReader(io.StringIO(text)))
    if len(rows) > MAX_ROWS:
        raise ImportRejected([f"more than {MAX_ROWS} rows"])
    if not rows:
        raise ImportRejected(["the file has no rows"])
    return rows


def _blank(value: Any) -> bool:
    return value is None or (isinstance(value, str) and not value.strip())


def _values(row: dict[str, Any], number: int, problems: list[str]) -> dict[str, Any]:
    """A row's counts by metrics.COUNTERS names, as metrics.record takes them; one the row lacks is absent."""
    values: dict[str, Any] = {}
    for name in (*WHOLE, "watch_time_minutes"):
        raw = row.get(name)
        if _blank(raw):
            continue
        try:
            value = math.nan if isinstance(raw, bool) else float(str(raw).strip())
        except (TypeError, ValueError):
            value = math.nan
        if not math.isfinite(value) or value < 0 or (name in WHOLE and value != int(value)):
            problems.append(f"row {number}: {name} must be a non-negative {'whole ' if name in WHOLE else ''}number")
            continue
        values[name] = value if name == "watch_time_minutes" else int(value)
    if not any(name in values for name in ("views", "likes", "comments", "shares")):
        problems.append(f"row {number}: no counts (views, likes, comments or shares)")
    return values


def _moment(row: dict[str, Any], number: int, problems: list[str]) -> datetime | None:
    raw = row.get("captured_at")
    if _blank(raw):
        return None
    try:
        moment = parse_iso(str(raw))
    except ValueError:
        problems.append(f"row {number}: captured_at is not an ISO-8601 date-time")
        return None
    if moment.tzinfo is None:
        problems.append(f"row {number}: captured_at needs an offset (Z for UTC)")
        return None
    if moment > utcnow():
        problems.append(f"row {number}: captured_at is in the future")
        return None
    return moment.astimezone(UTC)


async def import_snapshots(*, session: AsyncSession, project_id: uuid.UUID, rows: list[dict[str, Any]]) -> int:
    """Stores one snapshot per row for the project's published posts; any bad row rejects the whole file."""
    wanted_ids: set[uuid.UUID] = set()
    wanted_external: set[str] = set()
    for row in rows:
        if not _blank(row.get("post_id")):
            try:
                wanted_ids.add(uuid.UUID(str(row["post_id"]).strip()))
            except ValueError:
                continue
        elif not _blank(row.get("external_post_id")):
            wanted_external.add(str(row["external_post_id"]).strip())
    posts = list(
        await session.scalars(
            select(Post).where(
                Post.project_id == project_id,
                Post.status == "published",
                or_(Post.id.in_(wanted_ids), Post.external_post_id.in_(wanted_external)),
            )
        )
    )
    by_id = {candidate.id: candidate for candidate in posts}
    by_external: dict[tuple[str, str | None], list[Post]] = {}
    for candidate in posts:
        if candidate.external_post_id:
            by_external.setdefault((candidate.external_post_id, None), []).append(candidate)
            by_external.setdefault((candidate.external_post_id, candidate.platform), []).append(candidate)
    problems: list[str] = []
    resolved: list[tuple[Post, dict[str, Any], datetime | None]] = []
    for number, row in enumerate(rows, start=1):
        post: Post | None = None
        if not _blank(row.get("post_id")):
            try:
                post = by_id.get(uuid.UUID(str(row["post_id"]).strip()))
            except ValueError:
                problems.append(f"row {number}: post_id is not a UUID")
                continue
        elif not _blank(row.get("external_post_id")):
            platform = None if _blank(row.get("platform")) else str(row["platform"]).strip().lower()
            matches = by_external.get((str(row["external_post_id"]).strip(), platform), [])
            if len(matches) > 1:
                problems.append(f"row {number}: several posts have this external_post_id; add platform or use post_id")
                continue
            post = matches[0] if matches else None
        else:
            problems.append(f"row {number}: needs post_id or external_post_id")
            continue
        if post is None:
            problems.append(f"row {number}: no published post of this project matches")
            continue
        values = _values(row, number, problems)
        resolved.append((post, values, _moment(row, number, problems)))
    if problems:
        raise ImportRejected(problems)
    for post, values, moment in resolved:
        metrics.record(session=session, post=post, values=values, source="import", captured_at=moment)
    await session.flush()
    await insights.recompute(session=session, project_id=project_id)
    return len(resolved)
