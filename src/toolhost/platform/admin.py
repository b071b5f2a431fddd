"""`toolhost accounts|projects|keys|clients|users|credits`: the operator's commands over the platform's own rows.

Each works on an existing installation (`commands.installation_settings`), prints ids whole and answers `--json`.
"""

from __future__ import annotations

import asyncio
import re
import uuid
from collections.abc import Awaitable, Callable
from datetime import timedelta
from typing import Annotated, Any, TypeVar

import typer
from rich.table import Table
from sqlalchemy.ext.asyncio import AsyncSession

from toolhost.config import Settings
from toolhost.platform import accounts, credits, scopes, users
from toolhost.platform.commands import console, fail, installation_settings, print_json, print_table, refused
from toolhost.platform.dates import iso
from toolhost.platform.models import Account, ApiKey, OAuthClient, Project
from toolhost.platform.registry import Registry
from toolhost.platform.results import ToolError
from toolhost.platform.runtime import build_platform

accounts_app = typer.Typer(help="Accounts.", no_args_is_help=True)
projects_app = typer.Typer(help="Projects of an account.", no_args_is_help=True)
keys_app = typer.Typer(help="API keys.", no_args_is_help=True)
clients_app = typer.Typer(help="OAuth client-credentials clients.", no_args_is_help=True)
users_app = typer.Typer(help="People who sign in to the web pages and authorize MCP clients.", no_args_is_help=True)
credits_app = typer.Typer(help="Credits.", no_args_is_help=True)

Result = TypeVar("Result")
DURATION = re.compile(r"^(\d+)([mhdw])$")
DURATION_UNITS = {"m": "minutes", "h": "hours", "d": "days", "w": "weeks"}
JsonOption = Annotated[bool, typer.Option("--json", help="Print JSON instead of text.")]


def _run_in_session(work: Callable[[AsyncSession, Settings], Awaitable[Result]]) -> Result:
    """Runs `work` in one committed transaction of the installation, printing a ToolError as a clean message."""
    settings = installation_settings()

    async def main() -> Result:
        # The operator's commands run no tool, so their platform has none.
        platform = build_platform(settings, Registry())
        try:
            async with platform.session_factory() as session, session.begin():
                return await work(session, platform.settings)
        finally:
            await platform.close()

    try:
        return asyncio.run(main())
    except ToolError as error:
        refused(error)


def _uuid(value: str, what: str) -> uuid.UUID:
    try:
        return uuid.UUID(value)
    except ValueError:
        fail(f"{what} must be a UUID, got {value!r}", code=2)


def _duration(text: str) -> timedelta:
    match = DURATION.match(text.strip())
    if match is None:
        fail(f"durations look like 30d, 12h, 90m or 2w, got {text!r}", code=2)
    return timedelta(**{DURATION_UNITS[match.group(2)]: int(match.group(1))})


def _scopes(text: str) -> list[str]:
    try:
        return scopes.parse(text)
    except scopes.UnknownScope as error:
        fail(f"unknown scope {error}; one of {', '.join(scopes.ALL_SCOPES)}", code=2)


def _account(account: Account) -> dict[str, Any]:
    return {"id": str(account.id), "name": account.name, "tier": account.tier, "credit_balance": account.credit_balance}


def _project(project: Project) -> dict[str, Any]:
    return {"id": str(project.id), "account_id": str(project.account_id), "name": project.name}


def _key(key: ApiKey) -> dict[str, Any]:
    return {
        "id": str(key.id),
        "account_id": str(key.account_id),
        "name": key.name,
        "prefix": key.prefix,
        "scopes": list(key.scopes),
        "project_id": str(key.project_id) if key.project_id else None,
        "created_at": iso(key.created_at),
        "expires_at": iso(key.expires_at),
        "revoked_at": iso(key.revoked_at),
        "last_used_at": iso(key.last_used_at),
    }


