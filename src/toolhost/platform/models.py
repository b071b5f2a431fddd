"""The platform's tables: accounts, projects, credentials, the credit ledger, usage records, people and OAuth."""

from __future__ import annotations

import uuid
from datetime import datetime
from typing import Any

from sqlalchemy import CheckConstraint, ForeignKey, Index, Integer, String, Text
from sqlalchemy.orm import Mapped, mapped_column

from toolhost.db.base import Base, new_id, utcnow


class Account(Base):
    """A customer: owns projects, credentials and a credit balance."""

    __tablename__ = "accounts"
    __table_args__ = (CheckConstraint("credit_balance >= 0", name="credit_balance_not_negative"),)

    id: Mapped[uuid.UUID] = mapped_column(primary_key=True, default=new_id)
    name: Mapped[str] = mapped_column(String(200))
    tier: Mapped[str] = mapped_column(String(20))
    credit_balance: Mapped[int] = mapped_column(Integer, default=0)
    credit_period: Mapped[str] = mapped_column(String(7), doc="YYYY-MM of the last allocation")
    period_spent: Mapped[int] = mapped_column(Integer, default=0, doc="credits debited this period, net")
    spending_cap: Mapped[int | None] = mapped_column(Integer, default=None, doc="monthly cap; null = none")
    trial_ends_at: Mapped[datetime | None] = mapped_column(default=None)
    created_at: Mapped[datetime] = mapped_column(default=utcnow)


class Project(Base):
    """A workspace of an account: every post, plan and brand belongs to one."""

    __tablename__ = "projects"

    id: Mapped[uuid.UUID] = mapped_column(primary_key=True, default=new_id)
    account_id: Mapped[uuid.UUID] = mapped_column(ForeignKey("accounts.id", ondelete="CASCADE"), index=True)
    name: Mapped[str] = mapped_column(String(200))
    created_at: Mapped[datetime] = mapped_column(default=utcnow)


class ApiKey(Base):
    """A long-lived credential; only the SHA-256 of the secret is kept."""

    __tablename__ = "api_keys"

    id: Mapped[uuid.UUID] = mapped_column(primary_key=True, default=new_id)
    account_id: Mapped[uuid.UUID] = mapped_column(ForeignKey("accounts.id", ondelete="CASCADE"), index=True)
    project_id: Mapped[uuid.UUID | None] = mapped_column(ForeignKey("projects.id", ondelete="CASCADE"))
    name: Mapped[str] = mapped_column(String(200))
    prefix: Mapped[str] = mapped_column(String(20), doc="the first characters, to tell keys apart")
    secret_hash: Mapped[str] = mapped_column(String(64), unique=True)
    scopes: Mapped[list[Any]] = mapped_column()
    created_at: Mapped[datetime] = mapped_column(default=utcnow)
    expires_at: Mapped[datetime | None] = mapped_column(default=None)
    revoked_at: Mapped[datetime | None] = mapped_column(default=None)
    last_used_at: Mapped[datetime | None] = mapped_column(default=None)


class OAuthClient(Base):
    """A client-credentials client; it mints short-lived JWT access tokens."""

    __tablename__ = "oauth_clients"

    id: Mapped[uuid.UUID] = mapped_column(primary_key=True, default=new_id)
    client_id: Mapped[str] = mapped_column(String(64), unique=True)
    account_id: Mapped[uuid.UUID] = mapped_column(ForeignKey("accounts.id", ondelete="CASCADE"), index=True)
    project_id: Mapped[uuid.UUID | None] = mapped_column(ForeignKey("projects.id", ondelete="CASCADE"))
    name: Mapped[str] = mapped_column(String(200))
    secret_hash: Mapped[str] = mapped_column(String(64))
    scopes: Mapped[list[Any]] = mapped_column()
    created_at: Mapped[datetime] = mapped_column(default=utcnow)
    revoked_at: Mapped[datetime | None] = mapped_column(default=None)


