"""credit holds: credits set aside before a call's handler runs, settled after it

Revision ID: 0008
Revises: 0007
Create Date: 2026-11-25
"""

from __future__ import annotations

import sqlalchemy as sa
from alembic import op

from toolhost.db.base import UTCDateTime

revision = "0008"
down_revision = "0007"
branch_labels = None
depends_on = None


def upgrade() -> None:
    op.create_table(
        "credit_holds",
        sa.Column("id", sa.Uuid(), nullable=False),
        sa.Column("account_id", sa.Uuid(), nullable=False),
        sa.Column("tool_name", sa.String(length=100), nullable=False),
        sa.Column("reference", sa.String(length=100), nullable=False),
        sa.Column("run_id", sa.String(length=128), nullable=True),
        sa.Column("amount", sa.Integer(), nullable=False),
        sa.Column("charged", sa.Integer(), nullable=True),
        sa.Column("outcome", sa.String(length=30), nullable=True),
        sa.Column("created_at", UTCDateTime(timezone=True), nullable=False),
        sa.Column("expires_at", UTCDateTime(timezone=True), nullable=False),
        sa.Column("settled_at", UTCDateTime(timezone=True), nullable=True),
        sa.ForeignKeyConstraint(
            ["account_id"], ["accounts.id"], name=op.f("fk_credit_holds_account_id_accounts"), ondelete="CASCADE"
        ),
        sa.PrimaryKeyConstraint("id", name=op.f("pk_credit_holds")),
    )
    with op.batch_alter_table("credit_holds", schema=None) as batch_op:
        batch_op.create_index("ix_credit_holds_open", ["settled_at", "expires_at"], unique=False)
        batch_op.create_index(batch_op.f("ix_credit_holds_account_id"), ["account_id"], unique=False)


def downgrade() -> None:
    with op.batch_alter_table("credit_holds", schema=None) as batch_op:
        batch_op.drop_index(batch_op.f("ix_credit_holds_account_id"))
        batch_op.drop_index("ix_credit_holds_open")
    op.drop_table("credit_holds")