def _client(client: OAuthClient) -> dict[str, Any]:
    return {
        "client_id": client.client_id,
        "account_id": str(client.account_id),
        "name": client.name,
        "scopes": list(client.scopes),
        "project_id": str(client.project_id) if client.project_id else None,
        "revoked_at": iso(client.revoked_at),
    }


@accounts_app.command("create")
def accounts_create(
    tier: Annotated[str, typer.Option(help="trial, pro, team or agency.")] = "pro",
    name: Annotated[str, typer.Option(help="A name for the account.")] = "account",
    as_json: JsonOption = False,
) -> None:
    """Creates an account with its tier's credit allocation."""
    account = _run_in_session(
        lambda session, settings: accounts.create_account(session, name=name, tier=tier, settings=settings)
    )
    if as_json:
        print_json(_account(account))
        return
    console.print(f"Account {account.id} ({account.tier}, {account.credit_balance} credits)")


@accounts_app.command("list")
def accounts_list(as_json: JsonOption = False) -> None:
    """Lists every account."""
    rows = _run_in_session(lambda session, settings: accounts.list_accounts(session))
    if as_json:
        print_json([_account(account) for account in rows])
        return
    table = Table("id", "name", "tier", "balance")
    for account in rows:
        table.add_row(str(account.id), account.name, account.tier, str(account.credit_balance))
    print_table(table)


@projects_app.command("create")
def projects_create(
    account: Annotated[str, typer.Option(help="Account id.")],
    name: Annotated[str, typer.Option(help="Project name.")],
    as_json: JsonOption = False,
) -> None:
    """Creates a project in an account."""
    account_id = _uuid(account, "--account")
    project = _run_in_session(
        lambda session, settings: accounts.create_project(session, account_id=account_id, name=name)
    )
    if as_json:
        print_json(_project(project))
        return
    console.print(f"Project {project.id} ({project.name})")


@projects_app.command("list")
def projects_list(account: Annotated[str, typer.Option(help="Account id.")], as_json: JsonOption = False) -> None:
    """Lists an account's projects."""
    account_id = _uuid(account, "--account")
    rows = _run_in_session(lambda session, settings: accounts.list_projects(session, account_id=account_id))
    if as_json:
        print_json([_project(project) for project in rows])
        return
    table = Table("id", "name")
    for project in rows:
        table.add_row(str(project.id), project.name)
    print_table(table)


@keys_app.command("create")
def keys_create(
    account: Annotated[str, typer.Option(help="Account id.")],
    name: Annotated[str, typer.Option(help="Name shown as an approval's decided_by.")],
    scopes_text: Annotated[
        str, typer.Option("--scopes", help="Comma-separated, e.g. mcp:read,mcp:write.")
    ] = "mcp:read",
    project: Annotated[str | None, typer.Option(help="Bind the key to one project.")] = None,
    expires_in: Annotated[str | None, typer.Option(help="Lifetime such as 30d, 12h.")] = None,
    as_json: JsonOption = False,
) -> None:
    """Creates an API key and prints it once."""
    account_id = _uuid(account, "--account")
    project_id = _uuid(project, "--project") if project else None
    lifetime = _duration(expires_in) if expires_in else None
    granted = _scopes(scopes_text)
    issued = _run_in_session(
        lambda session, settings: accounts.create_key(
            session,
            account_id=account_id,
            name=name,
            granted_scopes=granted,
            settings=settings,
            project_id=project_id,
            expires_in=lifetime,
        )
    )
    if as_json:
        print_json({**_key(issued.key), "key": issued.plaintext})
        return
    console.print(f"Key {issued.key.id} ({', '.join(granted)})")
    console.print(f"API key (shown once, keep it): [bold]{issued.plaintext}[/bold]")


