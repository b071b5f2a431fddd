"""Distribution tables: connected accounts, connect links, posts, idempotency records, connector events."""

from __future__ import annotations

import uuid
from datetime import datetime
from typing import Any

from sqlalchemy import Boolean, ForeignKey, Index, Integer, String, Text, UniqueConstraint
from sqlalchemy.orm import Mapped, mapped_column

from toolhost.db.base import REFERENCES_MEDIA, Base, new_id, utcnow


class ConnectedAccount(Base):
    """A platform account a project publishes to, through one connector; tokens are encrypted at rest."""

    __tablename__ = "connected_accounts"
    __table_args__ = (Index("ix_connected_accounts_project_platform", "project_id", "platform"),)

    id: Mapped[uuid.UUID] = mapped_column(primary_key=True, default=new_id)
    project_id: Mapped[uuid.UUID] = mapped_column(ForeignKey("projects.id", ondelete="CASCADE"))
    platform: Mapped[str] = mapped_column(String(20))
    connector: Mapped[str] = mapped_column(String(20))
    username: Mapped[str | None] = mapped_column(String(300), default=None)
    status: Mapped[str] = mapped_column(
        String(20), default="active", doc="active, expires_soon, expired, revoked, error, needs_reauth"
    )
    settings: Mapped[dict[str, Any]] = mapped_column(default=dict, doc="non-secret connector settings (URLs, ids)")
    secret: Mapped[str] = mapped_column(Text, doc="Fernet token of the JSON of the token material")
    has_refresh_token: Mapped[bool] = mapped_column(Boolean, default=False)
    expires_at: Mapped[datetime | None] = mapped_column(default=None)
    error: Mapped[str | None] = mapped_column(Text, default=None, doc="why the platform refused the token")
    created_at: Mapped[datetime] = mapped_column(default=utcnow)
    updated_at: Mapped[datetime] = mapped_column(default=utcnow, onupdate=utcnow)


class ConnectionLink(Base):
    """A single-use link to the connect page; only the SHA-256 of its token is kept."""

    __tablename__ = "connection_links"

    id: Mapped[uuid.UUID] = mapped_column(primary_key=True, default=new_id)
    token_hash: Mapped[str] = mapped_column(String(64), unique=True)
    project_id: Mapped[uuid.UUID] = mapped_column(ForeignKey("projects.id", ondelete="CASCADE"), index=True)
    platform: Mapped[str] = mapped_column(String(20))
    created_at: Mapped[datetime] = mapped_column(default=utcnow)
    expires_at: Mapped[datetime] = mapped_column(doc="must be opened before this")
    opened_at: Mapped[datetime | None] = mapped_column(default=None)
    oauth_state: Mapped[str | None] = mapped_column(String(64), default=None, unique=True)
    oauth_settings: Mapped[dict[str, Any]] = mapped_column(default=dict, doc="instance URL, app ids of a flow")
    completed_at: Mapped[datetime | None] = mapped_column(default=None)
    connected_account_id: Mapped[uuid.UUID | None] = mapped_column(
        ForeignKey("connected_accounts.id", ondelete="SET NULL"), default=None
    )


