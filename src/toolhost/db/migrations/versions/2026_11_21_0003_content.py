"""content tables

Revision ID: 0003
Revises: 0002
Create Date: 2026-11-21
"""

from __future__ import annotations

revision = "0003"
down_revision = "0002"
branch_labels = None
depends_on = None


def upgrade() -> None:
    """Filled by the content domain."""


def downgrade() -> None:
    """Filled by the content domain."""
