"""Content plans: a stored payload of posts with a status of the plan state machine."""

from __future__ import annotations

import uuid
from datetime import datetime
from typing import Any

from sqlalchemy import ForeignKey, String
from sqlalchemy.orm import Mapped, mapped_column

from toolhost.db.base import REFERENCES_MEDIA, Base, new_id, utcnow


class ContentPlan(Base):
    """A plan of posts; `payload` is the ContentPlan of CATALOG.md §7 as stored."""

    __tablename__ = "content_plans"

    id: Mapped[uuid.UUID] = mapped_column(primary_key=True, default=new_id)
    project_id: Mapped[uuid.UUID] = mapped_column(ForeignKey("projects.id", ondelete="CASCADE"), index=True)
    topic: Mapped[str] = mapped_column(String(10_000))
    status: Mapped[str] = mapped_column(String(20), default="draft")
    payload: Mapped[dict[str, Any]] = mapped_column(info={REFERENCES_MEDIA: True})
    created_at: Mapped[datetime] = mapped_column(default=utcnow)
    updated_at: Mapped[datetime] = mapped_column(default=utcnow, onupdate=utcnow)
