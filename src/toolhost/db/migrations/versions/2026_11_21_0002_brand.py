"""brand tables

Revision ID: 0002
Revises: 0001
Create Date: 2026-11-21
"""

from __future__ import annotations

import sqlalchemy as sa
from alembic import op
from sqlalchemy.dialects import postgresql

revision = "0002"
down_revision = "0001"
branch_labels = None
depends_on = None

JSON_DOCUMENT = sa.JSON().with_variant(postgresql.JSONB(astext_type=sa.Text()), "postgresql")


def upgrade() -> None:
    op.create_table(
        "brand_profile_versions",
        sa.Column("id", sa.Uuid(), nullable=False),
        sa.Column("project_id", sa.Uuid(), nullable=False),
        sa.Column("version", sa.Integer(), nullable=False),
        sa.Column("brand_name", sa.String(length=200), nullable=True),
        sa.Column("brand_context", JSON_DOCUMENT, nullable=False),
        sa.Column("profile_data", JSON_DOCUMENT, nullable=False),
        sa.Column("content_hash", sa.String(length=64), nullable=False),
        sa.Column("change_summary", sa.Text(), nullable=True),
        sa.Column("changed_paths", JSON_DOCUMENT, nullable=False),
        sa.Column("source_url", sa.String(length=2048), nullable=True),
        sa.Column("extraction_method", sa.String(length=40), nullable=False),
        sa.Column("extraction_metadata", JSON_DOCUMENT, nullable=False),
        sa.Column("overall_confidence", sa.Float(), nullable=True),
        sa.Column("default_style_ref_url", sa.String(length=2048), nullable=True),
        sa.Column("created_at", sa.DateTime(timezone=True), nullable=False),
        sa.ForeignKeyConstraint(
            ["project_id"],
            ["projects.id"],
            name=op.f("fk_brand_profile_versions_project_id_projects"),
            ondelete="CASCADE",
        ),
        sa.PrimaryKeyConstraint("id", name=op.f("pk_brand_profile_versions")),
        sa.UniqueConstraint("project_id", "version", name=op.f("uq_brand_profile_versions_project_id_version")),
    )
    with op.batch_alter_table("brand_profile_versions", schema=None) as batch_op:
        batch_op.create_index(batch_op.f("ix_brand_profile_versions_project_id"), ["project_id"], unique=False)


def downgrade() -> None:
    with op.batch_alter_table("brand_profile_versions", schema=None) as batch_op:
        batch_op.drop_index(batch_op.f("ix_brand_profile_versions_project_id"))
    op.drop_table("brand_profile_versions")
