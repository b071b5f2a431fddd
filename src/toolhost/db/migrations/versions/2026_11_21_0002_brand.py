"""brand tables

Revision ID: 0002
Revises: 0001
Create Date: 2026-11-21
"""

from __future__ import annotations

revision = "0002"
down_revision = "0001"
branch_labels = None
depends_on = None


def upgrade() -> None:
    """Filled by the brand domain."""


def downgrade() -> None:
    """Filled by the brand domain."""
