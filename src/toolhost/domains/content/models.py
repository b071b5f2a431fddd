"""Content records: every generated result of a project, with the model that made it."""

from __future__ import annotations

import uuid
from datetime import datetime
from typing import Any

from sqlalchemy import ForeignKey, Index, String, Text
from sqlalchemy.orm import Mapped, mapped_column

from toolhost.db.base import Base, new_id, utcnow


class ContentRecord(Base):
    """One generated result (id = content_id): text, adaptation, storyboard, carousel, image, video, ..."""

    __tablename__ = "content_records"
    __table_args__ = (Index("ix_content_records_project_created", "project_id", "created_at"),)

    id: Mapped[uuid.UUID] = mapped_column(primary_key=True, default=new_id)
    project_id: Mapped[uuid.UUID] = mapped_column(ForeignKey("projects.id", ondelete="CASCADE"))
    kind: Mapped[str] = mapped_column(
        String(20), doc="text|adaptation|storyboard|carousel|image|video|voiceover|render"
    )
    content_type: Mapped[str | None] = mapped_column(String(20), default=None)
    platform: Mapped[str | None] = mapped_column(String(30), default=None)
    model: Mapped[str] = mapped_column(String(200))
    prompt: Mapped[str] = mapped_column(Text, doc="the prompt, concept or topic it was made from")
    text: Mapped[str | None] = mapped_column(Text, default=None)
    data: Mapped[dict[str, Any] | None] = mapped_column(default=None, doc="structured output (frames, slides)")
    created_at: Mapped[datetime] = mapped_column(default=utcnow)