class CreditEntry(Base):
    """One movement of an account's credits; the balance on the account is their running sum."""

    __tablename__ = "credit_ledger"
    __table_args__ = (Index("ix_credit_ledger_account_period", "account_id", "period"),)

    id: Mapped[uuid.UUID] = mapped_column(primary_key=True, default=new_id)
    account_id: Mapped[uuid.UUID] = mapped_column(ForeignKey("accounts.id", ondelete="CASCADE"))
    period: Mapped[str] = mapped_column(String(7))
    kind: Mapped[str] = mapped_column(String(20), doc="allocation, grant, hold, settle, debit, refund, expiry")
    amount: Mapped[int] = mapped_column(Integer, doc="signed: debits are negative")
    tool_name: Mapped[str | None] = mapped_column(String(100), default=None)
    reference: Mapped[str | None] = mapped_column(String(100), default=None, doc="request or job id")
    created_at: Mapped[datetime] = mapped_column(default=utcnow)


class CreditHold(Base):
    """Credits set aside for one call before its handler runs, settled exactly once when it ends.

    `settled_at` moves from null exactly once: by the call (charged what it owed, the rest returned) or,
    when the process running it died, by the worker after `expires_at` (everything returned).
    """

    __tablename__ = "credit_holds"
    __table_args__ = (Index("ix_credit_holds_open", "settled_at", "expires_at"),)

    id: Mapped[uuid.UUID] = mapped_column(primary_key=True, default=new_id)
    account_id: Mapped[uuid.UUID] = mapped_column(ForeignKey("accounts.id", ondelete="CASCADE"), index=True)
    tool_name: Mapped[str] = mapped_column(String(100))
    reference: Mapped[str] = mapped_column(String(100), doc="the call's request id")
    run_id: Mapped[str | None] = mapped_column(String(128), default=None, doc="the call's run, for run budgets")
    amount: Mapped[int] = mapped_column(Integer)
    charged: Mapped[int | None] = mapped_column(Integer, default=None, doc="what the settlement kept")
    outcome: Mapped[str | None] = mapped_column(String(30), default=None, doc="ok, the error_type, or expired")
    created_at: Mapped[datetime] = mapped_column(default=utcnow)
    expires_at: Mapped[datetime] = mapped_column()
    settled_at: Mapped[datetime | None] = mapped_column(default=None)


class UsageRecord(Base):
    """One tool call, whatever its outcome: with the settlement of a call that paid, else in a batch."""

    __tablename__ = "usage_records"
    __table_args__ = (
        Index("ix_usage_records_account_created", "account_id", "created_at"),
        Index("ix_usage_records_run", "account_id", "run_id"),
        # A job's retry asks whether one of its calls already ran (toolhost.platform.jobs.step_ran).
        Index("ix_usage_records_request", "request_id"),
    )

    id: Mapped[uuid.UUID] = mapped_column(primary_key=True, default=new_id)
    account_id: Mapped[uuid.UUID] = mapped_column(ForeignKey("accounts.id", ondelete="CASCADE"))
    project_id: Mapped[uuid.UUID | None] = mapped_column(default=None)
    credential_id: Mapped[uuid.UUID | None] = mapped_column(default=None)
    tool_name: Mapped[str] = mapped_column(String(100))
    transport: Mapped[str] = mapped_column(String(10))
    outcome: Mapped[str] = mapped_column(String(30), doc="ok or the error_type")
    credits: Mapped[int] = mapped_column(Integer, default=0)
    assets: Mapped[int] = mapped_column(Integer, default=0)
    duration_ms: Mapped[int] = mapped_column(Integer, default=0)
    run_id: Mapped[str | None] = mapped_column(String(128), default=None)
    request_id: Mapped[str] = mapped_column(String(64))
    error_message: Mapped[str | None] = mapped_column(Text, default=None)
    created_at: Mapped[datetime] = mapped_column(default=utcnow)


class User(Base):
    """A person of an account: signs in to the web pages and authorizes MCP clients on the account's behalf."""

    __tablename__ = "users"

    id: Mapped[uuid.UUID] = mapped_column(primary_key=True, default=new_id)
    account_id: Mapped[uuid.UUID] = mapped_column(ForeignKey("accounts.id", ondelete="CASCADE"), index=True)
    email: Mapped[str] = mapped_column(String(320), unique=True, doc="lowercased; the sign-in name")
    password_hash: Mapped[str] = mapped_column(String(200), doc="argon2id, in its PHC string form")
    created_at: Mapped[datetime] = mapped_column(default=utcnow)


