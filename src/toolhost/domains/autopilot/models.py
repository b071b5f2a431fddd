"""Autopilot tables: the configs (a schedule, budgets and what to run) and the runs the worker started."""

from __future__ import annotations

import uuid
from datetime import datetime
from typing import Any

from sqlalchemy import Boolean, Float, ForeignKey, Index, String, Text, UniqueConstraint
from sqlalchemy.orm import Mapped, mapped_column

from toolhost.db.base import Base, new_id, utcnow


class AutopilotConfig(Base):
    """A standing automation: when it runs (weekdays + HH:MM in its timezone), what it runs, and its budgets."""

    __tablename__ = "autopilot_configs"
    __table_args__ = (Index("ix_autopilot_configs_due", "is_active", "next_run_at"),)

    id: Mapped[uuid.UUID] = mapped_column(primary_key=True, default=new_id)
    project_id: Mapped[uuid.UUID] = mapped_column(ForeignKey("projects.id", ondelete="CASCADE"), index=True)
    name: Mapped[str] = mapped_column(String(100))
    mode: Mapped[str] = mapped_column(String(20), doc="pipeline or recipe")
    recipe_slug: Mapped[str | None] = mapped_column(String(100), default=None)
    recipe_inputs: Mapped[dict[str, Any] | None] = mapped_column(default=None)
    topic: Mapped[str | None] = mapped_column(String(500), default=None)
    platforms: Mapped[list[Any] | None] = mapped_column(default=None)
    schedule_days: Mapped[list[Any]] = mapped_column(doc="weekday names mon..sun, in week order")
    schedule_time: Mapped[str] = mapped_column(String(5), doc="HH:MM, 24 h, in the config's timezone")
    timezone: Mapped[str] = mapped_column(String(64), default="UTC")
    approval_mode: Mapped[str] = mapped_column(String(30), default="review_low_confidence")
    max_credits_per_run: Mapped[float | None] = mapped_column(Float, default=None)
    max_credits_per_week: Mapped[float | None] = mapped_column(Float, default=None)
    is_active: Mapped[bool] = mapped_column(Boolean, default=True)
    creator: Mapped[dict[str, Any]] = mapped_column(
        doc="the creating credential (account, credential id and name, project binding); scopes are re-read per run"
    )
    next_run_at: Mapped[datetime | None] = mapped_column(default=None, doc="the next due time (UTC); null when paused")
    last_run_at: Mapped[datetime | None] = mapped_column(default=None)
    created_at: Mapped[datetime] = mapped_column(default=utcnow)
    updated_at: Mapped[datetime] = mapped_column(default=utcnow, onupdate=utcnow)


class AutopilotRun(Base):
    """One due time of a config: the run it started (pipeline or recipe run), or why it was skipped.

    `config_id` is not a foreign key: deleting a config keeps its past runs (CATALOG.md §13).
    """

    __tablename__ = "autopilot_runs"
    # One run per config and due time, so two workers never start the same occurrence.
    __table_args__ = (UniqueConstraint("config_id", "due_at"),)

    id: Mapped[uuid.UUID] = mapped_column(primary_key=True, default=new_id)
    config_id: Mapped[uuid.UUID] = mapped_column(index=True)
    project_id: Mapped[uuid.UUID] = mapped_column(ForeignKey("projects.id", ondelete="CASCADE"), index=True)
    mode: Mapped[str] = mapped_column(String(20))
    status: Mapped[str] = mapped_column(
        String(30), doc="running, completed, awaiting_approval, paused, failed, skipped (pipeline or recipe machine)"
    )
    reason: Mapped[str | None] = mapped_column(Text, default=None, doc="why a run was skipped or failed")
    due_at: Mapped[datetime] = mapped_column()
    started_at: Mapped[datetime] = mapped_column(default=utcnow)
    completed_at: Mapped[datetime | None] = mapped_column(default=None)
    credits_used: Mapped[int] = mapped_column(default=0)
    pipeline_id: Mapped[str | None] = mapped_column(String(64), default=None)
    recipe_run_id: Mapped[uuid.UUID | None] = mapped_column(default=None)
    arguments: Mapped[dict[str, Any] | None] = mapped_column(default=None, doc="the arguments the run was started with")
    created_at: Mapped[datetime] = mapped_column(default=utcnow)
    updated_at: Mapped[datetime] = mapped_column(default=utcnow, onupdate=utcnow)
