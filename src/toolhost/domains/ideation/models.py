"""Ideation tables: the fetched-trends cache (the swipe file it feeds is analytics' `SwipeItem`)."""

from __future__ import annotations

import uuid
from datetime import datetime
from typing import Any

from sqlalchemy import ForeignKey, String, UniqueConstraint
from sqlalchemy.orm import Mapped, mapped_column

from toolhost.db.base import Base, new_id, utcnow


class TrendCache(Base):
    """A fetch_trends result kept for an hour per (account, source, url, category, niche)."""

    __tablename__ = "trend_cache"
    __table_args__ = (UniqueConstraint("account_id", "cache_key"),)

    id: Mapped[uuid.UUID] = mapped_column(primary_key=True, default=new_id)
    account_id: Mapped[uuid.UUID] = mapped_column(ForeignKey("accounts.id", ondelete="CASCADE"), index=True)
    cache_key: Mapped[str] = mapped_column(String(64))
    source: Mapped[str] = mapped_column(String(40))
    trends: Mapped[list[Any]] = mapped_column()
    fetched_at: Mapped[datetime] = mapped_column(default=utcnow)
    expires_at: Mapped[datetime] = mapped_column()
