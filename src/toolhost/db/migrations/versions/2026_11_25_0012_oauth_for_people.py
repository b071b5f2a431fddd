"""oauth for people's MCP clients: registered clients, authorization codes, grants and refresh tokens

Revision ID: 0012
Revises: 0011
Create Date: 2026-11-25
"""

from __future__ import annotations

import sqlalchemy as sa
from alembic import op
from sqlalchemy.dialects import postgresql

from toolhost.db.base import UTCDateTime

revision = "0012"
down_revision = "0011"
branch_labels = None
depends_on = None

JSON_DOCUMENT = sa.JSON().with_variant(postgresql.JSONB(astext_type=sa.Text()), "postgresql")


def upgrade() -> None:
    op.create_table(
        "oauth_registered_clients",
        sa.Column("id", sa.Uuid(), nullable=False),
        sa.Column("client_id", sa.String(length=64), nullable=False),
        sa.Column("secret_hash", sa.String(length=64), nullable=True),
        sa.Column("client_metadata", JSON_DOCUMENT, nullable=False),
        sa.Column("created_at", UTCDateTime(timezone=True), nullable=False),
        sa.PrimaryKeyConstraint("id", name=op.f("pk_oauth_registered_clients")),
        sa.UniqueConstraint("client_id", name=op.f("uq_oauth_registered_clients_client_id")),
    )
    op.create_table(
        "oauth_grants",
        sa.Column("id", sa.Uuid(), nullable=False),
        sa.Column("registered_client_id", sa.Uuid(), nullable=False),
        sa.Column("user_id", sa.Uuid(), nullable=False),
        sa.Column("scopes", JSON_DOCUMENT, nullable=False),
        sa.Column("resource", sa.String(length=2000), nullable=False),
        sa.Column("created_at", UTCDateTime(timezone=True), nullable=False),
        sa.Column("revoked_at", UTCDateTime(timezone=True), nullable=True),
        sa.Column("revoked_because", sa.String(length=40), nullable=True),
        sa.ForeignKeyConstraint(
            ["registered_client_id"],
            ["oauth_registered_clients.id"],
            name=op.f("fk_oauth_grants_registered_client_id_oauth_registered_clients"),
            ondelete="CASCADE",
        ),
        sa.ForeignKeyConstraint(
            ["user_id"], ["users.id"], name=op.f("fk_oauth_grants_user_id_users"), ondelete="CASCADE"
        ),
        sa.PrimaryKeyConstraint("id", name=op.f("pk_oauth_grants")),
    )
    with op.batch_alter_table("oauth_grants", schema=None) as batch_op:
        batch_op.create_index(
            batch_op.f("ix_oauth_grants_registered_client_id"), ["registered_client_id"], unique=False
        )
        batch_op.create_index(batch_op.f("ix_oauth_grants_user_id"), ["user_id"], unique=False)

    op.create_table(
        "oauth_authorization_codes",
        sa.Column("id", sa.Uuid(), nullable=False),
        sa.Column("code_hash", sa.String(length=64), nullable=False),
        sa.Column("registered_client_id", sa.Uuid(), nullable=False),
        sa.Column("user_id", sa.Uuid(), nullable=False),
        sa.Column("redirect_uri", sa.Text(), nullable=False),
        sa.Column("scopes", JSON_DOCUMENT, nullable=False),
        sa.Column("resource", sa.String(length=2000), nullable=False),
        sa.Column("code_challenge", sa.String(length=128), nullable=False),
        sa.Column("expires_at", UTCDateTime(timezone=True), nullable=False),
        sa.Column("used_at", UTCDateTime(timezone=True), nullable=True),
        sa.Column("grant_id", sa.Uuid(), nullable=True),
        sa.Column("created_at", UTCDateTime(timezone=True), nullable=False),
        sa.ForeignKeyConstraint(
            ["grant_id"],
            ["oauth_grants.id"],
            name=op.f("fk_oauth_authorization_codes_grant_id_oauth_grants"),
            ondelete="SET NULL",
        ),
        sa.ForeignKeyConstraint(
            ["registered_client_id"],
            ["oauth_registered_clients.id"],
            name=op.f("fk_oauth_authorization_codes_registered_client_id_oauth_registered_clients"),
            ondelete="CASCADE",
        ),
        sa.ForeignKeyConstraint(
            ["user_id"], ["users.id"], name=op.f("fk_oauth_authorization_codes_user_id_users"), ondelete="CASCADE"
        ),
        sa.PrimaryKeyConstraint("id", name=op.f("pk_oauth_authorization_codes")),
        sa.UniqueConstraint("code_hash", name=op.f("uq_oauth_authorization_codes_code_hash")),
    )
    with op.batch_alter_table("oauth_authorization_codes", schema=None) as batch_op:
        batch_op.create_index(
            batch_op.f("ix_oauth_authorization_codes_registered_client_id"), ["registered_client_id"], unique=False
        )
        batch_op.create_index(batch_op.f("ix_oauth_authorization_codes_user_id"), ["user_id"], unique=False)

    op.create_table(
        "oauth_refresh_tokens",
        sa.Column("id", sa.Uuid(), nullable=False),
        sa.Column("grant_id", sa.Uuid(), nullable=False),
        sa.Column("token_hash", sa.String(length=64), nullable=False),
        sa.Column("created_at", UTCDateTime(timezone=True), nullable=False),
        sa.Column("expires_at", UTCDateTime(timezone=True), nullable=False),
        sa.Column("rotated_at", UTCDateTime(timezone=True), nullable=True),
        sa.ForeignKeyConstraint(
            ["grant_id"],
            ["oauth_grants.id"],
            name=op.f("fk_oauth_refresh_tokens_grant_id_oauth_grants"),
            ondelete="CASCADE",
        ),
        sa.PrimaryKeyConstraint("id", name=op.f("pk_oauth_refresh_tokens")),
        sa.UniqueConstraint("token_hash", name=op.f("uq_oauth_refresh_tokens_token_hash")),
    )
    with op.batch_alter_table("oauth_refresh_tokens", schema=None) as batch_op:
        batch_op.create_index(batch_op.f("ix_oauth_refresh_tokens_grant_id"), ["grant_id"], unique=False)


def downgrade() -> None:
    with op.batch_alter_table("oauth_refresh_tokens", schema=None) as batch_op:
        batch_op.drop_index(batch_op.f("ix_oauth_refresh_tokens_grant_id"))
    op.drop_table("oauth_refresh_tokens")
    with op.batch_alter_table("oauth_authorization_codes", schema=None) as batch_op:
        batch_op.drop_index(batch_op.f("ix_oauth_authorization_codes_user_id"))
        batch_op.drop_index(batch_op.f("ix_oauth_authorization_codes_registered_client_id"))
    op.drop_table("oauth_authorization_codes")
    with op.batch_alter_table("oauth_grants", schema=None) as batch_op:
        batch_op.drop_index(batch_op.f("ix_oauth_grants_user_id"))
        batch_op.drop_index(batch_op.f("ix_oauth_grants_registered_client_id"))
    op.drop_table("oauth_grants")
    op.drop_table("oauth_registered_clients")
