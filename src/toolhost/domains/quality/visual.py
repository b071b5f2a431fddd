"""The visual gate (CATALOG.md §9): predicts, from font metrics and before anything is rendered, which slide
fields overflow their layout, which slides are at risk, and which words look misspelled."""

from __future__ import annotations

import time
import uuid
from datetime import UTC, datetime
from typing import Any

from sqlalchemy.ext.asyncio import AsyncSession

from toolhost.domains.brand import service as brand_service
from toolhost.domains.content.service import LAYOUTS, layout_for, line_count, slide_fields
from toolhost.domains.quality import spelling
from toolhost.platform.dates import iso

SINGLE_LINE_HINT_CHARS = 30
CHARS_PER_LINE_HINT = 28
MIN_HINT_CHARS = 20


def constraints(layout: str | None = None) -> dict[str, dict[str, dict[str, Any]]]:
    """visual_gate_constraints: one layout's fields, or all seven."""
    names = [layout] if layout else list(LAYOUTS)
    return {name: {field: spec.as_constraints() for field, spec in LAYOUTS[name].items()} for name in names}


def _hint(issue: dict[str, Any]) -> str:
    if issue["kind"] == "single-line-exceeded":
        return f"{issue['field']}: must fit on one line \u2014 shorten to under {SINGLE_LINE_HINT_CHARS} characters"
    chars = max(MIN_HINT_CHARS, round(issue["maxLines"] * CHARS_PER_LINE_HINT))
    return (
        f"{issue['field']}: too long ({issue['estimatedLines']} lines, max {issue['maxLines']})"
        f" \u2014 cut to about {chars} chars"
    )


def check_slides(
    slides: list[dict[str, Any]], *, visual_style: str, vocabulary: frozenset[str] = frozenset()
) -> dict[str, Any]:
    """The pre-render verdict on a deck. slideIdx is the slide's 0-based position in `slides`."""
    overflow: list[dict[str, Any]] = []
    spelling_issues: list[dict[str, Any]] = []
    high_risk: list[int] = []
    for index, slide in enumerate(slides):
        chosen = slide.get("layout")
        if isinstance(chosen, str) and chosen:
            layout = chosen  # a slide may name its layout; the gate then checks that one
        else:
            layout = layout_for(slide, position=index, count=len(slides), visual_style=visual_style)
        if layout not in LAYOUTS:
            overflow.append(
                {
                    "slideIdx": index,
                    "field": "(unknown-layout)",
                    "kind": "overflow",
                    "detail": f'layout "{layout[:100]}" is not one of: {", ".join(LAYOUTS)}',
                    "estimatedLines": 0,
                    "maxLines": 0,
                }
            )
            continue
        risky = False
        for field, text in slide_fields(slide, layout):
            spec = LAYOUTS[layout][field]
            lines = line_count(text, spec)
            risky = risky or lines > spec.expected_lines + 1
            where = f"{layout} {field} ({spec.font_size}px in {spec.width_px}px)"
            if spec.single_line and lines > 1:
                overflow.append(
                    {
                        "slideIdx": index,
                        "field": field,
                        "kind": "single-line-exceeded",
                        "detail": f"{where} takes {lines} lines; it must fit on one",
                        "estimatedLines": lines,
                        "maxLines": 1,
                    }
                )
            elif lines > spec.max_lines:
                overflow.append(
                    {
                        "slideIdx": index,
                        "field": field,
                        "kind": "overflow",
                        "detail": f"{where} takes {lines} lines; at most {spec.max_lines} fit",
                        "estimatedLines": lines,
                        "maxLines": spec.max_lines,
                    }
                )
            for word in spelling.misspelled(text, vocabulary):
                spelling_issues.append({"slideIdx": index, "field": field, "word": word})
        if risky:
            high_risk.append(index)
    hints = list(dict.fromkeys(_hint(issue) for issue in overflow))  # one hint per distinct fix
    return {
        "passed": not overflow,
        "preRender": {
            "ok": not overflow,
            "overflowIssues": overflow,
            "spellingIssues": spelling_issues,
            "highRiskSlideIdx": high_risk,
        },
        "correctiveHint": ". ".join(hints) if hints else None,
    }


async def visual_check(
    *, session: AsyncSession, project_id: uuid.UUID | None, slides: list[dict[str, Any]], visual_style: str
) -> dict[str, Any]:
    """visual_quality_check: the deck checked against its layouts, spelled against the project's brand when
    one resolves. Never renders, so `attempts` is always 0."""
    started = time.perf_counter()
    runtime = await brand_service.get_runtime(session=session, project_id=project_id) if project_id else None
    result = check_slides(slides, visual_style=visual_style, vocabulary=spelling.brand_vocabulary(runtime))
    return {
        **result,
        "attempts": 0,
        "elapsedMs": round((time.perf_counter() - started) * 1000),
        "checkedAt": iso(datetime.now(UTC)),
    }
