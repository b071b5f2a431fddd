"""Approval items: one decision per (plan, post)."""

from __future__ import annotations

import uuid
from datetime import datetime
from typing import Any

from sqlalchemy import ForeignKey, String, Text, UniqueConstraint
from sqlalchemy.orm import Mapped, mapped_column

from toolhost.db.base import REFERENCES_MEDIA, Base, new_id, utcnow


class ApprovalItem(Base):
    """A post of a plan waiting for, or carrying, a person's decision."""

    __tablename__ = "approval_items"
    __table_args__ = (UniqueConstraint("plan_id", "post_id"),)

    id: Mapped[uuid.UUID] = mapped_column(primary_key=True, default=new_id)
    plan_id: Mapped[uuid.UUID] = mapped_column(ForeignKey("content_plans.id", ondelete="CASCADE"), index=True)
    post_id: Mapped[str] = mapped_column(String(1_000))
    project_id: Mapped[uuid.UUID] = mapped_column(ForeignKey("projects.id", ondelete="CASCADE"), index=True)
    status: Mapped[str] = mapped_column(String(20), default="pending")
    reason: Mapped[str | None] = mapped_column(Text, default=None)
    decided_at: Mapped[datetime | None] = mapped_column(default=None)
    decided_by: Mapped[str | None] = mapped_column(String(200), default=None)
    auto_approved: Mapped[bool] = mapped_column(default=False)
    original_post: Mapped[dict[str, Any]] = mapped_column()
    edited_post: Mapped[dict[str, Any] | None] = mapped_column(default=None, info={REFERENCES_MEDIA: True})
    created_at: Mapped[datetime] = mapped_column(default=utcnow)
    updated_at: Mapped[datetime] = mapped_column(default=utcnow, onupdate=utcnow)
