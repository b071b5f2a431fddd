"""Comments through the routed account's connector (CATALOG.md §12, account routing §1.12).

The account is routed like the distribution tools route it (the distribution domain's account service);
the connector does the platform work. Webhook accounts have no platform API to ask: their comments are
those the receiver sent to `POST /v1/connectors/webhook/events`, stored as connector events.
"""

from __future__ import annotations

import base64
import binascii
import uuid
from collections.abc import Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from sqlalchemy import select
from sqlalchemy.ext.asyncio import AsyncSession

from toolhost.db.session import end_unit_of_work
from toolhost.domains.distribution import service as accounts_service
from toolhost.domains.distribution.models import ConnectedAccount, ConnectorEvent, Post
from toolhost.platform.results import ValidationFailed
from toolhost.providers.connectors.base import (
    COMMENTS_DELETE,
    COMMENTS_LIST,
    COMMENTS_MODERATE,
    COMMENTS_POST,
    COMMENTS_REPLY,
    AccountSession,
    Comment,
    Connector,
)
from toolhost.providers.connectors.registry import Connectors
from toolhost.providers.connectors.vault import TokenVault

if TYPE_CHECKING:
    from toolhost.config import Settings

COMMENT_CAPABILITIES = frozenset({COMMENTS_LIST, COMMENTS_REPLY, COMMENTS_POST, COMMENTS_MODERATE, COMMENTS_DELETE})
# The catalogue's moderation_status -> the connector's moderation action.
MODERATION_ACTIONS = {"published": "publish", "rejected": "reject"}
# Without video_id a listing reads the account's most recent published posts.
RECENT_POSTS = 10
# Pages are offsets into what the platform returns for one listing; deeper than this is not read.
MAX_LISTING = 500


@dataclass(frozen=True, slots=True)
class AccountChoice:
    """How the caller named the account: its id, a platform to route on, or neither (§12 defaults)."""

    project_id: uuid.UUID
    connected_account_id: str | None = None
    platform: str | None = None


@dataclass
class RoutedAccount:
    """The account a call works through, its connector and the connector's view of it."""

    account: ConnectedAccount
    connector: Connector
    view: AccountSession
    vault: TokenVault

    def store_refreshed(self) -> None:
        """Writes back token material the connector refreshed during the call."""
        accounts_service.store_refreshed(self.account, self.view, self.vault)


def _not_usable(account_id: str, project_id: uuid.UUID) -> ValidationFailed:
    return ValidationFailed(
        f"account {account_id} is not a usable connected account of project {project_id}",
        recover_with="call list_connected_accounts for the project's accounts",
        field_errors=[{"path": "connected_account_id", "message": "not a usable account of this project"}],
    )


def _candidates(accounts: Sequence[ConnectedAccount]) -> list[dict[str, Any]]:
    # The error's details are JSON for the caller to choose from.
    return [
        {
            "id": str(account.id),
            "platform": account.platform,
            "connector": account.connector,
            "username": account.username,
        }
        for account in accounts
    ]


async def _choose_account(
    *,
    session: AsyncSession,
    connectors: Connectors,
    project_id: uuid.UUID,
    connected_account_id: str | None,
    platform: str | None,
) -> ConnectedAccount:
    if platform is not None:
        try:
            routed = await accounts_service.route(
                session=session, project_id=project_id, platforms=[platform], account_id=connected_account_id
            )
        except ValidationFailed as error:
            # The routing service names its own argument (account_id); this tool's is connected_account_id.
            for field_error in error.details.get("field_errors") or []:
                if field_error.get("path") == "account_id":
                    field_error["path"] = "connected_account_id"
            raise
        return routed[accounts_service.canonical_platform(platform)]
    accounts = [
        account
        for account in await accounts_service.list_for_project(session=session, project_id=project_id, include_all=True)
    ]
    if connected_account_id is not None:
        chosen = next((account for account in accounts if str(account.id) == connected_account_id.lower()), None)
        if chosen is None or not accounts_service.is_usable(chosen):
            raise _not_usable(connected_account_id, project_id)
        return chosen
    usable = [account for account in accounts if accounts_service.is_usable(account)]
    youtube = [account for account in usable if account.platform == "youtube"]
    capable = youtube or [
        account
        for account in usable
        if (connector := connectors.get(account.connector)) is not None
        and connector.capabilities & COMMENT_CAPABILITIES
    ]
    if not capable:
        raise ValidationFailed(
            f"no active account with comments is bound to project {project_id}",
            recover_with="call start_platform_connection (youtube, twitter, instagram, facebook, threads, mastodon "
            "or bluesky), then retry",
        )
    if len(capable) > 1:
        raise ValidationFailed(
            f"project {project_id} has {len(capable)} accounts that could serve comments; say which one",
            recover_with="pass connected_account_id (or platform) with one of the candidates",
            candidates=_candidates(capable),
        )
    return capable[0]


