"""distribution tables: connected accounts, connect links, posts, idempotency records, connector events,
media objects and the job queue

Revision ID: 0004
Revises: 0003
Create Date: 2026-11-21
"""

from __future__ import annotations

import sqlalchemy as sa
from alembic import op
from sqlalchemy.dialects import postgresql

from toolhost.db.base import UTCDateTime

revision = "0004"
down_revision = "0003"
branch_labels = None
depends_on = None

JSON_DOCUMENT = sa.JSON().with_variant(postgresql.JSONB(astext_type=sa.Text()), "postgresql")
TABLES_IN_CREATION_ORDER = (
    "connected_accounts",
    "idempotency_records",
    "jobs",
    "media_objects",
    "connection_links",
    "connector_events",
    "posts",
)


def upgrade() -> None:
    op.create_table(
        "connected_accounts",
        sa.Column("id", sa.Uuid(), nullable=False),
        sa.Column("project_id", sa.Uuid(), nullable=False),
        sa.Column("platform", sa.String(length=20), nullable=False),
        sa.Column("connector", sa.String(length=20), nullable=False),
        sa.Column("username", sa.String(length=300), nullable=True),
        sa.Column("status", sa.String(length=20), nullable=False),
        sa.Column("settings", JSON_DOCUMENT, nullable=False),
        sa.Column("secret", sa.Text(), nullable=False),
        sa.Column("has_refresh_token", sa.Boolean(), nullable=False),
        sa.Column("expires_at", UTCDateTime(timezone=True), nullable=True),
        sa.Column("error", sa.Text(), nullable=True),
        sa.Column("created_at", UTCDateTime(timezone=True), nullable=False),
        sa.Column("updated_at", UTCDateTime(timezone=True), nullable=False),
        sa.ForeignKeyConstraint(
            ["project_id"],
            ["projects.id"],
            name=op.f("fk_connected_accounts_project_id_projects"),
            ondelete="CASCADE",
        ),
        sa.PrimaryKeyConstraint("id", name=op.f("pk_connected_accounts")),
    )
    with op.batch_alter_table("connected_accounts", schema=None) as batch_op:
        batch_op.create_index("ix_connected_accounts_project_platform", ["project_id", "platform"], unique=False)

    op.create_table(
        "idempotency_records",
        sa.Column("id", sa.Uuid(), nullable=False),
        sa.Column("project_id", sa.Uuid(), nullable=False),
        sa.Column("key", sa.String(length=160), nullable=False),
        sa.Column("request_hash", sa.String(length=64), nullable=False),
        sa.Column("payload", JSON_DOCUMENT, nullable=False),
        sa.Column("created_at", UTCDateTime(timezone=True), nullable=False),
        sa.Column("expires_at", UTCDateTime(timezone=True), nullable=False),
        sa.ForeignKeyConstraint(
            ["project_id"],
            ["projects.id"],
            name=op.f("fk_idempotency_records_project_id_projects"),
            ondelete="CASCADE",
        ),
        sa.PrimaryKeyConstraint("id", name=op.f("pk_idempotency_records")),
        sa.UniqueConstraint("project_id", "key", name=op.f("uq_idempotency_records_project_id_key")),
    )
    op.create_table(
        "jobs",
        sa.Column("id", sa.Uuid(), nullable=False),
        sa.Column("account_id", sa.Uuid(), nullable=False),
        sa.Column("project_id", sa.Uuid(), nullable=True),
        sa.Column("job_type", sa.String(length=30), nullable=False),
        sa.Column("status", sa.String(length=20), nullable=False),
        sa.Column("progress", sa.Integer(), nullable=False),
        sa.Column("attempt", sa.Integer(), nullable=False),
        sa.Column("billing_status", sa.String(length=20), nullable=False),
        sa.Column("credits", sa.Integer(), nullable=False),
        sa.Column("failure_reason", sa.String(length=40), nullable=True),
        sa.Column("error", sa.Text(), nullable=True),
        sa.Column("input", JSON_DOCUMENT, nullable=False),
        sa.Column("output", JSON_DOCUMENT, nullable=False),
        sa.Column("lease_owner", sa.String(length=100), nullable=True),
        sa.Column("lease_expires_at", UTCDateTime(timezone=True), nullable=True),
        sa.Column("created_at", UTCDateTime(timezone=True), nullable=False),
        sa.Column("updated_at", UTCDateTime(timezone=True), nullable=False),
        sa.Column("completed_at", UTCDateTime(timezone=True), nullable=True),
        sa.ForeignKeyConstraint(
            ["account_id"], ["accounts.id"], name=op.f("fk_jobs_account_id_accounts"), ondelete="CASCADE"
        ),
        sa.ForeignKeyConstraint(
            ["project_id"], ["projects.id"], name=op.f("fk_jobs_project_id_projects"), ondelete="CASCADE"
        ),
        sa.PrimaryKeyConstraint("id", name=op.f("pk_jobs")),
    )
    with op.batch_alter_table("jobs", schema=None) as batch_op:
        batch_op.create_index(batch_op.f("ix_jobs_account_id"), ["account_id"], unique=False)
        batch_op.create_index("ix_jobs_claim", ["status", "job_type", "created_at"], unique=False)
        batch_op.create_index(batch_op.f("ix_jobs_project_id"), ["project_id"], unique=False)

    op.create_table(
        "media_objects",
        sa.Column("id", sa.Uuid(), nullable=False),
        sa.Column("key", sa.String(length=1024), nullable=False),
        sa.Column("account_id", sa.Uuid(), nullable=False),
        sa.Column("project_id", sa.Uuid(), nullable=True),
        sa.Column("kind", sa.String(length=20), nullable=False),
        sa.Column("content_type", sa.String(length=100), nullable=False),
        sa.Column("size", sa.BigInteger(), nullable=False),
        sa.Column("sha256", sa.String(length=64), nullable=False),
        sa.Column("file_name", sa.String(length=255), nullable=True),
        sa.Column("job_id", sa.Uuid(), nullable=True),
        sa.Column("created_at", UTCDateTime(timezone=True), nullable=False),
        sa.ForeignKeyConstraint(
            ["account_id"],
            ["accounts.id"],
            name=op.f("fk_media_objects_account_id_accounts"),
            ondelete="CASCADE",
        ),
        sa.ForeignKeyConstraint(
            ["project_id"],
            ["projects.id"],
            name=op.f("fk_media_objects_project_id_projects"),
            ondelete="CASCADE",
        ),
        sa.PrimaryKeyConstraint("id", name=op.f("pk_media_objects")),
        sa.UniqueConstraint("key", name=op.f("uq_media_objects_key")),
    )
    with op.batch_alter_table("media_objects", schema=None) as batch_op:
        batch_op.create_index(batch_op.f("ix_media_objects_account_id"), ["account_id"], unique=False)
        batch_op.create_index(batch_op.f("ix_media_objects_job_id"), ["job_id"], unique=False)
        batch_op.create_index(batch_op.f("ix_media_objects_project_id"), ["project_id"], unique=False)

    op.create_table(
        "connection_links",
        sa.Column("id", sa.Uuid(), nullable=False),
        sa.Column("token_hash", sa.String(length=64), nullable=False),
        sa.Column("project_id", sa.Uuid(), nullable=False),
        sa.Column("platform", sa.String(length=20), nullable=False),
        sa.Column("created_at", UTCDateTime(timezone=True), nullable=False),
        sa.Column("expires_at", UTCDateTime(timezone=True), nullable=False),
        sa.Column("opened_at", UTCDateTime(timezone=True), nullable=True),
        sa.Column("oauth_state", sa.String(length=64), nullable=True),
        sa.Column("oauth_settings", JSON_DOCUMENT, nullable=False),
        sa.Column("completed_at", UTCDateTime(timezone=True), nullable=True),
        sa.Column("connected_account_id", sa.Uuid(), nullable=True),
        sa.ForeignKeyConstraint(
            ["connected_account_id"],
            ["connected_accounts.id"],
            name=op.f("fk_connection_links_connected_account_id_connected_accounts"),
            ondelete="SET NULL",
        ),
        sa.ForeignKeyConstraint(
            ["project_id"],
            ["projects.id"],
            name=op.f("fk_connection_links_project_id_projects"),
            ondelete="CASCADE",
        ),
        sa.PrimaryKeyConstraint("id", name=op.f("pk_connection_links")),
        sa.UniqueConstraint("oauth_state", name=op.f("uq_connection_links_oauth_state")),
        sa.UniqueConstraint("token_hash", name=op.f("uq_connection_links_token_hash")),
    )
    with op.batch_alter_table("connection_links", schema=None) as batch_op:
        batch_op.create_index(batch_op.f("ix_connection_links_project_id"), ["project_id"], unique=False)

    op.create_table(
        "connector_events",
        sa.Column("id", sa.Uuid(), nullable=False),
        sa.Column("connected_account_id", sa.Uuid(), nullable=False),
        sa.Column("kind", sa.String(length=20), nullable=False),
        sa.Column("external_post_id", sa.String(length=300), nullable=False),
        sa.Column("payload", JSON_DOCUMENT, nullable=False),
        sa.Column("received_at", UTCDateTime(timezone=True), nullable=False),
        sa.ForeignKeyConstraint(
            ["connected_account_id"],
            ["connected_accounts.id"],
            name=op.f("fk_connector_events_connected_account_id_connected_accounts"),
            ondelete="CASCADE",
        ),
        sa.PrimaryKeyConstraint("id", name=op.f("pk_connector_events")),
    )
    with op.batch_alter_table("connector_events", schema=None) as batch_op:
        batch_op.create_index(
            "ix_connector_events_account_post", ["connected_account_id", "external_post_id"], unique=False
        )

    op.create_table(
        "posts",
        sa.Column("id", sa.Uuid(), nullable=False),
        sa.Column("project_id", sa.Uuid(), nullable=False),
        sa.Column("account_id", sa.Uuid(), nullable=False),
        sa.Column("connected_account_id", sa.Uuid(), nullable=False),
        sa.Column("job_id", sa.Uuid(), nullable=True),
        sa.Column("platform", sa.String(length=20), nullable=False),
        sa.Column("status", sa.String(length=20), nullable=False),
        sa.Column("caption", sa.Text(), nullable=False),
        sa.Column("title", sa.String(length=300), nullable=True),
        sa.Column("hashtags", JSON_DOCUMENT, nullable=False),
        sa.Column("media", JSON_DOCUMENT, nullable=False),
        sa.Column("media_type", sa.String(length=20), nullable=True),
        sa.Column("platform_metadata", JSON_DOCUMENT, nullable=False),
        sa.Column("scheduled_at", UTCDateTime(timezone=True), nullable=True),
        sa.Column("due_at", UTCDateTime(timezone=True), nullable=False),
        sa.Column("idempotency_key", sa.String(length=160), nullable=False),
        sa.Column("attempt", sa.Integer(), nullable=False),
        sa.Column("failures", sa.Integer(), nullable=False),
        sa.Column("lease_owner", sa.String(length=100), nullable=True),
        sa.Column("lease_expires_at", UTCDateTime(timezone=True), nullable=True),
        sa.Column("connector_state", JSON_DOCUMENT, nullable=False),
        sa.Column("external_post_id", sa.String(length=300), nullable=True),
        sa.Column("external_url", sa.String(length=2048), nullable=True),
        sa.Column("published_at", UTCDateTime(timezone=True), nullable=True),
        sa.Column("error", sa.Text(), nullable=True),
        sa.Column("credits", sa.Integer(), nullable=False),
        sa.Column("refunded", sa.Boolean(), nullable=False),
        sa.Column("plan_id", sa.Uuid(), nullable=True),
        sa.Column("plan_post_id", sa.String(length=200), nullable=True),
        sa.Column("created_at", UTCDateTime(timezone=True), nullable=False),
        sa.Column("updated_at", UTCDateTime(timezone=True), nullable=False),
        sa.ForeignKeyConstraint(
            ["account_id"], ["accounts.id"], name=op.f("fk_posts_account_id_accounts"), ondelete="CASCADE"
        ),
        sa.ForeignKeyConstraint(
            ["connected_account_id"],
            ["connected_accounts.id"],
            name=op.f("fk_posts_connected_account_id_connected_accounts"),
            ondelete="CASCADE",
        ),
        sa.ForeignKeyConstraint(
            ["project_id"], ["projects.id"], name=op.f("fk_posts_project_id_projects"), ondelete="CASCADE"
        ),
        sa.PrimaryKeyConstraint("id", name=op.f("pk_posts")),
    )
    with op.batch_alter_table("posts", schema=None) as batch_op:
        batch_op.create_index(batch_op.f("ix_posts_connected_account_id"), ["connected_account_id"], unique=False)
        batch_op.create_index("ix_posts_due", ["status", "due_at"], unique=False)
        batch_op.create_index(batch_op.f("ix_posts_plan_id"), ["plan_id"], unique=False)
        batch_op.create_index("ix_posts_project_key", ["project_id", "idempotency_key"], unique=False)
        batch_op.create_index("ix_posts_project_created", ["project_id", "created_at"], unique=False)
        batch_op.create_index(
            "ix_posts_project_platform_scheduled", ["project_id", "platform", "scheduled_at"], unique=False
        )


def downgrade() -> None:
    for table in reversed(TABLES_IN_CREATION_ORDER):
        op.drop_table(table)
