"""The visual gate (CATALOG.md §9): predicts, from font metrics and before anything is rendered, which slide
fields overflow their layout, which slides are at risk, and which words look misspelled."""

from __future__ import annotations

import time
import uuid
from dataclasses import dataclass
from datetime import UTC, datetime
from typing import Any, Literal

from sqlalchemy.ext.asyncio import AsyncSession

from toolhost.domains.brand import service as brand_service
from toolhost.domains.content.service import LAYOUTS, layout_for, line_count, slide_fields
from toolhost.domains.quality import spelling

SINGLE_LINE_HINT_CHARS = 30
CHARS_PER_LINE_HINT = 28
MIN_HINT_CHARS = 20


def constraints(layout: str | None = None) -> dict[str, dict[str, dict[str, Any]]]:
    """visual_gate_constraints: one layout's fields, or all seven (each field's limits as the layout states them)."""
    names = [layout] if layout else list(LAYOUTS)
    return {name: {field: spec.as_constraints() for field, spec in LAYOUTS[name].items()} for name in names}


@dataclass(frozen=True, slots=True)
class Overflow:
    """A field predicted to take more lines than its layout allows (slide_index is 0-based)."""

    slide_index: int
    field: str
    kind: Literal["overflow", "single-line-exceeded"]
    detail: str
    estimated_lines: int
    max_lines: int


@dataclass(frozen=True, slots=True)
class Misspelling:
    """A word in neither the word list nor the brand's vocabulary."""

    slide_index: int
    field: str
    word: str


@dataclass(frozen=True, slots=True)
class Verdict:
    """The pre-render verdict on a deck: passed when no field overflows."""

    overflows: list[Overflow]
    misspellings: list[Misspelling]
    high_risk_slides: list[int]
    corrective_hint: str | None

    @property
    def passed(self) -> bool:
        return not self.overflows


@dataclass(frozen=True, slots=True)
class VisualCheck:
    """visual_quality_check's verdict, how long it took and when it was made."""

    verdict: Verdict
    elapsed_ms: int
    checked_at: datetime


def _hint(issue: Overflow) -> str:
    if issue.kind == "single-line-exceeded":
        return f"{issue.field}: must fit on one line \u2014 shorten to under {SINGLE_LINE_HINT_CHARS} characters"
    chars = max(MIN_HINT_CHARS, round(issue.max_lines * CHARS_PER_LINE_HINT))
    return (
        f"{issue.field}: too long ({issue.estimated_lines} lines, max {issue.max_lines})"
        f" \u2014 cut to about {chars} chars"
    )


def check_slides(
    slides: list[dict[str, Any]], *, visual_style: str, vocabulary: frozenset[str] = frozenset()
) -> Verdict:
    """The pre-render verdict on a deck (slides as the carousel's JSON, which the layouts read)."""
    overflow: list[Overflow] = []
    spelling_issues: list[Misspelling] = []
    high_risk: list[int] = []
    for index, slide in enumerate(slides):
        chosen = slide.get("layout")
        if isinstance(chosen, str) and chosen:
            layout = chosen  # a slide may name its layout; the gate then checks that one
        else:
            layout = layout_for(slide, position=index, count=len(slides), visual_style=visual_style)
        if layout not in LAYOUTS:
            overflow.append(
                Overflow(
                    slide_index=index,
                    field="(unknown-layout)",
                    kind="overflow",
                    detail=f'layout "{layout[:100]}" is not one of: {", ".join(LAYOUTS)}',
                    estimated_lines=0,
                    max_lines=0,
                )
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
                    Overflow(
                        slide_index=index,
                        field=field,
                        kind="single-line-exceeded",
                        detail=f"{where} takes {lines} lines; it must fit on one",
                        estimated_lines=lines,
                        max_lines=1,
                    )
                )
            elif lines > spec.max_lines:
                overflow.append(
                    Overflow(
                        slide_index=index,
                        field=field,
                        kind="overflow",
                        detail=f"{where} takes {lines} lines; at most {spec.max_lines} fit",
                        estimated_lines=lines,
                        max_lines=spec.max_lines,
                    )
                )
            for word in spelling.misspelled(text, vocabulary):
                spelling_issues.append(Misspelling(slide_index=index, field=field, word=word))
        if risky:
            high_risk.append(index)
    hints = list(dict.fromkeys(_hint(issue) for issue in overflow))  # one hint per distinct fix
    return Verdict(
        overflows=overflow,
        misspellings=spelling_issues,
        high_risk_slides=high_risk,
        corrective_hint=". ".join(hints) if hints else None,
    )


async def visual_check(
    *, session: AsyncSession, project_id: uuid.UUID | None, slides: list[dict[str, Any]], visual_style: str
) -> VisualCheck:
    """visual_quality_check: the deck checked against its layouts, spelled against the project's brand when
    one resolves. Never renders."""
    started = time.perf_counter()
    runtime = await brand_service.get_runtime(session=session, project_id=project_id) if project_id else None
    verdict = check_slides(slides, visual_style=visual_style, vocabulary=spelling.brand_vocabulary(runtime))
    return VisualCheck(
        verdict=verdict,
        elapsed_ms=round((time.perf_counter() - started) * 1000),
        checked_at=datetime.now(UTC),
    )
