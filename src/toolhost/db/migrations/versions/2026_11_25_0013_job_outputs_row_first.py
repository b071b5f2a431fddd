"""a job's output row commits before its file is written and waits for the job's completion to be usable

Revision ID: 0013
Revises: 0012
Create Date: 2026-11-25
"""

from __future__ import annotations

import sqlalchemy as sa
from alembic import op

revision = "0013"
down_revision = "0012"
branch_labels = None
depends_on = None


def upgrade() -> None:
    with op.batch_alter_table("media_objects", schema=None) as batch_op:
        batch_op.add_column(sa.Column("awaiting_completion", sa.Boolean(), nullable=False, server_default=sa.false()))


def downgrade() -> None:
    with op.batch_alter_table("media_objects", schema=None) as batch_op:
        batch_op.drop_column("awaiting_completion")
