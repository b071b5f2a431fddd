"""The toolhost command line: serve, migrate, admin of accounts, projects, keys and credits, and tool calls."""

from __future__ import annotations

import asyncio
import json
import os
import re
import sys
import uuid
from collections.abc import Awaitable, Callable
from datetime import UTC, datetime, timedelta
from typing import Annotated, Any, TypeVar

import typer
from rich.console import Console
from rich.table import Table
from sqlalchemy.ext.asyncio import AsyncSession

from toolhost.catalog import JOB_TYPES, POLLERS, load_tools
from toolhost.config import Settings, load_settings
from toolhost.db.migrate import upgrade
from toolhost.domains.analytics.cli import app as metrics_app
from toolhost.domains.distribution import accounts as distribution_accounts
from toolhost.domains.distribution.cli import app as connections_app
from toolhost.domains.distribution.cli import connectors_app
from toolhost.keyring import RETIRED_KEY_LIFETIME
from toolhost.platform import accounts, credits, scopes, users
from toolhost.platform.auth import token_audience
from toolhost.platform.observability import logging_config
from toolhost.platform.registry import registry
from toolhost.platform.results import ToolError
from toolhost.platform.runtime import Platform, build_platform
from toolhost.platform.supervisor import supervise
from toolhost.platform.worker import load_job_types, load_pollers, run_worker
from toolhost.providers.connectors.vault import TokenVault

app = typer.Typer(help="toolhost: hosted tools for AI content work.", no_args_is_help=True)
accounts_app = typer.Typer(help="Accounts.", no_args_is_help=True)
projects_app = typer.Typer(help="Projects of an account.", no_args_is_help=True)
keys_app = typer.Typer(help="API keys.", no_args_is_help=True)
clients_app = typer.Typer(help="OAuth client-credentials clients.", no_args_is_help=True)
users_app = typer.Typer(help="People who sign in to the web pages and authorize MCP clients.", no_args_is_help=True)
credits_app = typer.Typer(help="Credits.", no_args_is_help=True)
tools_app = typer.Typer(help="The tool registry.", no_args_is_help=True)
secrets_app = typer.Typer(
    help="The secret keys: signing, media-URL and encryption keys, by key id.", no_args_is_help=True
)
app.add_typer(accounts_app, name="accounts")
app.add_typer(projects_app, name="projects")
app.add_typer(keys_app, name="keys")
app.add_typer(clients_app, name="clients")
app.add_typer(users_app, name="users")
app.add_typer(credits_app, name="credits")
app.add_typer(tools_app, name="tools")
app.add_typer(secrets_app, name="secrets")
app.add_typer(connections_app, name="connections")
app.add_typer(connectors_app, name="connectors")
app.add_typer(metrics_app, name="metrics")

console = Console()
errors = Console(stderr=True)
Result = TypeVar("Result")
DURATION = re.compile(r"^(\d+)([mhdw])$")
DURATION_UNITS = {"m": "minutes", "h": "hours", "d": "days", "w": "weeks"}


def _platform() -> Platform:
    load_tools()
    return build_platform(load_settings(), registry)


def _run_in_session(work: Callable[[AsyncSession, Settings], Awaitable[Result]]) -> Result:
    """Runs `work` in one committed transaction, printing a ToolError as a clean message."""

    async def main() -> Result:
        platform = _platform()
        try:
            async with platform.session_factory() as session, session.begin():
                return await work(session, platform.settings)
        finally:
            await platform.close()

    try:
        return asyncio.run(main())
    except ToolError as error:
        errors.print(f"[red]error:[/red] {error.message}")
        raise typer.Exit(1) from None


def _uuid(value: str, what: str) -> uuid.UUID:
    try:
        return uuid.UUID(value)
    except ValueError:
        errors.print(f"[red]error:[/red] {what} must be a UUID, got {value!r}")
        raise typer.Exit(2) from None


def _duration(text: str) -> timedelta:
    match = DURATION.match(text.strip())
    if match is None:
        errors.print(f"[red]error:[/red] durations look like 30d, 12h, 90m or 2w, got {text!r}")
        raise typer.Exit(2)
    return timedelta(**{DURATION_UNITS[match.group(2)]: int(match.group(1))})


def _scopes(text: str) -> list[str]:
    try:
        return scopes.parse(text)
    except scopes.UnknownScope as error:
        errors.print(f"[red]error:[/red] unknown scope {error}; one of {', '.join(scopes.ALL_SCOPES)}")
        raise typer.Exit(2) from None


