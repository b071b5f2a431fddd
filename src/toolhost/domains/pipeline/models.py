"""Pipeline runs: one row per run_content_pipeline call, updated stage by stage."""

from __future__ import annotations

import uuid
from datetime import datetime
from typing import Any

from sqlalchemy import ForeignKey, Index, String
from sqlalchemy.orm import Mapped, mapped_column

from toolhost.db.base import Base, new_id, utcnow


class PipelineRun(Base):
    """A run of the pipeline machine (CATALOG.md §1.6): running -> completed|awaiting_approval|paused|failed."""

    __tablename__ = "pipeline_runs"
    __table_args__ = (Index("ix_pipeline_runs_project_created", "project_id", "created_at"),)

    id: Mapped[uuid.UUID] = mapped_column(primary_key=True, default=new_id)
    project_id: Mapped[uuid.UUID] = mapped_column(ForeignKey("projects.id", ondelete="CASCADE"))
    plan_id: Mapped[uuid.UUID | None] = mapped_column(ForeignKey("content_plans.id", ondelete="SET NULL"), default=None)
    config: Mapped[dict[str, Any]] = mapped_column()
    status: Mapped[str] = mapped_column(String(20), default="running")
    current_stage: Mapped[str | None] = mapped_column(String(30), default=None)
    stages_completed: Mapped[list[Any]] = mapped_column(default=list)
    stages_skipped: Mapped[list[Any]] = mapped_column(default=list)
    posts_generated: Mapped[int] = mapped_column(default=0)
    posts_approved: Mapped[int] = mapped_column(default=0)
    posts_scheduled: Mapped[int] = mapped_column(default=0)
    posts_flagged: Mapped[int] = mapped_column(default=0)
    credits_used: Mapped[int] = mapped_column(default=0)
    errors: Mapped[list[Any]] = mapped_column(default=list)
    started_at: Mapped[datetime] = mapped_column(default=utcnow)
    completed_at: Mapped[datetime | None] = mapped_column(default=None)
    created_at: Mapped[datetime] = mapped_column(default=utcnow)
    updated_at: Mapped[datetime] = mapped_column(default=utcnow, onupdate=utcnow)
