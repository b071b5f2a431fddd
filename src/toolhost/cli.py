"""The toolhost command line: serve, migrate, admin of accounts, projects, keys and credits, and tool calls."""

from __future__ import annotations

import asyncio
import json
import os
import re
import uuid
from collections.abc import Awaitable, Callable
from datetime import timedelta
from typing import Annotated, Any, TypeVar

import typer
from rich.table import Table
from sqlalchemy.exc import SQLAlchemyError
from sqlalchemy.ext.asyncio import AsyncSession

from toolhost.catalog import JOB_TYPES, POLLERS, load_tools
from toolhost.config import Settings
from toolhost.db.migrate import upgrade
from toolhost.domains.analytics.cli import app as metrics_app
from toolhost.domains.distribution.cli import app as connections_app
from toolhost.platform import accounts, credits, scopes
from toolhost.platform.commands import (
    command_settings,
    console,
    database_shown,
    fail,
    installation_settings,
    print_json,
    print_table,
    refused,
    unreachable,
)
from toolhost.platform.dates import iso
from toolhost.platform.models import Account, ApiKey, OAuthClient, Project
from toolhost.platform.registry import registry
from toolhost.platform.results import ToolError
from toolhost.platform.runtime import build_platform
from toolhost.platform.supervisor import supervise
from toolhost.platform.worker import load_job_types, load_pollers, run_worker

app = typer.Typer(help="toolhost: hosted tools for AI content work.", no_args_is_help=True)
accounts_app = typer.Typer(help="Accounts.", no_args_is_help=True)
projects_app = typer.Typer(help="Projects of an account.", no_args_is_help=True)
keys_app = typer.Typer(help="API keys.", no_args_is_help=True)
clients_app = typer.Typer(help="OAuth client-credentials clients.", no_args_is_help=True)
credits_app = typer.Typer(help="Credits.", no_args_is_help=True)
tools_app = typer.Typer(help="The tool registry.", no_args_is_help=True)
app.add_typer(accounts_app, name="accounts")
app.add_typer(projects_app, name="projects")
app.add_typer(keys_app, name="keys")
app.add_typer(clients_app, name="clients")
app.add_typer(credits_app, name="credits")
app.add_typer(tools_app, name="tools")
app.add_typer(connections_app, name="connections")
app.add_typer(metrics_app, name="metrics")

Result = TypeVar("Result")
DURATION = re.compile(r"^(\d+)([mhdw])$")
DURATION_UNITS = {"m": "minutes", "h": "hours", "d": "days", "w": "weeks"}
JsonOption = Annotated[bool, typer.Option("--json", help="Print JSON instead of text.")]


def _installation() -> Settings:
    settings = installation_settings()
    load_tools()
    return settings


def _run_in_session(work: Callable[[AsyncSession, Settings], Awaitable[Result]]) -> Result:
    """Runs `work` in one committed transaction of the installation, printing a ToolError as a clean message."""
    settings = _installation()

    async def main() -> Result:
        platform = build_platform(settings, registry)
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


def _migrated(settings: Settings) -> None:
    async def main() -> None:
        platform = build_platform(settings, registry)
        try:
            await upgrade(platform.engine)
        finally:
            await platform.close()

    try:
        asyncio.run(main())
    except (OSError, SQLAlchemyError) as error:
        unreachable(settings.database_url, error)


def _bootstrapped(settings: Settings) -> accounts.Bootstrapped | None:
    async def main() -> accounts.Bootstrapped | None:
        platform = build_platform(settings, registry)
        try:
            async with platform.session_factory() as session, session.begin():
                return await accounts.bootstrap(session, settings=settings)
        finally:
            await platform.close()

    return asyncio.run(main())


