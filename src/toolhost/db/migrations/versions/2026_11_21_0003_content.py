"""content tables: content records, the swipe file and the trends cache

Revision ID: 0003
Revises: 0002
Create Date: 2026-11-21
"""

from __future__ import annotations

import sqlalchemy as sa
from alembic import op
from sqlalchemy.dialects import postgresql

revision = "0003"
down_revision = "0002"
branch_labels = None
depends_on = None

JSON_DOCUMENT = sa.JSON().with_variant(postgresql.JSONB(astext_type=sa.Text()), "postgresql")


def upgrade() -> None:
    op.create_table(
        "content_records",
        sa.Column("id", sa.Uuid(), nullable=False),
        sa.Column("project_id", sa.Uuid(), nullable=False),
        sa.Column("kind", sa.String(length=20), nullable=False),
        sa.Column("content_type", sa.String(length=20), nullable=True),
        sa.Column("platform", sa.String(length=30), nullable=True),
        sa.Column("model", sa.String(length=200), nullable=False),
        sa.Column("prompt", sa.Text(), nullable=False),
        sa.Column("text", sa.Text(), nullable=True),
        sa.Column("data", JSON_DOCUMENT, nullable=True),
        sa.Column("created_at", sa.DateTime(timezone=True), nullable=False),
        sa.ForeignKeyConstraint(
            ["project_id"],
            ["projects.id"],
            name=op.f("fk_content_records_project_id_projects"),
            ondelete="CASCADE",
        ),
        sa.PrimaryKeyConstraint("id", name=op.f("pk_content_records")),
    )
    with op.batch_alter_table("content_records", schema=None) as batch_op:
        batch_op.create_index("ix_content_records_project_created", ["project_id", "created_at"], unique=False)

    op.create_table(
        "swipe_items",
        sa.Column("id", sa.Uuid(), nullable=False),
        sa.Column("account_id", sa.Uuid(), nullable=False),
        sa.Column("item_key", sa.String(length=64), nullable=False),
        sa.Column("url", sa.String(length=2048), nullable=True),
        sa.Column("title", sa.String(length=1000), nullable=False),
        sa.Column("views", sa.BigInteger(), nullable=True),
        sa.Column("published_at", sa.DateTime(timezone=True), nullable=True),
        sa.Column("source", sa.String(length=40), nullable=False),
        sa.Column("captured_at", sa.DateTime(timezone=True), nullable=False),
        sa.ForeignKeyConstraint(
            ["account_id"],
            ["accounts.id"],
            name=op.f("fk_swipe_items_account_id_accounts"),
            ondelete="CASCADE",
        ),
        sa.PrimaryKeyConstraint("id", name=op.f("pk_swipe_items")),
        sa.UniqueConstraint("account_id", "item_key", name=op.f("uq_swipe_items_account_id_item_key")),
    )
    with op.batch_alter_table("swipe_items", schema=None) as batch_op:
        batch_op.create_index(batch_op.f("ix_swipe_items_account_id"), ["account_id"], unique=False)

    op.create_table(
        "trend_cache",
        sa.Column("id", sa.Uuid(), nullable=False),
        sa.Column("account_id", sa.Uuid(), nullable=False),
        sa.Column("cache_key", sa.String(length=64), nullable=False),
        sa.Column("source", sa.String(length=40), nullable=False),
        sa.Column("trends", JSON_DOCUMENT, nullable=False),
        sa.Column("fetched_at", sa.DateTime(timezone=True), nullable=False),
        sa.Column("expires_at", sa.DateTime(timezone=True), nullable=False),
        sa.ForeignKeyConstraint(
            ["account_id"],
            ["accounts.id"],
            name=op.f("fk_trend_cache_account_id_accounts"),
            ondelete="CASCADE",
        ),
        sa.PrimaryKeyConstraint("id", name=op.f("pk_trend_cache")),
        sa.UniqueConstraint("account_id", "cache_key", name=op.f("uq_trend_cache_account_id_cache_key")),
    )
    with op.batch_alter_table("trend_cache", schema=None) as batch_op:
        batch_op.create_index(batch_op.f("ix_trend_cache_account_id"), ["account_id"], unique=False)


def downgrade() -> None:
    with op.batch_alter_table("trend_cache", schema=None) as batch_op:
        batch_op.drop_index(batch_op.f("ix_trend_cache_account_id"))
    op.drop_table("trend_cache")
    with op.batch_alter_table("swipe_items", schema=None) as batch_op:
        batch_op.drop_index(batch_op.f("ix_swipe_items_account_id"))
    op.drop_table("swipe_items")
    with op.batch_alter_table("content_records", schema=None) as batch_op:
        batch_op.drop_index("ix_content_records_project_created")
    op.drop_table("content_records")