async def route(*, session: AsyncSession, settings: Settings, choice: AccountChoice, capability: str) -> RoutedAccount:
    """The account (CATALOG.md §12 routing) and its connector, refusing a capability the connector lacks."""
    connectors = Connectors(settings)
    account = await _choose_account(
        session=session,
        connectors=connectors,
        project_id=choice.project_id,
        connected_account_id=choice.connected_account_id,
        platform=choice.platform,
    )
    connector = connectors.get(account.connector)
    if connector is None:
        raise ValidationFailed(
            f"the {account.connector} connector of account {account.id} is not configured on this server",
            recover_with="ask the operator to configure it, or connect the account through another connector",
            connector=account.connector,
            capability=capability,
        )
    connector.require(capability)
    vault = TokenVault(settings.keyring)
    routed = RoutedAccount(account, connector, accounts_service.session_of(account, vault), vault)
    # The connector's calls come next: no transaction is held across them.
    await end_unit_of_work(session)
    return routed


def _offset(page_token: str | None) -> int:
    if page_token is None:
        return 0
    try:
        label, _, number = base64.urlsafe_b64decode(page_token.encode()).decode().partition(":")
        offset = int(number) if label == "offset" else -1
    except (ValueError, binascii.Error, UnicodeDecodeError):
        offset = -1
    if not 0 < offset < MAX_LISTING:
        raise ValidationFailed(
            "page_token is not one that list_comments returned",
            recover_with="pass the nextPageToken of the previous call, or omit page_token",
            field_errors=[{"path": "page_token", "message": "unknown page token"}],
        )
    return offset


def _token(offset: int) -> str:
    return base64.urlsafe_b64encode(f"offset:{offset}".encode()).decode()


@dataclass(frozen=True, slots=True)
class ListedComment:
    """A comment with the post it is on: the platform's id of the post, and its title when toolhost published it."""

    comment: Comment
    post_id: str
    post_title: str | None
    can_reply: bool


@dataclass(frozen=True, slots=True)
class CommentPage:
    """One page of comments, and the token of the next page when there is one."""

    comments: list[ListedComment]
    next_page_token: str | None


async def _recent_posts(session: AsyncSession, account: ConnectedAccount) -> list[Post]:
    """The account's most recently published posts that have a platform id.

    The unit of work ends after the read: the connector is asked about each post next.
    """
    posts = list(
        await session.scalars(
            select(Post)
            .where(
                Post.connected_account_id == account.id,
                Post.status == "published",
                Post.external_post_id.is_not(None),
            )
            .order_by(Post.published_at.desc())
            .limit(RECENT_POSTS)
        )
    )
    await end_unit_of_work(session)
    return posts


async def _post_titles(
    session: AsyncSession, account: ConnectedAccount, external_ids: Sequence[str]
) -> dict[str, str | None]:
    if not external_ids:
        return {}
    rows = await session.execute(
        select(Post.external_post_id, Post.title).where(
            Post.connected_account_id == account.id, Post.external_post_id.in_(list(external_ids))
        )
    )
    return {str(external_id): title for external_id, title in rows}


async def _received_comments(
    session: AsyncSession, account: ConnectedAccount, video_id: str | None, limit: int
) -> list[tuple[str, Comment]]:
    """Comments a webhook receiver sent for the account, newest first; a comment sent twice counts once."""
    query = select(ConnectorEvent).where(
        ConnectorEvent.connected_account_id == account.id, ConnectorEvent.kind == "comment"
    )
    if video_id is not None:
        query = query.where(ConnectorEvent.external_post_id == video_id)
    # Repeats are rare (at-least-once delivery), so a bounded read still fills the page.
    events = await session.scalars(
        query.order_by(ConnectorEvent.received_at.desc(), ConnectorEvent.id).limit(limit * 4)
    )
    found: dict[tuple[str, str], tuple[str, Comment]] = {}
    for event in events:
        comment_id = str(event.payload.get("id") or "") or str(event.id)
        key = (event.external_post_id, comment_id)
        if key in found:
            continue
        found[key] = (
            event.external_post_id,
            Comment(
                id=comment_id,
                text=str(event.payload.get("text") or ""),
                author=event.payload.get("author"),
                created_at=event.payload.get("created_at") or None,
                parent_id=None,
            ),
        )
        if len(found) >= limit:
            break
    return list(found.values())


