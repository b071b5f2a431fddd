"""The media objects table: every key in the media store, whose it is and what it holds."""

from __future__ import annotations

import uuid
from datetime import datetime

from sqlalchemy import BigInteger, Boolean, Float, ForeignKey, Integer, String, false
from sqlalchemy.orm import Mapped, mapped_column

from toolhost.db.base import Base, new_id, utcnow


class MediaObject(Base):
    """A stored file; `key` is its media-store key (CATALOG.md §1.13), the `r2_key` callers pass around."""

    __tablename__ = "media_objects"

    id: Mapped[uuid.UUID] = mapped_column(primary_key=True, default=new_id)
    key: Mapped[str] = mapped_column(String(1024), unique=True)
    account_id: Mapped[uuid.UUID] = mapped_column(ForeignKey("accounts.id", ondelete="CASCADE"), index=True)
    project_id: Mapped[uuid.UUID | None] = mapped_column(
        ForeignKey("projects.id", ondelete="CASCADE"), default=None, index=True
    )
    kind: Mapped[str] = mapped_column(String(20), doc="uploads, or the job type that produced it")
    content_type: Mapped[str] = mapped_column(String(100))
    size: Mapped[int] = mapped_column(BigInteger)
    sha256: Mapped[str] = mapped_column(String(64))
    file_name: Mapped[str | None] = mapped_column(String(255), default=None)
    job_id: Mapped[uuid.UUID | None] = mapped_column(default=None, index=True)
    # Measured from the bytes when stored (providers.media_facts), for the platforms' media rules.
    width: Mapped[int | None] = mapped_column(Integer, default=None)
    height: Mapped[int | None] = mapped_column(Integer, default=None)
    duration_seconds: Mapped[float | None] = mapped_column(Float, default=None)
    animated: Mapped[bool] = mapped_column(Boolean, default=False, server_default=false())
    # A job's output row commits before its file is written and is unusable until the job completes with it;
    # one whose job ended otherwise is swept (media.retention) with its file.
    awaiting_completion: Mapped[bool] = mapped_column(Boolean, default=False, server_default=false())
    created_at: Mapped[datetime] = mapped_column(default=utcnow)
