"""The project's brand runtime and consistency score, read through the brand domain's service."""

from __future__ import annotations

import importlib
import inspect
import uuid
from typing import Any

from sqlalchemy.ext.asyncio import AsyncSession


def _brand_service() -> Any | None:
    # The brand domain is built alongside this one; until its service exists, generation and the
    # quality score work without a brand (keyword and avoid-pattern fallback), as they do for a
    # project that has no profile.
    try:
        return importlib.import_module("toolhost.domains.brand.service")
    except ModuleNotFoundError:
        return None


async def get_runtime(session: AsyncSession, project_id: uuid.UUID) -> dict[str, Any] | None:
    """The get_brand_runtime payload of the project's active profile, or None without one."""
    service = _brand_service()
    if service is None or not hasattr(service, "get_runtime"):
        return None
    runtime = service.get_runtime(session=session, project_id=project_id)
    if inspect.isawaitable(runtime):
        runtime = await runtime
    if not runtime or (isinstance(runtime, dict) and runtime.get("found") is False):
        return None
    return runtime if isinstance(runtime, dict) else None


def consistency(runtime: dict[str, Any], text: str) -> tuple[int, list[str]] | None:
    """The brand consistency score (0-100) of a text and its first issues, if available."""
    service = _brand_service()
    if service is None or not hasattr(service, "score_consistency") or not text.strip():
        return None
    result = service.score_consistency(runtime, text)
    issues = [issue.suggestion or issue.rule for issue in getattr(result, "issues", [])[:2]]
    return int(result.overall), [str(issue) for issue in issues if issue]