class WebSession(Base):
    """One sign-in: the browser holds the token, the database its SHA-256; signing out deletes the row."""

    __tablename__ = "web_sessions"

    id: Mapped[uuid.UUID] = mapped_column(primary_key=True, default=new_id)
    user_id: Mapped[uuid.UUID] = mapped_column(ForeignKey("users.id", ondelete="CASCADE"), index=True)
    token_hash: Mapped[str] = mapped_column(String(64), unique=True)
    created_at: Mapped[datetime] = mapped_column(default=utcnow)
    expires_at: Mapped[datetime] = mapped_column()


class RegisteredClient(Base):
    """An OAuth client that registered itself (RFC 7591), such as a remote MCP client; it belongs to no account."""

    __tablename__ = "oauth_registered_clients"

    id: Mapped[uuid.UUID] = mapped_column(primary_key=True, default=new_id)
    client_id: Mapped[str] = mapped_column(String(64), unique=True)
    secret_hash: Mapped[str | None] = mapped_column(String(64), default=None, doc="null for a public client")
    client_metadata: Mapped[dict[str, Any]] = mapped_column(doc="the registered RFC 7591 metadata")
    created_at: Mapped[datetime] = mapped_column(default=utcnow)


class OAuthGrant(Base):
    """What a person allowed one registered client: the family of its refresh and access tokens.

    Revoking the grant (RFC 7009, or a replayed code or refresh token) ends every token of the family.
    """

    __tablename__ = "oauth_grants"

    id: Mapped[uuid.UUID] = mapped_column(primary_key=True, default=new_id)
    registered_client_id: Mapped[uuid.UUID] = mapped_column(
        ForeignKey("oauth_registered_clients.id", ondelete="CASCADE"), index=True
    )
    user_id: Mapped[uuid.UUID] = mapped_column(ForeignKey("users.id", ondelete="CASCADE"), index=True)
    scopes: Mapped[list[Any]] = mapped_column()
    resource: Mapped[str] = mapped_column(String(2000), doc="the RFC 8707 resource: the tokens' audience")
    created_at: Mapped[datetime] = mapped_column(default=utcnow)
    revoked_at: Mapped[datetime | None] = mapped_column(default=None)
    revoked_because: Mapped[str | None] = mapped_column(
        String(40), default=None, doc="revoked, code_replayed or refresh_token_reused"
    )


class AuthorizationCode(Base):
    """A single-use code issued on consent; only its SHA-256 is kept."""

    __tablename__ = "oauth_authorization_codes"

    id: Mapped[uuid.UUID] = mapped_column(primary_key=True, default=new_id)
    code_hash: Mapped[str] = mapped_column(String(64), unique=True)
    registered_client_id: Mapped[uuid.UUID] = mapped_column(
        ForeignKey("oauth_registered_clients.id", ondelete="CASCADE"), index=True
    )
    user_id: Mapped[uuid.UUID] = mapped_column(ForeignKey("users.id", ondelete="CASCADE"), index=True)
    redirect_uri: Mapped[str] = mapped_column(Text)
    scopes: Mapped[list[Any]] = mapped_column()
    resource: Mapped[str] = mapped_column(String(2000))
    code_challenge: Mapped[str] = mapped_column(String(128))
    expires_at: Mapped[datetime] = mapped_column()
    used_at: Mapped[datetime | None] = mapped_column(default=None)
    grant_id: Mapped[uuid.UUID | None] = mapped_column(
        ForeignKey("oauth_grants.id", ondelete="SET NULL"), default=None, doc="the grant its exchange started"
    )
    created_at: Mapped[datetime] = mapped_column(default=utcnow)


class RefreshToken(Base):
    """One refresh token of a grant; used once (rotated), a second use revokes the whole grant."""

    __tablename__ = "oauth_refresh_tokens"

    id: Mapped[uuid.UUID] = mapped_column(primary_key=True, default=new_id)
    grant_id: Mapped[uuid.UUID] = mapped_column(ForeignKey("oauth_grants.id", ondelete="CASCADE"), index=True)
    token_hash: Mapped[str] = mapped_column(String(64), unique=True)
    created_at: Mapped[datetime] = mapped_column(default=utcnow)
    expires_at: Mapped[datetime] = mapped_column()
    rotated_at: Mapped[datetime | None] = mapped_column(default=None)
