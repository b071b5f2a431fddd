"""Accounts, projects, API keys and OAuth clients: what operators create and revoke."""

from __future__ import annotations

import hashlib
import secrets
import uuid
from dataclasses import dataclass
from datetime import UTC, datetime, timedelta
from typing import Any

from sqlalchemy import event, func, select
from sqlalchemy.ext.asyncio import AsyncSession
from sqlalchemy.orm import Session

from toolhost.config import Settings
from toolhost.platform import scopes
from toolhost.platform.credits import period_of
from toolhost.platform.models import Account, ApiKey, CreditEntry, OAuthClient, Project
from toolhost.platform.results import NotFound, ValidationFailed

KEY_PREFIX = "thk_live_"
CLIENT_PREFIX = "thc_"


def hash_secret(secret: str) -> str:
    """SHA-256 hex of a high-entropy secret (keys and client secrets are never stored in clear)."""
    return hashlib.sha256(secret.encode()).hexdigest()


@dataclass(frozen=True, slots=True)
class IssuedKey:
    """A key as created: the plaintext is shown once and never again."""

    key: ApiKey
    plaintext: str


@dataclass(frozen=True, slots=True)
class Bootstrapped:
    """What the first start made: the account, its project and a key to it (shown once)."""

    account: Account
    project: Project
    issued: IssuedKey


@dataclass(frozen=True, slots=True)
class IssuedClient:
    """An OAuth client as created, with its secret shown once."""

    client: OAuthClient
    client_secret: str


async def create_account(session: AsyncSession, *, name: str, tier: str, settings: Settings) -> Account:
    """A new account with its first allocation (trial: the one-time grant and an end date)."""
    if tier not in scopes.TIER_SCOPES:
        raise ValidationFailed(f"unknown tier {tier!r}; one of {', '.join(scopes.TIER_SCOPES)}")
    now = datetime.now(UTC)
    allocation = settings.credits.allocations[tier]
    account = Account(
        name=name,
        tier=tier,
        credit_balance=allocation,
        credit_period=period_of(now),
        period_spent=0,
        trial_ends_at=now + timedelta(days=settings.credits.trial_days) if tier == "trial" else None,
    )
    session.add(account)
    await session.flush()
    session.add(CreditEntry(account_id=account.id, period=account.credit_period, kind="allocation", amount=allocation))
    return account


async def get_account(session: AsyncSession, account_id: uuid.UUID) -> Account:
    """The account, or not_found."""
    account = await session.get(Account, account_id)
    if account is None:
        raise NotFound(f"No account found with ID {account_id}")
    return account


async def list_accounts(session: AsyncSession) -> list[Account]:
    """Every account, oldest first."""
    return list(await session.scalars(select(Account).order_by(Account.created_at)))


async def create_project(session: AsyncSession, *, account_id: uuid.UUID, name: str) -> Project:
    """A new project of the account."""
    await get_account(session, account_id)
    project = Project(account_id=account_id, name=name)
    session.add(project)
    await session.flush()
    return project


async def list_projects(session: AsyncSession, *, account_id: uuid.UUID) -> list[Project]:
    """The account's projects, oldest first."""
    return list(
        await session.scalars(select(Project).where(Project.account_id == account_id).order_by(Project.created_at))
    )


async def _checked_binding(session: AsyncSession, account: Account, project_id: uuid.UUID | None) -> None:
    if project_id is None:
        return
    project = await session.get(Project, project_id)
    if project is None or project.account_id != account.id:
        raise NotFound(f"No project found with ID {project_id} in this account")


def _checked_scopes(granted: list[str], tier: str) -> list[str]:
    try:
        if not scopes.tier_allows(granted, tier):
            raise ValidationFailed(
                f"tier {tier} keys may hold only {', '.join(sorted(scopes.TIER_SCOPES[tier]))}",
                field_errors=[{"path": "scopes", "message": "exceeds the tier's scopes"}],
            )
    except scopes.UnknownScope as error:
        raise ValidationFailed(
            f"unknown scope {error}", field_errors=[{"path": "scopes", "message": f"unknown scope {error}"}]
        ) from error
    if not granted:
        raise ValidationFailed("a key needs at least one scope")
    return granted