async def _migrate_and_bootstrap(settings: Settings) -> accounts.IssuedKey | None:
    platform = build_platform(settings, registry)
    try:
        await upgrade(platform.engine)
        async with platform.session_factory() as session, session.begin():
            return await accounts.bootstrap(session, settings=settings)
    finally:
        await platform.close()


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
    settings = load_settings()
    load_tools()
    issued = asyncio.run(_migrate_and_bootstrap(settings))
    console.print(_where_the_keys_are(settings))
    if issued is not None:
        article = "an" if settings.bootstrap.tier[:1] in "aeiou" else "a"
        console.print(f"Bootstrapped {article} {settings.bootstrap.tier} account with a default project.")
        console.print(f"API key (shown once, keep it): [bold]{issued.plaintext}[/bold]")
    else:
        console.print("Mint a key with: toolhost keys create --account <id> --name <name> --scopes mcp:full")
    console.print(f"Serving on http://{settings.host}:{settings.port} (docs at /docs)")
    uvicorn.run(
        "toolhost.app:create_app",
        factory=True,
        host=settings.host,
        port=settings.port,
        log_level=settings.log_level.lower(),
        log_config=logging_config(settings.log_level),
    )


def _where_the_keys_are(settings: Settings) -> str:
    keyring = settings.keyring
    current = keyring.current().kid
    if keyring.path is None:
        return f"Secret keys: derived from TOOLHOST_SECRET_KEY (key id {current})"
    ignored = " TOOLHOST_SECRET_KEY is ignored while the key file exists." if settings.secret_key else ""
    return (
        f"Secret keys: {keyring.source} (owner-only; current key id {current}; they sign access tokens and media "
        f"URLs and encrypt stored connector secrets; `toolhost secrets rotate` makes new ones).{ignored}"
    )


@app.command()
def worker(
    processes: Annotated[
        int, typer.Option(min=1, help="Worker processes forked from this one; one that dies is replaced at once.")
    ] = 1,
) -> None:
    """Works due posts and jobs until interrupted (run N of these beside N API processes when scaled out)."""
    import logging.config
    import signal

    # The calls recipe and autopilot runs make are logged as the server logs its own.
    logging.config.dictConfig(logging_config(load_settings().log_level))

    async def main(worker_id: str | None = None, departed_worker_id: str | None = None) -> None:
        # The worker runs on the same platform as the server: one executor, authenticator and rate limiter.
        platform = _platform()
        stopping = asyncio.Event()
        loop = asyncio.get_running_loop()
        for signal_number in (signal.SIGINT, signal.SIGTERM):
            loop.add_signal_handler(signal_number, stopping.set)
        try:
            await run_worker(
                platform,
                pollers=POLLERS,
                job_types=JOB_TYPES,
                stop_event=stopping,
                worker_id=worker_id,
                departed_worker_id=departed_worker_id,
            )
        finally:
            await platform.close()

    if processes == 1:
        console.print("Worker started; Ctrl-C stops it once the jobs it is running have finished.")
        asyncio.run(main())
        return
    # Imported once here, so each forked process starts working at once.
    load_tools()
    load_job_types(JOB_TYPES)
    load_pollers(POLLERS)
    console.print(f"{processes} worker processes started; Ctrl-C stops them once their jobs have finished.")
    supervise(lambda worker_id, departed: asyncio.run(main(worker_id, departed)), processes=processes)


@app.command()
def migrate() -> None:
    """Upgrades the database schema to the latest migration."""

    async def main() -> None:
        platform = _platform()
        try:
            await upgrade(platform.engine)
        finally:
            await platform.close()

    asyncio.run(main())
    console.print("Database is at the latest migration.")


@secrets_app.command("rotate")
def secrets_rotate(
    revoke_previous: Annotated[
        bool,
        typer.Option(
            "--revoke-previous",
            help="After a leak: the previous keys are dropped at once, so every token and media URL they signed "
            "stops working (stored secrets are re-encrypted first).",
        ),
    ] = False,
) -> None:
    """Makes a new generation of keys current and re-encrypts stored connector secrets under it.

    Access tokens and media URLs signed by the previous generations keep verifying until they expire; generations
    retired longer ago than anything they signed can live are dropped.
    """
    settings = load_settings()
    path = settings.key_file
    if path is None:
        errors.print(
            "[red]error:[/red] set TOOLHOST_SECRET_FILE: rotated keys live in a key file that every toolhost process "
            "of this install reads"
        )
        raise typer.Exit(2)
    keyring = settings.keyring
    fresh = keyring.rotate(path=path)

    async def reseal() -> distribution_accounts.Resealed:
        platform = build_platform(settings, registry)
        try:
            return await distribution_accounts.reseal_secrets(
                session_factory=platform.session_factory, vault=TokenVault(keyring)
            )
        finally:
            await platform.close()

    load_tools()
    outcome = asyncio.run(reseal())
    now = datetime.now(UTC)
    keep_for = max(RETIRED_KEY_LIFETIME, timedelta(seconds=settings.media.url_ttl_seconds))
    dropped = keyring.prune(retired_before=now if revoke_previous else now - keep_for)
    console.print(f"Key id {fresh.kid} is current; the keys are in {keyring.source} (owner-only).")
    console.print(f"Re-encrypted {outcome.resealed} stored connector secrets under it.")
    if outcome.unreadable:
        listed = ", ".join(sorted(str(account_id) for account_id in outcome.unreadable))
        console.print(
            f"[yellow]No key this install holds opens the secrets of these accounts; reconnect them:[/yellow] {listed}"
        )
    retired = [generation.kid for generation in keyring.generations()[1:]]
    if retired:
        console.print(f"Still verifying what they signed until it expires: {', '.join(retired)}.")
    if dropped:
        console.print(f"Dropped (what they signed no longer verifies): {', '.join(g.kid for g in dropped)}.")
    console.print(
        "Running servers and workers use the new keys at once; copy the file to any other host that runs toolhost."
    )
    if settings.secret_key:
        console.print("The key file now holds TOOLHOST_SECRET_KEY's keys: remove that variable from the environment.")


