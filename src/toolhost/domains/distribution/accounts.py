"""Connected accounts: creation through a connector, effective status, account routing, connect links."""

from __future__ import annotations

import hashlib
import secrets
import uuid
from collections.abc import Sequence
from dataclasses import dataclass
from datetime import datetime, timedelta
from typing import TYPE_CHECKING, Any

from sqlalchemy import select, update
from sqlalchemy.ext.asyncio import AsyncSession, async_sessionmaker

from toolhost.db.base import utcnow
from toolhost.domains.distribution.models import ConnectedAccount, ConnectionLink
from toolhost.platform.fields import CONNECTION_PLATFORMS
from toolhost.platform.results import NotFound, ValidationFailed
from toolhost.providers import platforms as social_platforms
from toolhost.providers.connectors.base import AccountSession, ConnectResult
from toolhost.providers.connectors.registry import Connectors
from toolhost.providers.connectors.vault import TokenVault

if TYPE_CHECKING:
    from toolhost.config import Settings

USABLE = ("active", "expires_soon")
# The platform refused the account's token (revoked, or its refresh refused): a new sign-in is needed.
NEEDS_REAUTH = "needs_reauth"
SessionFactory = async_sessionmaker[AsyncSession]
RESEAL_BATCH = 100
EXPIRY_WARNING = timedelta(days=7)


def effective_status(account: ConnectedAccount, now: datetime | None = None) -> str:
    """The status after the expiry check at read time (CATALOG.md §1.6 connected-account machine)."""
    if account.status not in USABLE or account.expires_at is None:
        return account.status
    now = now or utcnow()
    if account.expires_at <= now:
        return "expired"
    if account.expires_at - now <= EXPIRY_WARNING:
        return "expires_soon"
    return "active"


def is_usable(account: ConnectedAccount) -> bool:
    """Whether posts may be published through the account."""
    return effective_status(account) in USABLE


def canonical_platform(platform: str) -> str:
    """x and twitter are one platform for routing."""
    return social_platforms.canonical_name(platform)


def session_of(
    account: ConnectedAccount, vault: TokenVault, *, session_factory: SessionFactory | None = None
) -> AccountSession:
    """The connector's view of an account, with its token material decrypted.

    With a session factory (the worker's), refreshed tokens are stored the moment the connector has them and
    the connector can read what another worker stored meanwhile (platforms that rotate refresh tokens).
    """
    view = AccountSession(
        platform=account.platform,
        username=account.username,
        settings=dict(account.settings),
        secrets=vault.open(account.secret),
        expires_at=account.expires_at,
    )
    if session_factory is None:
        return view
    account_id = account.id

    async def persist(refreshed: AccountSession) -> None:
        async with session_factory() as session, session.begin():
            await session.execute(
                update(ConnectedAccount)
                .where(ConnectedAccount.id == account_id)
                .values(**refreshed_values(refreshed, vault))
                .execution_options(synchronize_session=False)
            )

    # Token material is each connector's own JSON (access and refresh tokens, app passwords...).
    async def reload() -> dict[str, Any]:
        async with session_factory() as session:
            sealed = await session.scalar(select(ConnectedAccount.secret).where(ConnectedAccount.id == account_id))
        return vault.open(sealed) if sealed else {}

    view.persist, view.reload = persist, reload
    return view


def refreshed_values(refreshed: AccountSession, vault: TokenVault) -> dict[str, Any]:
    """The columns a refresh changes: the sealed tokens and, for an account that lives as long as its token
    (Meta's renewed long-lived tokens), the new expiry; by column name, as an UPDATE's values take them."""
    values: dict[str, Any] = {"secret": vault.seal(refreshed.secrets), "updated_at": utcnow()}
    if refreshed.expires_at is not None:
        values["expires_at"] = refreshed.expires_at
    return values


@dataclass(frozen=True, slots=True)
class Resealed:
    """What re-encrypting the stored token material did: rows moved to the current key, rows no key opens."""

    resealed: int
    unreadable: frozenset[uuid.UUID]


async def reseal_secrets(*, session_factory: async_sessionmaker[AsyncSession], vault: TokenVault) -> Resealed:
    """Re-encrypts every connected account's token material under the current key generation.

    A row is written only if it still holds what was read: a worker that refreshed the account's tokens in
    between wrote its own value, which the next pass looks at again, until a pass leaves no row behind.
    """
    resealed, unreadable = 0, set()
    while True:
        missed = 0
        async with session_factory() as session:
            rows = (await session.execute(select(ConnectedAccount.id, ConnectedAccount.secret))).all()
        stale = [(account_id, sealed) for account_id, sealed in rows if not vault.sealed_under_current(sealed)]
        for start in range(0, len(stale), RESEAL_BATCH):
            async with session_factory() as session, session.begin():
                for account_id, sealed in stale[start : start + RESEAL_BATCH]:
                    try:
                        fresh = vault.reseal(sealed)
                    except ValueError:
                        unreadable.add(account_id)
                        continue
                    written = await session.execute(
                        update(ConnectedAccount)
                        .where(ConnectedAccount.id == account_id, ConnectedAccount.secret == sealed)
                        .values(secret=fresh)
                        .execution_options(synchronize_session=False)
                    )
                    if written.rowcount:  # type: ignore[attr-defined]
                        resealed += 1
                    else:
                        missed += 1
        if not missed:
            return Resealed(resealed=resealed, unreadable=frozenset(unreadable))