async def create_key(
    session: AsyncSession,
    *,
    account_id: uuid.UUID,
    name: str,
    granted_scopes: list[str],
    settings: Settings,
    project_id: uuid.UUID | None = None,
    expires_in: timedelta | None = None,
) -> IssuedKey:
    """A new API key within the tier's scopes and key count."""
    account = await get_account(session, account_id)
    _checked_scopes(granted_scopes, account.tier)
    await _checked_binding(session, account, project_id)
    active = await session.scalar(
        select(func.count()).select_from(ApiKey).where(ApiKey.account_id == account_id, ApiKey.revoked_at.is_(None))
    )
    limit = settings.credits.key_limits[account.tier]
    if (active or 0) >= limit:
        raise ValidationFailed(f"tier {account.tier} allows {limit} active key(s); revoke one first")
    plaintext = KEY_PREFIX + secrets.token_urlsafe(32)
    key = ApiKey(
        account_id=account_id,
        project_id=project_id,
        name=name,
        prefix=plaintext[: len(KEY_PREFIX) + 6],
        secret_hash=hash_secret(plaintext),
        scopes=granted_scopes,
        expires_at=datetime.now(UTC) + expires_in if expires_in else None,
    )
    session.add(key)
    await session.flush()
    return IssuedKey(key=key, plaintext=plaintext)


async def list_keys(session: AsyncSession, *, account_id: uuid.UUID | None = None) -> list[ApiKey]:
    """Keys, newest first, optionally of one account."""
    query = select(ApiKey).order_by(ApiKey.created_at.desc())
    if account_id is not None:
        query = query.where(ApiKey.account_id == account_id)
    return list(await session.scalars(query))


class CredentialChanges:
    """A counter this process bumps when a revocation commits, so cached principals are dropped at once.

    Other processes see a revocation when their cache entries lapse (`auth.PRINCIPAL_CACHE_SECONDS`).
    """

    generation = 0

    @classmethod
    def after_commit_of(cls, session: AsyncSession | Session) -> None:
        """Bumps the counter when `session` commits (a rolled-back revocation changes nothing)."""

        def bump(_session: Any) -> None:
            cls.generation += 1

        target = session.sync_session if isinstance(session, AsyncSession) else session
        event.listen(target, "after_commit", bump, once=True)


async def revoke_key(session: AsyncSession, *, key_id: uuid.UUID) -> ApiKey:
    """Revokes a key at once; later calls with it are unauthenticated."""
    key = await session.get(ApiKey, key_id)
    if key is None:
        raise NotFound(f"No key found with ID {key_id}")
    if key.revoked_at is None:
        key.revoked_at = datetime.now(UTC)
        CredentialChanges.after_commit_of(session)
    return key


async def create_client(
    session: AsyncSession,
    *,
    account_id: uuid.UUID,
    name: str,
    granted_scopes: list[str],
    project_id: uuid.UUID | None = None,
) -> IssuedClient:
    """A client-credentials OAuth client within the tier's scopes."""
    account = await get_account(session, account_id)
    _checked_scopes(granted_scopes, account.tier)
    await _checked_binding(session, account, project_id)
    secret = secrets.token_urlsafe(32)
    client = OAuthClient(
        client_id=CLIENT_PREFIX + secrets.token_hex(12),
        account_id=account_id,
        project_id=project_id,
        name=name,
        secret_hash=hash_secret(secret),
        scopes=granted_scopes,
    )
    session.add(client)
    await session.flush()
    return IssuedClient(client=client, client_secret=secret)


async def revoke_client(session: AsyncSession, *, client_id: str) -> OAuthClient:
    """Revokes a client; its unexpired tokens stop working at once."""
    client = await session.scalar(select(OAuthClient).where(OAuthClient.client_id == client_id))
    if client is None:
        raise NotFound(f"No OAuth client {client_id}")
    if client.revoked_at is None:
        client.revoked_at = datetime.now(UTC)
        CredentialChanges.after_commit_of(session)
    return client


async def bootstrap(session: AsyncSession, *, settings: Settings) -> Bootstrapped | None:
    """On an empty database: an account, a default project and an mcp:full key (None when not empty)."""
    if await session.scalar(select(func.count()).select_from(Account)):
        return None
    account = await create_account(
        session, name=settings.bootstrap.account_name, tier=settings.bootstrap.tier, settings=settings
    )
    project = await create_project(session, account_id=account.id, name=settings.bootstrap.project_name)
    granted = (
        [scopes.FULL] if scopes.tier_allows([scopes.FULL], account.tier) else sorted(scopes.TIER_SCOPES[account.tier])
    )
    issued = await create_key(
        session, account_id=account.id, name="bootstrap", granted_scopes=granted, settings=settings
    )
    return Bootstrapped(account=account, project=project, issued=issued)