@keys_app.command("list")
def keys_list(
    account: Annotated[str | None, typer.Option(help="Only this account's keys.")] = None,
    as_json: JsonOption = False,
) -> None:
    """Lists keys (never their secrets)."""
    account_id = _uuid(account, "--account") if account else None
    rows = _run_in_session(lambda session, settings: accounts.list_keys(session, account_id=account_id))
    if as_json:
        print_json([_key(key) for key in rows])
        return
    table = Table("id", "name", "prefix", "scopes", "project", "expires", "revoked", "last used")
    for key in rows:
        table.add_row(
            str(key.id),
            key.name,
            key.prefix + "…",
            ",".join(key.scopes),
            str(key.project_id or "-"),
            iso(key.expires_at) or "-",
            iso(key.revoked_at) or "-",
            iso(key.last_used_at) or "-",
        )
    print_table(table)


@keys_app.command("revoke")
def keys_revoke(
    key_id: Annotated[str, typer.Argument(help="Key id (from keys list).")], as_json: JsonOption = False
) -> None:
    """Revokes a key at once."""
    parsed = _uuid(key_id, "key id")
    key = _run_in_session(lambda session, settings: accounts.revoke_key(session, key_id=parsed))
    if as_json:
        print_json(_key(key))
        return
    console.print(f"Key {key.id} revoked.")


@clients_app.command("create")
def clients_create(
    account: Annotated[str, typer.Option(help="Account id.")],
    name: Annotated[str, typer.Option(help="Client name.")],
    scopes_text: Annotated[str, typer.Option("--scopes", help="Comma-separated scopes.")] = "mcp:read",
    project: Annotated[str | None, typer.Option(help="Bind the client to one project.")] = None,
    as_json: JsonOption = False,
) -> None:
    """Creates a client-credentials OAuth client and prints its secret once."""
    account_id = _uuid(account, "--account")
    project_id = _uuid(project, "--project") if project else None
    granted = _scopes(scopes_text)
    issued = _run_in_session(
        lambda session, settings: accounts.create_client(
            session, account_id=account_id, name=name, granted_scopes=granted, project_id=project_id
        )
    )
    if as_json:
        print_json({**_client(issued.client), "client_secret": issued.client_secret})
        return
    console.print(f"client_id: {issued.client.client_id}")
    console.print(f"client_secret (shown once): [bold]{issued.client_secret}[/bold]")


@clients_app.command("revoke")
def clients_revoke(
    client_id: Annotated[str, typer.Argument(help="The client_id.")], as_json: JsonOption = False
) -> None:
    """Revokes a client; its tokens stop working at once."""
    client = _run_in_session(lambda session, settings: accounts.revoke_client(session, client_id=client_id))
    if as_json:
        print_json(_client(client))
        return
    console.print(f"Client {client.client_id} revoked.")


@users_app.command("create")
def users_create(
    account: Annotated[str, typer.Option(help="Account id.")],
    email: Annotated[str, typer.Option(help="The address the person signs in with.")],
    password: Annotated[
        str | None,
        typer.Option(help="Their password (12 characters or more); default: prompted for, unechoed, twice."),
    ] = None,
    as_json: JsonOption = False,
) -> None:
    """Creates a person of an account, who signs in at /signin with this address and password."""
    account_id = _uuid(account, "--account")
    chosen = password if password is not None else typer.prompt("Password", hide_input=True, confirmation_prompt=True)
    user = _run_in_session(
        lambda session, settings: users.create_user(session, account_id=account_id, email=email, password=chosen)
    )
    if as_json:
        print_json({"id": str(user.id), "account_id": str(account_id), "email": user.email})
        return
    console.print(f"User {user.id} ({user.email}) signs in at /signin")


@credits_app.command("grant")
def credits_grant(
    account: Annotated[str, typer.Option(help="Account id.")],
    amount: Annotated[int, typer.Option(help="Credits to add.", min=1)],
    as_json: JsonOption = False,
) -> None:
    """Grants credits to an account."""
    account_id = _uuid(account, "--account")
    balance = _run_in_session(lambda session, settings: credits.grant(session, account_id=account_id, amount=amount))
    if as_json:
        print_json({"account_id": str(account_id), "granted": amount, "balance": balance})
        return
    console.print(f"Granted {amount} credits; balance {balance}.")