def store_refreshed(account: ConnectedAccount, session: AccountSession, vault: TokenVault) -> None:
    """Writes back token material a connector refreshed."""
    if session.changed:
        account.secret = vault.seal(session.secrets)
        account.expires_at = None if account.connector == "youtube" else session.expires_at
        account.updated_at = utcnow()


async def create(
    *,
    session: AsyncSession,
    settings: Settings,
    project_id: uuid.UUID,
    platform: str,
    connector_name: str,
    fields: dict[str, str],
    connectors: Connectors | None = None,
) -> tuple[ConnectedAccount, dict[str, str]]:
    """Connects an account through a connector; returns it and what must be shown once (webhook secret)."""
    connectors = connectors or Connectors(settings)
    platform = canonical_platform(platform)
    connector = connectors.require(connector_name, platform)
    result = await connector.connect(platform=platform, fields=fields)
    return await store(
        session=session,
        settings=settings,
        project_id=project_id,
        platform=platform,
        connector_name=connector_name,
        result=result,
    ), result.shown_once


async def store(
    *,
    session: AsyncSession,
    settings: Settings,
    project_id: uuid.UUID,
    platform: str,
    connector_name: str,
    result: ConnectResult,
) -> ConnectedAccount:
    """Saves a verified connection; the same platform username in the project is re-activated, not doubled."""
    vault = TokenVault(settings.keyring)
    existing = None
    if connector_name != "webhook" and result.username:
        existing = await session.scalar(
            select(ConnectedAccount).where(
                ConnectedAccount.project_id == project_id,
                ConnectedAccount.platform == platform,
                ConnectedAccount.connector == connector_name,
                ConnectedAccount.username == result.username,
            )
        )
    account = existing or ConnectedAccount(project_id=project_id, platform=platform, connector=connector_name)
    account.username = result.username
    account.settings = result.settings
    account.secret = vault.seal(result.secrets)
    account.has_refresh_token = bool(result.secrets.get("refresh_token") or result.secrets.get("refresh_jwt"))
    account.expires_at = result.expires_at if connector_name != "youtube" else None
    account.status = "active"
    account.error = None
    if existing is None:
        session.add(account)
    await session.flush()
    return account


async def list_for_project(
    *, session: AsyncSession, project_id: uuid.UUID, include_all: bool
) -> list[ConnectedAccount]:
    """A project's accounts, oldest first; only usable ones unless include_all."""
    accounts = list(
        await session.scalars(
            select(ConnectedAccount)
            .where(ConnectedAccount.project_id == project_id)
            .order_by(ConnectedAccount.created_at)
        )
    )
    return accounts if include_all else [account for account in accounts if is_usable(account)]


async def projects_with_usable_accounts(
    session: AsyncSession, project_ids: Sequence[uuid.UUID], platform: str | None
) -> set[uuid.UUID]:
    """The probe of the `accounts` project mode: which of these projects can publish (to `platform`)."""
    if not project_ids:
        return set()
    query = select(ConnectedAccount).where(
        ConnectedAccount.project_id.in_(project_ids), ConnectedAccount.status.in_(USABLE)
    )
    if platform:
        query = query.where(ConnectedAccount.platform == canonical_platform(platform))
    return {account.project_id for account in await session.scalars(query) if is_usable(account)}


# The accounts to choose from, in a validation_error's JSON details.
def _candidates(accounts: Sequence[ConnectedAccount]) -> list[dict[str, Any]]:
    return [
        {
            "id": str(account.id),
            "platform": account.platform,
            "connector": account.connector,
            "username": account.username,
        }
        for account in accounts
    ]


