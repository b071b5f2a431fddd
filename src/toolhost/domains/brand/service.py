"""Brand services: versioned profiles, the runtime other domains read, extraction, checks, audits, tokens.

Other domains call `get_runtime(session=, project_id=)` (the get_brand_runtime payload, or None) and
the pure `score_consistency(runtime, text)`.
"""

from __future__ import annotations

import asyncio
import hashlib
import json
import uuid
from dataclasses import dataclass
from typing import Any

from sqlalchemy import func, select
from sqlalchemy.ext.asyncio import AsyncSession

from toolhost.config import FetchSettings
from toolhost.domains.brand import colors, draft, extraction, html_extract
from toolhost.domains.brand.consistency import ConsistencyResult, score_consistency
from toolhost.domains.brand.models import BrandProfileVersion
from toolhost.domains.brand.profile import filled_fields, is_empty, resolve_shape
from toolhost.domains.brand.runtime import BrandExplanation, build_runtime, explain
from toolhost.platform.results import NotFound, ValidationFailed
from toolhost.providers.fetch import Fetcher

__all__ = [
    "BrandExplanation",
    "ConsistencyResult",
    "PlatformVoice",
    "audit_colors",
    "check",
    "explain_system",
    "export_tokens",
    "extract",
    "get_active",
    "get_runtime",
    "save",
    "score_consistency",
    "update_platform_voice",
]

NO_PROFILE = "No brand profile found. Cannot check consistency without brand data."
NO_PALETTE = "No brand color palette found. Extract a brand profile first."
RECOVER = "call extract_brand, then save_brand_profile"


async def get_active(*, session: AsyncSession, project_id: uuid.UUID) -> BrandProfileVersion | None:
    """The project's latest profile version, or None."""
    return await session.scalar(
        select(BrandProfileVersion)
        .where(BrandProfileVersion.project_id == project_id)
        .order_by(BrandProfileVersion.version.desc())
        .limit(1)
    )


async def get_runtime(*, session: AsyncSession, project_id: uuid.UUID) -> dict[str, Any] | None:
    """The four-layer runtime of the project's active profile (get_brand_runtime's payload), or None."""
    active = await get_active(session=session, project_id=project_id)
    return build_runtime(active.profile_data) if active is not None else None


def _content_hash(profile: dict[str, Any], record: dict[str, Any]) -> str:
    document = json.dumps({"profile": profile, **record}, sort_keys=True, ensure_ascii=False, default=str)
    return hashlib.sha256(document.encode()).hexdigest()


def _changed_paths(previous: dict[str, Any] | None, current: dict[str, Any]) -> list[str]:
    def leaves(value: Any, path: str = "") -> dict[str, Any]:
        if isinstance(value, dict):
            found: dict[str, Any] = {}
            for key, item in value.items():
                found.update(leaves(item, f"{path}.{key}" if path else key))
            return found
        return {path: value}

    before, after = leaves(previous or {}), leaves(current)
    return sorted(path for path in before.keys() | after.keys() if before.get(path) != after.get(path))[:200]


def _stated_confidence(profile: dict[str, Any], method: str, overall: float | None) -> None:
    confidence = profile["confidence"]
    fields = confidence["fields"]
    for path in filled_fields(profile):
        top = path.split(".")[0]
        if path not in fields and top not in fields and not any(key.startswith(top + ".") for key in fields):
            fields[path] = {"value": 1.0, "source": "stated"}  # a person wrote it down
    if overall is not None:
        confidence["overall"] = overall
    elif confidence["overall"] is None:
        values = [item["value"] for item in fields.values()]
        confidence["overall"] = round(sum(values) / len(values), 2) if values else 0.0
    confidence["provider"] = confidence["provider"] or ("manual" if method == "manual" else "builtin")


async def save(
    *,
    session: AsyncSession,
    project_id: uuid.UUID,
    brand_context: dict[str, Any],
    change_summary: str | None = None,
    changed_paths: list[str] | None = None,
    source_url: str | None = None,
    extraction_method: str = "manual",
    overall_confidence: float | None = None,
    extraction_metadata: dict[str, Any] | None = None,
) -> tuple[BrandProfileVersion, bool]:
    """Saves a full replacement as a new version; identical content returns the active version unchanged."""
    if not brand_context:
        raise ValidationFailed(
            "brand_context is empty",
            recover_with=RECOVER,
            field_errors=[{"path": "brand_context", "message": "give at least one brand field"}],
        )
    profile, shape = resolve_shape(brand_context)
    _stated_confidence(profile, extraction_method, overall_confidence)
    metadata = dict(extraction_metadata or {})
    metadata.setdefault("shape", shape)
    if is_empty(profile):
        metadata["stub"] = True  # nothing recognisable: kept as saved, every layer reported missing
    record = {
        "source_url": source_url,
        "extraction_method": extraction_method,
        "metadata": metadata,
        "brand_context": brand_context,
    }
    digest = _content_hash(profile, record)
    active = await get_active(session=session, project_id=project_id)
    if active is not None and active.content_hash == digest:
        return active, False
    version = (
        await session.scalar(
            select(func.max(BrandProfileVersion.version)).where(BrandProfileVersion.project_id == project_id)
        )
        or 0
    ) + 1
    row = BrandProfileVersion(
        project_id=project_id,
        version=version,
        brand_name=(profile.get("brandName") or None) and str(profile["brandName"])[:200],
        brand_context=brand_context,
        profile_data=profile,
        content_hash=digest,
        change_summary=change_summary,
        changed_paths=changed_paths or _changed_paths(active.profile_data if active else None, profile),
        source_url=source_url,
        extraction_method=extraction_method,
        extraction_metadata=metadata,
        overall_confidence=profile["confidence"]["overall"],
    )
    session.add(row)
    await session.flush()
    return row, True


