"""The brand tables: every saved version of a project's brand profile (the latest is the active one)."""

from __future__ import annotations

import uuid
from datetime import datetime
from typing import Any

from sqlalchemy import Float, ForeignKey, Integer, String, Text, UniqueConstraint
from sqlalchemy.orm import Mapped, mapped_column

from toolhost.db.base import REFERENCES_MEDIA, Base, new_id, utcnow


class BrandProfileVersion(Base):
    """One version of a project's brand; saving changed content adds a version, earlier ones are kept."""

    __tablename__ = "brand_profile_versions"
    __table_args__ = (UniqueConstraint("project_id", "version"),)

    id: Mapped[uuid.UUID] = mapped_column(primary_key=True, default=new_id)
    project_id: Mapped[uuid.UUID] = mapped_column(ForeignKey("projects.id", ondelete="CASCADE"), index=True)
    version: Mapped[int] = mapped_column(Integer)
    brand_name: Mapped[str | None] = mapped_column(String(200), default=None)
    brand_context: Mapped[dict[str, Any]] = mapped_column(doc="the brand_context exactly as saved")
    profile_data: Mapped[dict[str, Any]] = mapped_column(
        doc="the canonical shape every brand tool reads", info={REFERENCES_MEDIA: True}
    )
    content_hash: Mapped[str] = mapped_column(String(64), doc="SHA-256 of what a save compares to detect no-ops")
    change_summary: Mapped[str | None] = mapped_column(Text, default=None)
    changed_paths: Mapped[list[Any]] = mapped_column(default=list)
    source_url: Mapped[str | None] = mapped_column(String(2048), default=None)
    extraction_method: Mapped[str] = mapped_column(String(40), default="manual")
    extraction_metadata: Mapped[dict[str, Any]] = mapped_column(default=dict)
    overall_confidence: Mapped[float | None] = mapped_column(Float, default=None)
    default_style_ref_url: Mapped[str | None] = mapped_column(String(2048), default=None)
    created_at: Mapped[datetime] = mapped_column(default=utcnow)
