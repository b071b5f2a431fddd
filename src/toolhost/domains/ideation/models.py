"""Ideation tables: the account's swipe file and the fetched-trends cache."""

from __future__ import annotations

import uuid
from datetime import datetime
from typing import Any

from sqlalchemy import BigInteger, ForeignKey, String, UniqueConstraint
from sqlalchemy.orm import Mapped, mapped_column

from toolhost.db.base import Base, new_id, utcnow


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
