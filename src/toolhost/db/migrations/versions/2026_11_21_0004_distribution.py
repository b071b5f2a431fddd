"""distribution tables

Revision ID: 0004
Revises: 0003
Create Date: 2026-11-21
"""

from __future__ import annotations

revision = "0004"
down_revision = "0003"
branch_labels = None
depends_on = None


def upgrade() -> None:
    """Filled by the distribution domain."""


def downgrade() -> None:
    """Filled by the distribution domain."""
