"""Analytics tables: metric snapshots pulled from connectors or imported, the insight rows computed from them, and the
account's swipe file (external items with their views, which ideation records and analytics ranks)."""

from __future__ import annotations

import uuid
from datetime import datetime
from typing import Any

from sqlalchemy import BigInteger, Float, ForeignKey, Index, String, UniqueConstraint
from sqlalchemy.orm import Mapped, mapped_column

from toolhost.db.base import Base, new_id, utcnow


class MetricSnapshot(Base):
    """The cumulative counters of one published post at one moment (webhook snapshots stay in connector_events)."""

    __tablename__ = "metric_snapshots"
    __table_args__ = (Index("ix_metric_snapshots_post_captured", "post_id", "captured_at"),)

    id: Mapped[uuid.UUID] = mapped_column(primary_key=True, default=new_id)
    project_id: Mapped[uuid.UUID] = mapped_column(ForeignKey("projects.id", ondelete="CASCADE"), index=True)
    post_id: Mapped[uuid.UUID] = mapped_column(ForeignKey("posts.id", ondelete="CASCADE"))
    platform: Mapped[str] = mapped_column(String(20))
    captured_at: Mapped[datetime] = mapped_column(default=utcnow)
    views: Mapped[int | None] = mapped_column(BigInteger, default=None, doc="null when the platform reports none")
    likes: Mapped[int] = mapped_column(BigInteger, default=0)
    comments: Mapped[int] = mapped_column(BigInteger, default=0)
    shares: Mapped[int] = mapped_column(BigInteger, default=0)
    saves: Mapped[int | None] = mapped_column(BigInteger, default=None)
    watch_time_minutes: Mapped[float | None] = mapped_column(Float, default=None)
    source: Mapped[str] = mapped_column(String(20), doc="connector (a refresh) or import (an operator's file)")


class PerformanceInsight(Base):
    """One computed insight of a project (top hooks, timing, models, competitor patterns)."""

    __tablename__ = "performance_insights"
    __table_args__ = (Index("ix_performance_insights_project_type", "project_id", "insight_type", "generated_at"),)

    id: Mapped[uuid.UUID] = mapped_column(primary_key=True, default=new_id)
    project_id: Mapped[uuid.UUID] = mapped_column(ForeignKey("projects.id", ondelete="CASCADE"))
    insight_type: Mapped[str] = mapped_column(
        String(30), doc="top_hooks, optimal_timing, best_models, competitor_patterns"
    )
    insight_data: Mapped[dict[str, Any]] = mapped_column()
    confidence_score: Mapped[float] = mapped_column(Float)
    generated_at: Mapped[datetime] = mapped_column(default=utcnow)


class SwipeItem(Base):
    """An external item (article, video, feed entry) the account read through fetch_trends or extraction."""

    __tablename__ = "swipe_items"
    __table_args__ = (UniqueConstraint("account_id", "item_key"),)

    id: Mapped[uuid.UUID] = mapped_column(primary_key=True, default=new_id)
    account_id: Mapped[uuid.UUID] = mapped_column(ForeignKey("accounts.id", ondelete="CASCADE"), index=True)
    item_key: Mapped[str] = mapped_column(String(64), doc="sha256 of url and title: one row per item")
    url: Mapped[str | None] = mapped_column(String(2048), default=None)
    title: Mapped[str] = mapped_column(String(1000))
    views: Mapped[int | None] = mapped_column(BigInteger, default=None)
    published_at: Mapped[datetime | None] = mapped_column(default=None)
    source: Mapped[str] = mapped_column(String(40))
    captured_at: Mapped[datetime] = mapped_column(default=utcnow)