@app.command()
def serve(
    host: Annotated[str | None, typer.Option(help="Address to listen on.")] = None,
    port: Annotated[int | None, typer.Option(help="Port to listen on.")] = None,
) -> None:
    """Migrates the database, bootstraps an account on first start, and serves the API."""
    import uvicorn

    # The app factory reads its settings from the environment: the flags go there, so the links it hands out
    # (public_url follows host and port unless set) name the address it really listens on.
    if host is not None:
        os.environ["TOOLHOST_HOST"] = host
    if port is not None:
        os.environ["TOOLHOST_PORT"] = str(port)
    settings = command_settings()
    load_tools()
    _migrated(settings)
    bootstrapped = _bootstrapped(settings)
    console.print(f"Database: {database_shown(settings.database_url)}")
    if not os.environ.get("TOOLHOST_SECRET_KEY"):
        console.print(
            f"Secret key: kept in {settings.secret_file.resolve()} (made on first start; it signs keys' tokens and "
            "media URLs and encrypts stored connector secrets; set TOOLHOST_SECRET_KEY outside development)"
        )
    if bootstrapped is not None:
        article = "an" if settings.bootstrap.tier[:1] in "aeiou" else "a"
        console.print(f"Bootstrapped {article} {settings.bootstrap.tier} account with a default project.")
        console.print(f"Account: {bootstrapped.account.id}")
        console.print(f"Project: {bootstrapped.project.id}")
        console.print(f"API key (shown once, keep it): [bold]{bootstrapped.issued.plaintext}[/bold]")
    else:
        console.print("Mint a key with: toolhost keys create --account <id> --name <name> --scopes mcp:full")
    console.print(f"Serving on http://{settings.host}:{settings.port} (docs at /docs)")
    uvicorn.run(
        "toolhost.app:create_app",
        factory=True,
        host=settings.host,
        port=settings.port,
        log_level=settings.log_level.lower(),
    )


@app.command()
def worker(
    processes: Annotated[
        int, typer.Option(min=1, help="Worker processes forked from this one; one that dies is replaced at once.")
    ] = 1,
) -> None:
    """Works due posts and jobs until interrupted (run N of these beside N API processes when scaled out)."""
    import signal

    settings = _installation()

    async def main() -> None:
        # The worker runs on the same platform as the server: one executor, authenticator and rate limiter.
        platform = build_platform(settings, registry)
        stopping = asyncio.Event()
        loop = asyncio.get_running_loop()
        for signal_number in (signal.SIGINT, signal.SIGTERM):
            loop.add_signal_handler(signal_number, stopping.set)
        try:
            await run_worker(platform, pollers=POLLERS, job_types=JOB_TYPES, stop_event=stopping)
        finally:
            await platform.close()

    if processes == 1:
        console.print("Worker started; Ctrl-C stops it once the jobs it is running have finished.")
        asyncio.run(main())
        return
    # Imported once here, so each forked process starts working at once.
    load_job_types(JOB_TYPES)
    load_pollers(POLLERS)
    console.print(f"{processes} worker processes started; Ctrl-C stops them once their jobs have finished.")
    supervise(lambda: asyncio.run(main()), processes=processes)


@app.command()
def migrate() -> None:
    """Upgrades the database schema to the latest migration (making the database if there is none yet)."""
    settings = command_settings()
    _migrated(settings)
    console.print(f"Database {database_shown(settings.database_url)} is at the latest migration.")


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


@tools_app.command("list")
def tools_list(as_json: Annotated[bool, typer.Option("--json", help="Print JSON.")] = False) -> None:
    """Prints the registry: name, module, scope, credits."""
    load_tools()
    specs = registry.all()
    if as_json:
        rows = [
            {
                "name": spec.name,
                "module": spec.module,
                "scope": spec.scope,
                "credits": spec.base_credits if spec.base_credits is not None else "variable",
            }
            for spec in specs
        ]
        print_json(rows)
        return
    table = Table("name", "module", "scope", "credits")
    for spec in specs:
        table.add_row(
            spec.name,
            spec.module,
            spec.scope,
            str(spec.base_credits if spec.base_credits is not None else "variable"),
        )
    print_table(table)


@app.command()
def call(
    tool_name: Annotated[str, typer.Argument(help="The tool to run.")],
    arguments: Annotated[str, typer.Option("--json", help="The arguments as a JSON object.")] = "{}",
    key: Annotated[str | None, typer.Option(help="API key; default: $TOOLHOST_API_KEY.")] = None,
) -> None:
    """Runs a tool in-process through execute() and prints its result; exits 1 on an error result."""
    credential = key or os.environ.get("TOOLHOST_API_KEY")
    if not credential:
        fail("no API key: pass --key thk_live_... or set TOOLHOST_API_KEY", code=2)
    try:
        parsed: Any = json.loads(arguments)
    except json.JSONDecodeError as error:
        fail(f"--json is not valid JSON: {error}", code=2)

    settings = _installation()

    async def main() -> dict[str, Any]:
        platform = build_platform(settings, registry)
        try:
            # One CLI process is one run for the per-run budgets.
            principal = await platform.authenticator.authenticate(credential, run_id=f"cli-{uuid.uuid4().hex}")
            execution = await platform.execute(tool_name, parsed, principal, transport="cli")
            return execution.result
        finally:
            await platform.close()

    try:
        result = asyncio.run(main())
    except ToolError as error:
        refused(error)
    print_json(result)
    if result["isError"]:
        raise typer.Exit(1)


def main() -> None:
    """Entry point of the `toolhost` command."""
    app()