@dataclass(frozen=True, slots=True)
class PlatformVoice:
    """One platform's voice override as saved."""

    tone: list[str]
    style: list[str]
    sample_content: str
    hashtag_strategy: str
    cta_style: str
    avoid_patterns: list[str]


async def update_platform_voice(
    *,
    session: AsyncSession,
    project_id: uuid.UUID,
    platform: str,
    samples: str | None = None,
    tone: list[str] | None = None,
    style: list[str] | None = None,
    avoid_patterns: list[str] | None = None,
    hashtag_strategy: str | None = None,
    cta_style: str | None = None,
) -> tuple[BrandProfileVersion, PlatformVoice]:
    """Sets one platform's voice override as a new version: given fields replace, omitted (None) ones stay."""
    active = await get_active(session=session, project_id=project_id)
    if active is None:
        raise NotFound("No active brand profile found for this project.", recover_with=RECOVER)
    changes: dict[str, Any] = {
        key: value
        for key, value in (
            ("sampleContent", samples),
            ("tone", tone),
            ("style", style),
            ("avoidPatterns", avoid_patterns),
            ("hashtagStrategy", hashtag_strategy),
            ("ctaStyle", cta_style),
        )
        if value is not None
    }
    context = json.loads(json.dumps(active.profile_data))
    overrides = context["voiceProfile"].setdefault("platformOverrides", {})
    override = overrides.get(platform) or {
        "tone": [],
        "style": [],
        "sampleContent": "",
        "hashtagStrategy": "",
        "ctaStyle": "",
        "avoidPatterns": [],
    }
    override.update(changes)
    overrides[platform] = override
    row, _ = await save(
        session=session,
        project_id=project_id,
        brand_context=context,
        change_summary=f"platform voice for {platform}",
        changed_paths=[f"voiceProfile.platformOverrides.{platform}.{key}" for key in changes],
        source_url=active.source_url,
        extraction_method=active.extraction_method,
        overall_confidence=active.overall_confidence,
        extraction_metadata=active.extraction_metadata,
    )
    saved = row.profile_data["voiceProfile"]["platformOverrides"][platform]
    return row, PlatformVoice(
        tone=saved["tone"],
        style=saved["style"],
        sample_content=saved["sampleContent"],
        hashtag_strategy=saved["hashtagStrategy"],
        cta_style=saved["ctaStyle"],
        avoid_patterns=saved["avoidPatterns"],
    )


async def explain_system(*, session: AsyncSession, project_id: uuid.UUID) -> BrandExplanation | None:
    """explain_brand_system's report, or None without a profile."""
    active = await get_active(session=session, project_id=project_id)
    return explain(active.profile_data) if active is not None else None


async def check(*, session: AsyncSession, project_id: uuid.UUID, content: str) -> ConsistencyResult:
    """check_brand_consistency against the project's active profile."""
    if not content.strip():
        raise ValidationFailed("content is empty", field_errors=[{"path": "content", "message": "give the text"}])
    runtime = await get_runtime(session=session, project_id=project_id)
    if runtime is None:
        raise NotFound(NO_PROFILE, recover_with=RECOVER)
    return score_consistency(runtime, content)


async def _palette(session: AsyncSession, project_id: uuid.UUID) -> tuple[dict[str, Any], dict[str, Any]]:
    active = await get_active(session=session, project_id=project_id)
    palette = (active.profile_data.get("colorPalette") or {}) if active else {}
    if not colors.palette_colors(palette):
        raise NotFound(NO_PALETTE, recover_with=RECOVER)
    assert active is not None
    return palette, active.profile_data.get("typography") or {}


async def audit_colors(
    *, session: AsyncSession, project_id: uuid.UUID, content_colors: list[str], threshold: float
) -> colors.ColorAudit:
    """audit_brand_colors: each colour against the project's palette, and the palette's contrast."""
    palette, _ = await _palette(session, project_id)
    return colors.audit(content_colors, palette, threshold)


async def export_tokens(*, session: AsyncSession, project_id: uuid.UUID, fmt: str) -> str:
    """export_design_tokens' tokens text."""
    palette, typography = await _palette(session, project_id)
    return colors.export_tokens(fmt, palette, typography)


async def extract(
    *, fetch_settings: FetchSettings, url: str | None, html: str | None, text: str | None
) -> draft.BrandDraft:
    """extract_brand: reads the site (or the given HTML or text) and returns a draft; nothing is saved.

    The draft's text analysis (tagging, key terms, voice, palette) is CPU work of tens of milliseconds: it
    runs in a worker thread, so the event loop keeps answering other calls meanwhile.
    """
    if url is not None:
        fetcher = Fetcher(fetch_settings)
        sources = await extraction.gather_url(fetcher, extraction.resolve_url(url))
        logo = html_extract.best_logo(sources.pages)[0]
        logo_color = await extraction.logo_color(fetcher, logo)
        return await asyncio.to_thread(draft.build_draft, sources, logo_color)
    if html is not None:
        page = await asyncio.to_thread(html_extract.read_page, html, "")
        return await asyncio.to_thread(draft.build_draft, extraction.Sources(pages=[page], method="html"), None)
    return await asyncio.to_thread(draft.build_draft, extraction.Sources(method="text"), None, text or "")