class Post(Base):
    """One post on one platform, and its place in the status machine of CATALOG.md §1.6."""

    __tablename__ = "posts"
    __table_args__ = (
        Index("ix_posts_project_key", "project_id", "idempotency_key"),
        Index("ix_posts_due", "status", "due_at"),
        Index("ix_posts_project_created", "project_id", "created_at"),
        Index("ix_posts_project_platform_scheduled", "project_id", "platform", "scheduled_at"),
    )

    id: Mapped[uuid.UUID] = mapped_column(primary_key=True, default=new_id)
    project_id: Mapped[uuid.UUID] = mapped_column(ForeignKey("projects.id", ondelete="CASCADE"))
    account_id: Mapped[uuid.UUID] = mapped_column(ForeignKey("accounts.id", ondelete="CASCADE"), doc="who paid")
    connected_account_id: Mapped[uuid.UUID] = mapped_column(
        ForeignKey("connected_accounts.id", ondelete="CASCADE"), index=True
    )
    job_id: Mapped[uuid.UUID | None] = mapped_column(
        default=None, doc="the publish job: the unit the worker claims, leases and retries"
    )
    platform: Mapped[str] = mapped_column(String(20))
    status: Mapped[str] = mapped_column(String(20))
    caption: Mapped[str] = mapped_column(Text, default="")
    title: Mapped[str | None] = mapped_column(String(300), default=None)
    hashtags: Mapped[list[Any]] = mapped_column(default=list)
    media: Mapped[list[Any]] = mapped_column(
        default=list, doc="[{r2_key, content_type} | {url}]", info={REFERENCES_MEDIA: True}
    )
    media_type: Mapped[str | None] = mapped_column(String(20), default=None)
    platform_metadata: Mapped[dict[str, Any]] = mapped_column(default=dict)
    scheduled_at: Mapped[datetime | None] = mapped_column(default=None, doc="null = publish now")
    due_at: Mapped[datetime] = mapped_column(doc="when it is next due; its publish job's run_after")
    idempotency_key: Mapped[str] = mapped_column(String(160), doc="sent to the connector; stable across retries")
    attempt: Mapped[int] = mapped_column(Integer, default=0, doc="claims of its publish job so far")
    failures: Mapped[int] = mapped_column(Integer, default=0, doc="retryable connector failures so far")
    connector_state: Mapped[dict[str, Any]] = mapped_column(
        default=dict, doc="what a connector saved mid-publication (an upload session) to resume it"
    )
    external_post_id: Mapped[str | None] = mapped_column(String(300), default=None)
    external_url: Mapped[str | None] = mapped_column(String(2048), default=None)
    published_at: Mapped[datetime | None] = mapped_column(default=None)
    error: Mapped[str | None] = mapped_column(Text, default=None)
    credits: Mapped[int] = mapped_column(Integer, default=0, doc="debited for it; refunded once when it fails")
    refunded: Mapped[bool] = mapped_column(Boolean, default=False)
    plan_id: Mapped[uuid.UUID | None] = mapped_column(default=None, index=True)
    plan_post_id: Mapped[str | None] = mapped_column(String(200), default=None)
    created_at: Mapped[datetime] = mapped_column(default=utcnow)
    updated_at: Mapped[datetime] = mapped_column(default=utcnow, onupdate=utcnow)


class IdempotencyRecord(Base):
    """The first answer to a request key, replayed for 7 days (CATALOG.md §1.7)."""

    __tablename__ = "idempotency_records"
    __table_args__ = (UniqueConstraint("project_id", "key"),)

    id: Mapped[uuid.UUID] = mapped_column(primary_key=True, default=new_id)
    project_id: Mapped[uuid.UUID] = mapped_column(ForeignKey("projects.id", ondelete="CASCADE"))
    key: Mapped[str] = mapped_column(String(160))
    request_hash: Mapped[str] = mapped_column(
        String(64), doc="sha256 of the request; same key + other request = conflict"
    )
    payload: Mapped[dict[str, Any]] = mapped_column()
    created_at: Mapped[datetime] = mapped_column(default=utcnow)
    expires_at: Mapped[datetime] = mapped_column()


class ConnectorEvent(Base):
    """What a webhook receiver sent back: a metric snapshot or a comment on one of its posts."""

    __tablename__ = "connector_events"
    __table_args__ = (Index("ix_connector_events_account_post", "connected_account_id", "external_post_id"),)

    id: Mapped[uuid.UUID] = mapped_column(primary_key=True, default=new_id)
    connected_account_id: Mapped[uuid.UUID] = mapped_column(ForeignKey("connected_accounts.id", ondelete="CASCADE"))
    kind: Mapped[str] = mapped_column(String(20), doc="metrics or comment")
    external_post_id: Mapped[str] = mapped_column(String(300))
    payload: Mapped[dict[str, Any]] = mapped_column()
    received_at: Mapped[datetime] = mapped_column(default=utcnow)
