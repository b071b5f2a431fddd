"""The project's brand runtime and consistency score, read through the brand domain's service."""

from __future__ import annotations

import uuid
from typing import Any

from sqlalchemy.ext.asyncio import AsyncSession

from toolhost.domains.brand import service as brand_service


async def get_runtime(session: AsyncSession, project_id: uuid.UUID) -> dict[str, Any] | None:
    """The get_brand_runtime payload of the project's active profile, or None without one."""
    runtime = await brand_service.get_runtime(session=session, project_id=project_id)
    if not runtime or runtime.get("found") is False:
        return None
    return runtime


def consistency(runtime: dict[str, Any], text: str) -> tuple[int, list[str]] | None:
    """The brand consistency score (0-100) of a text and its first two suggestions."""
    if not text.strip():
        return None
    result = brand_service.score_consistency(runtime, text)
    issues = [issue.suggestion or issue.rule for issue in result.issues[:2]]
    return int(result.overall), [str(issue) for issue in issues if issue]
