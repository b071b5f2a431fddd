"""pipeline runs

Revision ID: 0006
Revises: 0005
Create Date: 2026-11-21
"""

from __future__ import annotations

import sqlalchemy as sa
from alembic import op
from sqlalchemy.dialects import postgresql

from toolhost.db.base import UTCDateTime

revision = "0006"
down_revision = "0005"
branch_labels = None
depends_on = None

JSON_DOCUMENT = sa.JSON().with_variant(postgresql.JSONB(astext_type=sa.Text()), "postgresql")


def upgrade() -> None:
    op.create_table(
        "pipeline_runs",
        sa.Column("id", sa.Uuid(), nullable=False),
        sa.Column("project_id", sa.Uuid(), nullable=False),
        sa.Column("plan_id", sa.Uuid(), nullable=True),
        sa.Column("config", JSON_DOCUMENT, nullable=False),
        sa.Column("status", sa.String(length=20), nullable=False),
        sa.Column("current_stage", sa.String(length=30), nullable=True),
        sa.Column("stages_completed", JSON_DOCUMENT, nullable=False),
        sa.Column("stages_skipped", JSON_DOCUMENT, nullable=False),
        sa.Column("posts_generated", sa.Integer(), nullable=False),
        sa.Column("posts_approved", sa.Integer(), nullable=False),
        sa.Column("posts_scheduled", sa.Integer(), nullable=False),
        sa.Column("posts_flagged", sa.Integer(), nullable=False),
        sa.Column("credits_used", sa.Integer(), nullable=False),
        sa.Column("errors", JSON_DOCUMENT, nullable=False),
        sa.Column("started_at", UTCDateTime(timezone=True), nullable=False),
        sa.Column("completed_at", UTCDateTime(timezone=True), nullable=True),
        sa.Column("created_at", UTCDateTime(timezone=True), nullable=False),
        sa.Column("updated_at", UTCDateTime(timezone=True), nullable=False),
        sa.ForeignKeyConstraint(
            ["plan_id"], ["content_plans.id"], name=op.f("fk_pipeline_runs_plan_id_content_plans"), ondelete="SET NULL"
        ),
        sa.ForeignKeyConstraint(
            ["project_id"], ["projects.id"], name=op.f("fk_pipeline_runs_project_id_projects"), ondelete="CASCADE"
        ),
        sa.PrimaryKeyConstraint("id", name=op.f("pk_pipeline_runs")),
    )
    with op.batch_alter_table("pipeline_runs", schema=None) as batch_op:
        batch_op.create_index("ix_pipeline_runs_project_created", ["project_id", "created_at"], unique=False)


def downgrade() -> None:
    op.drop_table("pipeline_runs")