async def route(
    *,
    session: AsyncSession,
    project_id: uuid.UUID,
    platforms: Sequence[str],
    account_id: str | None = None,
    account_ids: dict[str, str] | None = None,
) -> dict[str, ConnectedAccount]:
    """Account routing (CATALOG.md §1.12): the account each target platform publishes through."""
    targets = [canonical_platform(platform) for platform in platforms]
    explicit: dict[str, str] = {}
    if account_id is not None:
        if account_ids:
            raise ValidationFailed(
                "give account_id or account_ids, not both",
                field_errors=[{"path": "account_ids", "message": "not with account_id"}],
            )
        if len(set(targets)) != 1:
            raise ValidationFailed(
                "account_id needs exactly one platform; use account_ids for several",
                field_errors=[{"path": "account_id", "message": "only with one platform"}],
            )
        explicit[targets[0]] = account_id
    for name, value in (account_ids or {}).items():
        platform = canonical_platform(str(name))
        if platform not in targets:
            raise ValidationFailed(
                f"account_ids names {name}, which is not a target platform",
                field_errors=[{"path": f"account_ids.{name}", "message": "platform not targeted"}],
            )
        if platform in explicit and explicit[platform] != str(value):
            raise ValidationFailed(
                "different account ids were given for x and twitter",
                field_errors=[{"path": f"account_ids.{name}", "message": "conflicting ids"}],
            )
        explicit[platform] = str(value)
    accounts = list(
        await session.scalars(
            select(ConnectedAccount)
            .where(ConnectedAccount.project_id == project_id, ConnectedAccount.platform.in_(targets))
            .order_by(ConnectedAccount.created_at)
        )
    )
    routed: dict[str, ConnectedAccount] = {}
    for platform in dict.fromkeys(targets):
        if platform in explicit:
            chosen = next((account for account in accounts if str(account.id) == explicit[platform].lower()), None)
            if chosen is None or chosen.platform != platform or not is_usable(chosen):
                raise ValidationFailed(
                    f"account {explicit[platform]} is not a usable {platform} account of project {project_id}",
                    recover_with="call list_connected_accounts for the project's accounts",
                    field_errors=[
                        {
                            "path": "account_ids" if account_ids else "account_id",
                            "message": "not a usable account of this project on this platform",
                        }
                    ],
                )
            routed[platform] = chosen
            continue
        usable = [account for account in accounts if account.platform == platform and is_usable(account)]
        if not usable:
            raise ValidationFailed(
                f"no active account is bound to project {project_id} for {platform}",
                recover_with=f"call start_platform_connection with platform={platform}",
                field_errors=[{"path": "platforms", "message": f"no connected {platform} account"}],
            )
        if len(usable) > 1:
            raise ValidationFailed(
                f"project {project_id} has {len(usable)} {platform} accounts; say which one",
                recover_with="pass account_id (one platform) or account_ids {platform: id}",
                candidates=_candidates(usable),
            )
        routed[platform] = usable[0]
    return routed


def hash_token(token: str) -> str:
    """What is stored of a connect-link token."""
    return hashlib.sha256(token.encode()).hexdigest()


async def start_link(
    *, session: AsyncSession, settings: Settings, project_id: uuid.UUID, platform: str
) -> tuple[ConnectionLink, str]:
    """A single-use connect link (CATALOG.md §10 start_platform_connection); returns it and its URL."""
    platform = canonical_platform(platform)
    connectors = Connectors(settings)
    if not connectors.for_platform(platform):
        every = sorted({platform for platform in CONNECTION_PLATFORMS if connectors.for_platform(platform)})
        unconfigured = connectors.unconfigured_for(platform)
        missing = sorted({name for names in unconfigured.values() for name in names})
        raise ValidationFailed(
            f"no connector is configured for {platform}"
            + (f": the {', '.join(unconfigured)} connector needs {', '.join(missing)}" if missing else ""),
            recover_with="ask the operator to set the connector's app settings, or pick a configured platform"
            if missing
            else "pick a platform a connector is configured for",
            configured_platforms=every,
            missing_settings=missing,
            field_errors=[{"path": "platform", "message": "no configured connector"}],
        )
    token = secrets.token_urlsafe(32)
    link = ConnectionLink(
        token_hash=hash_token(token),
        project_id=project_id,
        platform=platform,
        expires_at=utcnow() + timedelta(seconds=settings.distribution.connect_link_seconds),
    )
    session.add(link)
    await session.flush()
    return link, f"{settings.api_root}/app/connect/{token}"


async def open_link(*, session: AsyncSession, settings: Settings, token: str) -> ConnectionLink:
    """The link behind a connect-page token: opened within its window, then valid for the page's life."""
    link = await session.scalar(select(ConnectionLink).where(ConnectionLink.token_hash == hash_token(token)))
    now = utcnow()
    if link is None or link.completed_at is not None:
        raise NotFound("this connect link is unknown or was already used")
    if link.opened_at is None:
        if link.expires_at <= now:
            raise NotFound("this connect link expired before it was opened; start a new one")
        link.opened_at = now
        await session.flush()
    elif link.opened_at + timedelta(seconds=settings.distribution.connect_page_seconds) <= now:
        raise NotFound("this connect page expired; start a new link")
    return link


async def complete_link(
    *,
    session: AsyncSession,
    settings: Settings,
    link: ConnectionLink,
    connector_name: str,
    result: ConnectResult,
) -> ConnectedAccount:
    """Creates the account a connect page verified, and spends the link."""
    account = await store(
        session=session,
        settings=settings,
        project_id=link.project_id,
        platform=link.platform,
        connector_name=connector_name,
        result=result,
    )
    link.completed_at = utcnow()
    link.connected_account_id = account.id
    await session.flush()
    return account