async def list_comments(
    *,
    session: AsyncSession,
    settings: Settings,
    choice: AccountChoice,
    video_id: str | None,
    max_results: int,
    page_token: str | None,
) -> CommentPage:
    """One page of comments on a post, or of recent comments across the account's published posts."""
    offset = _offset(page_token)
    routed = await route(session=session, settings=settings, choice=choice, capability=COMMENTS_LIST)
    window = min(offset + max_results + 1, MAX_LISTING)
    account, connector = routed.account, routed.connector
    found: list[tuple[str, Comment]]
    if account.connector == "webhook":
        found = await _received_comments(session, account, video_id, window)
    elif video_id is not None:
        found = [(video_id, comment) for comment in await connector.list_comments(routed.view, video_id, limit=window)]
    else:
        found = []
        for post in await _recent_posts(session, account):
            external_id = str(post.external_post_id)
            found += [
                (external_id, comment)
                for comment in await connector.list_comments(routed.view, external_id, limit=window)
            ]
        # Across posts the newest comments come first (ISO-8601 UTC strings sort by time).
        found.sort(key=lambda item: item[1].created_at or "", reverse=True)
    routed.store_refreshed()
    page = found[offset : offset + max_results]
    titles = await _post_titles(session, account, sorted({external_id for external_id, _ in page}))
    can_reply = COMMENTS_REPLY in connector.capabilities
    more = len(found) > offset + max_results and offset + max_results < MAX_LISTING
    return CommentPage(
        comments=[
            ListedComment(comment=comment, post_id=external_id, post_title=titles.get(external_id), can_reply=can_reply)
            for external_id, comment in page
        ],
        next_page_token=_token(offset + max_results) if more else None,
    )


async def _post_of_comment(session: AsyncSession, routed: RoutedAccount, comment_id: str) -> str | None:
    """Which of the account's recent posts a comment answers directly, when one does."""
    for post in await _recent_posts(session, routed.account):
        external_id = str(post.external_post_id)
        listed = await routed.connector.list_comments(routed.view, external_id, limit=MAX_LISTING)
        if any(comment.id == comment_id for comment in listed):
            return external_id
    return None


async def reply_to_comment(
    *,
    session: AsyncSession,
    settings: Settings,
    choice: AccountChoice,
    parent_id: str,
    text: str,
    video_id: str | None,
) -> Comment:
    """Answers a comment as the connected account; returns the reply."""
    routed = await route(session=session, settings=settings, choice=choice, capability=COMMENTS_REPLY)
    post_id = video_id
    if post_id is None and routed.account.connector == "bluesky":
        # A Bluesky reply names its thread's root post as well as its parent; YouTube and Mastodon need only
        # the parent. Without video_id the root is the recent post the comment was made on.
        post_id = await _post_of_comment(session, routed, parent_id)
        if post_id is None:
            raise ValidationFailed(
                "on Bluesky a reply needs the post the comment is on, and it is not one of the account's recent posts",
                recover_with="pass video_id: the AT-URI of the post the comment answers",
                field_errors=[{"path": "video_id", "message": "required for this Bluesky comment"}],
            )
    created = await routed.connector.reply_to_comment(routed.view, post_id or "", parent_id, text)
    routed.store_refreshed()
    return created


async def post_comment(
    *, session: AsyncSession, settings: Settings, choice: AccountChoice, video_id: str, text: str
) -> Comment:
    """A top-level comment on a post (on Mastodon and Bluesky: a reply to the post itself); returns it."""
    routed = await route(session=session, settings=settings, choice=choice, capability=COMMENTS_POST)
    created = await routed.connector.post_comment(routed.view, video_id, text)
    routed.store_refreshed()
    return created


async def moderate_comment(
    *, session: AsyncSession, settings: Settings, choice: AccountChoice, comment_id: str, moderation_status: str
) -> None:
    """Publishes a held comment, or rejects one (hidden, kept in the platform's moderation queue)."""
    routed = await route(session=session, settings=settings, choice=choice, capability=COMMENTS_MODERATE)
    await routed.connector.moderate_comment(routed.view, comment_id, MODERATION_ACTIONS[moderation_status])
    routed.store_refreshed()


async def delete_comment(*, session: AsyncSession, settings: Settings, choice: AccountChoice, comment_id: str) -> None:
    """Deletes a comment the connected account wrote; the platform refuses anyone else's."""
    routed = await route(session=session, settings=settings, choice=choice, capability=COMMENTS_DELETE)
    await routed.connector.delete_comment(routed.view, comment_id)
    routed.store_refreshed()
