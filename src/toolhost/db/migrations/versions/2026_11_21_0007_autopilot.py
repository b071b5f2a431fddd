"""autopilot tables: configs and runs

Revision ID: 0007
Revises: 0006
Create Date: 2026-11-21
"""

from __future__ import annotations

import sqlalchemy as sa
from alembic import op
from sqlalchemy.dialects import postgresql

from toolhost.db.base import UTCDateTime

revision = "0007"
down_revision = "0006"
branch_labels = None
depends_on = None

JSON_DOCUMENT = sa.JSON().with_variant(postgresql.JSONB(astext_type=sa.Text()), "postgresql")


def upgrade() -> None:
    op.create_table(
        "autopilot_configs",
        sa.Column("id", sa.Uuid(), nullable=False),
        sa.Column("project_id", sa.Uuid(), nullable=False),
        sa.Column("name", sa.String(length=100), nullable=False),
        sa.Column("mode", sa.String(length=20), nullable=False),
        sa.Column("recipe_slug", sa.String(length=100), nullable=True),
        sa.Column("recipe_inputs", JSON_DOCUMENT, nullable=True),
        sa.Column("topic", sa.String(length=500), nullable=True),
        sa.Column("platforms", JSON_DOCUMENT, nullable=True),
        sa.Column("schedule_days", JSON_DOCUMENT, nullable=False),
        sa.Column("schedule_time", sa.String(length=5), nullable=False),
        sa.Column("timezone", sa.String(length=64), nullable=False),
        sa.Column("approval_mode", sa.String(length=30), nullable=False),
        sa.Column("max_credits_per_run", sa.Float(), nullable=True),
        sa.Column("max_credits_per_week", sa.Float(), nullable=True),
        sa.Column("is_active", sa.Boolean(), nullable=False),
        sa.Column("creator", JSON_DOCUMENT, nullable=False),
        sa.Column("next_run_at", UTCDateTime(timezone=True), nullable=True),
        sa.Column("last_run_at", UTCDateTime(timezone=True), nullable=True),
        sa.Column("created_at", UTCDateTime(timezone=True), nullable=False),
        sa.Column("updated_at", UTCDateTime(timezone=True), nullable=False),
        sa.ForeignKeyConstraint(
            ["project_id"], ["projects.id"], name=op.f("fk_autopilot_configs_project_id_projects"), ondelete="CASCADE"
        ),
        sa.PrimaryKeyConstraint("id", name=op.f("pk_autopilot_configs")),
    )
    with op.batch_alter_table("autopilot_configs", schema=None) as batch_op:
        batch_op.create_index("ix_autopilot_configs_due", ["is_active", "next_run_at"], unique=False)
        batch_op.create_index(batch_op.f("ix_autopilot_configs_project_id"), ["project_id"], unique=False)

    op.create_table(
        "autopilot_runs",
        sa.Column("id", sa.Uuid(), nullable=False),
        sa.Column("config_id", sa.Uuid(), nullable=False),
        sa.Column("project_id", sa.Uuid(), nullable=False),
        sa.Column("mode", sa.String(length=20), nullable=False),
        sa.Column("status", sa.String(length=30), nullable=False),
        sa.Column("reason", sa.Text(), nullable=True),
        sa.Column("due_at", UTCDateTime(timezone=True), nullable=False),
        sa.Column("started_at", UTCDateTime(timezone=True), nullable=False),
        sa.Column("completed_at", UTCDateTime(timezone=True), nullable=True),
        sa.Column("credits_used", sa.Integer(), nullable=False),
        sa.Column("pipeline_id", sa.String(length=64), nullable=True),
        sa.Column("recipe_run_id", sa.Uuid(), nullable=True),
        sa.Column("arguments", JSON_DOCUMENT, nullable=True),
        sa.Column("created_at", UTCDateTime(timezone=True), nullable=False),
        sa.Column("updated_at", UTCDateTime(timezone=True), nullable=False),
        sa.ForeignKeyConstraint(
            ["project_id"], ["projects.id"], name=op.f("fk_autopilot_runs_project_id_projects"), ondelete="CASCADE"
        ),
        sa.PrimaryKeyConstraint("id", name=op.f("pk_autopilot_runs")),
        sa.UniqueConstraint("config_id", "due_at", name=op.f("uq_autopilot_runs_config_id_due_at")),
    )
    with op.batch_alter_table("autopilot_runs", schema=None) as batch_op:
        batch_op.create_index(batch_op.f("ix_autopilot_runs_config_id"), ["config_id"], unique=False)
        batch_op.create_index(batch_op.f("ix_autopilot_runs_project_id"), ["project_id"], unique=False)


def downgrade() -> None:
    op.drop_table("autopilot_runs")
    op.drop_table("autopilot_configs")
