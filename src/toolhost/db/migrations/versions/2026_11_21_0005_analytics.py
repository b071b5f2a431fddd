"""analytics tables: metric snapshots and performance insights

Revision ID: 0005
Revises: 0004
Create Date: 2026-11-21
"""

from __future__ import annotations

import sqlalchemy as sa
from alembic import op
from sqlalchemy.dialects import postgresql

from toolhost.db.base import UTCDateTime

revision = "0005"
down_revision = "0004"
branch_labels = None
depends_on = None

JSON_DOCUMENT = sa.JSON().with_variant(postgresql.JSONB(astext_type=sa.Text()), "postgresql")


def upgrade() -> None:
    op.create_table(
        "metric_snapshots",
        sa.Column("id", sa.Uuid(), nullable=False),
        sa.Column("project_id", sa.Uuid(), nullable=False),
        sa.Column("post_id", sa.Uuid(), nullable=False),
        sa.Column("platform", sa.String(length=20), nullable=False),
        sa.Column("captured_at", UTCDateTime(timezone=True), nullable=False),
        sa.Column("views", sa.BigInteger(), nullable=True),
        sa.Column("likes", sa.BigInteger(), nullable=False),
        sa.Column("comments", sa.BigInteger(), nullable=False),
        sa.Column("shares", sa.BigInteger(), nullable=False),
        sa.Column("saves", sa.BigInteger(), nullable=True),
        sa.Column("watch_time_minutes", sa.Float(), nullable=True),
        sa.Column("source", sa.String(length=20), nullable=False),
        sa.ForeignKeyConstraint(
            ["post_id"], ["posts.id"], name=op.f("fk_metric_snapshots_post_id_posts"), ondelete="CASCADE"
        ),
        sa.ForeignKeyConstraint(
            ["project_id"],
            ["projects.id"],
            name=op.f("fk_metric_snapshots_project_id_projects"),
            ondelete="CASCADE",
        ),
        sa.PrimaryKeyConstraint("id", name=op.f("pk_metric_snapshots")),
    )
    with op.batch_alter_table("metric_snapshots", schema=None) as batch_op:
        batch_op.create_index("ix_metric_snapshots_post_captured", ["post_id", "captured_at"], unique=False)
        batch_op.create_index(batch_op.f("ix_metric_snapshots_project_id"), ["project_id"], unique=False)

    op.create_table(
        "performance_insights",
        sa.Column("id", sa.Uuid(), nullable=False),
        sa.Column("project_id", sa.Uuid(), nullable=False),
        sa.Column("insight_type", sa.String(length=30), nullable=False),
        sa.Column("insight_data", JSON_DOCUMENT, nullable=False),
        sa.Column("confidence_score", sa.Float(), nullable=False),
        sa.Column("generated_at", UTCDateTime(timezone=True), nullable=False),
        sa.ForeignKeyConstraint(
            ["project_id"],
            ["projects.id"],
            name=op.f("fk_performance_insights_project_id_projects"),
            ondelete="CASCADE",
        ),
        sa.PrimaryKeyConstraint("id", name=op.f("pk_performance_insights")),
    )
    with op.batch_alter_table("performance_insights", schema=None) as batch_op:
        batch_op.create_index(
            "ix_performance_insights_project_type", ["project_id", "insight_type", "generated_at"], unique=False
        )


def downgrade() -> None:
    op.drop_table("performance_insights")
    op.drop_table("metric_snapshots")