@secrets_app.command("list")
def secrets_list(as_json: Annotated[bool, typer.Option("--json", help="Print JSON.")] = False) -> None:
    """Lists the key generations (ids and dates, never the keys): the current one first."""
    keyring = load_settings().keyring
    rows = [
        {
            "kid": generation.kid,
            "status": "retired" if index else "current",
            "created_at": generation.created_at.isoformat(),
            "retired_at": generation.retired_at.isoformat() if generation.retired_at else None,
        }
        for index, generation in enumerate(keyring.generations())
    ]
    if as_json:
        sys.stdout.write(json.dumps({"source": keyring.source, "keys": rows}, indent=2) + "\n")
        return
    table = Table("kid", "status", "created", "retired")
    for row in rows:
        table.add_row(row["kid"], row["status"], row["created_at"], row["retired_at"] or "-")
    console.print(f"Keys from {keyring.source}")
    console.print(table)


@accounts_app.command("create")
def accounts_create(
    tier: Annotated[str, typer.Option(help="trial, pro, team or agency.")] = "pro",
    name: Annotated[str, typer.Option(help="A name for the account.")] = "account",
) -> None:
    """Creates an account with its tier's credit allocation."""
    account = _run_in_session(
        lambda session, settings: accounts.create_account(session, name=name, tier=tier, settings=settings)
    )
    console.print(f"Account {account.id} ({account.tier}, {account.credit_balance} credits)")


@accounts_app.command("list")
def accounts_list() -> None:
    """Lists every account."""
    rows = _run_in_session(lambda session, settings: accounts.list_accounts(session))
    table = Table("id", "name", "tier", "balance")
    for account in rows:
        table.add_row(str(account.id), account.name, account.tier, str(account.credit_balance))
    console.print(table)


@projects_app.command("create")
def projects_create(
    account: Annotated[str, typer.Option(help="Account id.")],
    name: Annotated[str, typer.Option(help="Project name.")],
) -> None:
    """Creates a project in an account."""
    account_id = _uuid(account, "--account")
    project = _run_in_session(
        lambda session, settings: accounts.create_project(session, account_id=account_id, name=name)
    )
    console.print(f"Project {project.id} ({project.name})")


@projects_app.command("list")
def projects_list(account: Annotated[str, typer.Option(help="Account id.")]) -> None:
    """Lists an account's projects."""
    account_id = _uuid(account, "--account")
    rows = _run_in_session(lambda session, settings: accounts.list_projects(session, account_id=account_id))
    table = Table("id", "name")
    for project in rows:
        table.add_row(str(project.id), project.name)
    console.print(table)


@keys_app.command("create")
def keys_create(
    account: Annotated[str, typer.Option(help="Account id.")],
    name: Annotated[str, typer.Option(help="Name shown as an approval's decided_by.")],
    scopes_text: Annotated[
        str, typer.Option("--scopes", help="Comma-separated, e.g. mcp:read,mcp:write.")
    ] = "mcp:read",
    project: Annotated[str | None, typer.Option(help="Bind the key to one project.")] = None,
    expires_in: Annotated[str | None, typer.Option(help="Lifetime such as 30d, 12h.")] = None,
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
    console.print(f"Key {issued.key.id} ({', '.join(granted)})")
    console.print(f"API key (shown once, keep it): [bold]{issued.plaintext}[/bold]")


@keys_app.command("list")
def keys_list(account: Annotated[str | None, typer.Option(help="Only this account's keys.")] = None) -> None:
    """Lists keys (never their secrets)."""
    account_id = _uuid(account, "--account") if account else None
    rows = _run_in_session(lambda session, settings: accounts.list_keys(session, account_id=account_id))
    table = Table("id", "name", "prefix", "scopes", "project", "expires", "revoked", "last used")
    for key in rows:
        table.add_row(
            str(key.id),
            key.name,
            key.prefix + "…",
            ",".join(key.scopes),
            str(key.project_id or "-"),
            str(key.expires_at or "-"),
            str(key.revoked_at or "-"),
            str(key.last_used_at or "-"),
        )
    console.print(table)


@keys_app.command("revoke")
def keys_revoke(key_id: Annotated[str, typer.Argument(help="Key id (from keys list).")]) -> None:
    """Revokes a key at once."""
    parsed = _uuid(key_id, "key id")
    key = _run_in_session(lambda session, settings: accounts.revoke_key(session, key_id=parsed))
    console.print(f"Key {key.id} revoked.")


@clients_app.command("create")
def clients_create(
    account: Annotated[str, typer.Option(help="Account id.")],
    name: Annotated[str, typer.Option(help="Client name.")],
    scopes_text: Annotated[str, typer.Option("--scopes", help="Comma-separated scopes.")] = "mcp:read",
    project: Annotated[str | None, typer.Option(help="Bind the client to one project.")] = None,
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
    console.print(f"client_id: {issued.client.client_id}")
    console.print(f"client_secret (shown once): [bold]{issued.client_secret}[/bold]")


@clients_app.command("revoke")
def clients_revoke(client_id: Annotated[str, typer.Argument(help="The client_id.")]) -> None:
    """Revokes a client; its tokens stop working at once."""
    client = _run_in_session(lambda session, settings: accounts.revoke_client(session, client_id=client_id))
    console.print(f"Client {client.client_id} revoked.")


@users_app.command("create")
def users_create(
    account: Annotated[str, typer.Option(help="Account id.")],
    email: Annotated[str, typer.Option(help="The address the person signs in with.")],
    password: Annotated[
        str | None,
        typer.Option(help="Their password (12 characters or more); default: prompted for, unechoed, twice."),
    ] = None,
) -> None:
    """Creates a person of an account, who signs in at /signin with this address and password."""
    account_id = _uuid(account, "--account")
    chosen = password if password is not None else typer.prompt("Password", hide_input=True, confirmation_prompt=True)
    user = _run_in_session(
        lambda session, settings: users.create_user(session, account_id=account_id, email=email, password=chosen)
    )
    console.print(f"User {user.id} ({user.email}) signs in at /signin")


@credits_app.command("grant")
def credits_grant(
    account: Annotated[str, typer.Option(help="Account id.")],
    amount: Annotated[int, typer.Option(help="Credits to add.", min=1)],
) -> None:
    """Grants credits to an account."""
    account_id = _uuid(account, "--account")
    balance = _run_in_session(lambda session, settings: credits.grant(session, account_id=account_id, amount=amount))
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
        sys.stdout.write(json.dumps(rows, indent=2) + "\n")
        return
    table = Table("name", "module", "scope", "credits")
    for spec in specs:
        table.add_row(
            spec.name,
            spec.module,
            spec.scope,
            str(spec.base_credits if spec.base_credits is not None else "variable"),
        )
    console.print(table)


@app.command()
def call(
    tool_name: Annotated[str, typer.Argument(help="The tool to run.")],
    arguments: Annotated[str, typer.Option("--json", help="The arguments as a JSON object.")] = "{}",
    key: Annotated[str | None, typer.Option(help="API key; default: $TOOLHOST_API_KEY.")] = None,
) -> None:
    """Runs a tool in-process through execute() and prints its result; exits 1 on an error result."""
    credential = key or os.environ.get("TOOLHOST_API_KEY")
    try:
        parsed: Any = json.loads(arguments)
    except json.JSONDecodeError as error:
        errors.print(f"[red]error:[/red] --json is not valid JSON: {error}")
        raise typer.Exit(2) from None

    async def main() -> dict[str, Any]:
        platform = _platform()
        try:
            # One CLI process is one run for the per-run budgets.
            principal = await platform.authenticator.authenticate(
                credential, resource=token_audience(platform.settings), run_id=f"cli-{uuid.uuid4().hex}"
            )
            execution = await platform.execute(tool_name, parsed, principal, transport="cli")
            return execution.result
        finally:
            await platform.close()

    try:
        result = asyncio.run(main())
    except ToolError as error:
        errors.print(f"[red]error:[/red] {error.message}")
        raise typer.Exit(1) from None
    sys.stdout.write(json.dumps(result, indent=2, ensure_ascii=False) + "\n")
    if result["isError"]:
        raise typer.Exit(1)


def main() -> None:
    """Entry point of the `toolhost` command."""
    app()
