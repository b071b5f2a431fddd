"""The toolhost command line: serve, worker, migrate, tools list and call; it mounts the admin commands
(platform/admin.py) and the domains' own (connections, metrics)."""

from __future__ import annotations

import asyncio
import json
import os
import sys
import uuid
from datetime import UTC, datetime, timedelta
from typing import Annotated, Any

import typer
from rich.table import Table
from sqlalchemy.exc import SQLAlchemyError

from toolhost.catalog import JOB_TYPES, POLLERS, build_registry
from toolhost.config import Settings
from toolhost.db.migrate import upgrade
from toolhost.domains.analytics.cli import app as metrics_app
from toolhost.domains.distribution import accounts as distribution_accounts
from toolhost.domains.distribution.cli import app as connections_app
from toolhost.domains.distribution.cli import connectors_app
from toolhost.keyring import RETIRED_KEY_LIFETIME
from toolhost.platform import accounts
from toolhost.platform.admin import accounts_app, clients_app, credits_app, keys_app, projects_app, users_app
from toolhost.platform.auth import token_audience
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
from toolhost.platform.observability import logging_config
from toolhost.platform.registry import Registry
from toolhost.platform.results import ToolError
from toolhost.platform.runtime import build_platform, tune_garbage_collection
from toolhost.platform.supervisor import supervise
from toolhost.platform.worker import load_job_types, load_pollers, run_worker
from toolhost.providers.connectors.vault import TokenVault

app = typer.Typer(help="toolhost: hosted tools for AI content work.", no_args_is_help=True)
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


def _migrated(settings: Settings) -> None:
    async def main() -> None:
        # Migrating and bootstrapping run no tool, so their platform has none.
        platform = build_platform(settings, Registry())
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
        platform = build_platform(settings, Registry())
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
    # The app factory reads its settings from the environment: the flags go there, so the links it hands out
    # (public_url follows host and port unless set) name the address it really listens on.
    if host is not None:
        os.environ["TOOLHOST_HOST"] = host
    if port is not None:
        os.environ["TOOLHOST_PORT"] = str(port)
    settings = command_settings()
    _migrated(settings)
    bootstrapped = _bootstrapped(settings)
    console.print(f"Database: {database_shown(settings.database_url)}")
    console.print(_where_the_keys_are(settings))
    if bootstrapped is not None:
        article = "an" if settings.bootstrap.tier[:1] in "aeiou" else "a"
        console.print(f"Bootstrapped {article} {settings.bootstrap.tier} account with a default project.")
        console.print(f"Account: {bootstrapped.account.id}")
        console.print(f"Project: {bootstrapped.project.id}")
        console.print(f"API key (shown once, keep it): [bold]{bootstrapped.issued.plaintext}[/bold]")
    else:
        console.print("Mint a key with: toolhost keys create --account <id> --name <name> --scopes mcp:full")
    console.print(f"Serving on http://{settings.host}:{settings.port} (docs at /docs)")
    sys.stdout.flush()
    sys.stderr.flush()
    # A fixed argument list: this interpreter and toolhost's own server module, nothing from input.
    os.execv(sys.executable, [sys.executable, "-m", "toolhost.server"])  # noqa: S606


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

    settings = installation_settings()
    # The calls recipe and autopilot runs make are logged as the server logs its own.
    logging.config.dictConfig(logging_config(settings.log_level))

    registry = build_registry()

    async def main(worker_id: str | None = None, departed_worker_id: str | None = None) -> None:
        # The worker runs on the same platform as the server: one executor, authenticator and rate limiter.
        platform = build_platform(settings, registry)
        tune_garbage_collection()
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
    # The tools (their registry), job types and pollers are imported once here, so a forked process starts
    # working at once: building the registry alone takes a CPU second or more, which a child replacing a
    # killed one spent again before it claimed a job.
    load_job_types(JOB_TYPES)
    load_pollers(POLLERS)
    tune_garbage_collection()
    console.print(f"{processes} worker processes started; Ctrl-C stops them once their jobs have finished.")
    supervise(lambda worker_id, departed: asyncio.run(main(worker_id, departed)), processes=processes)


@app.command()
def migrate() -> None:
    """Upgrades the database schema to the latest migration (making the database if there is none yet)."""
    settings = command_settings()
    _migrated(settings)
    console.print(f"Database {database_shown(settings.database_url)} is at the latest migration.")


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
    settings = installation_settings()
    path = settings.key_file
    if path is None:
        fail(
            "set TOOLHOST_SECRET_FILE: rotated keys live in a key file that every toolhost process of this install "
            "reads",
            code=2,
        )
    keyring = settings.keyring
    fresh = keyring.rotate(path=path)

    async def reseal() -> distribution_accounts.Resealed:
        platform = build_platform(settings, build_registry())
        try:
            return await distribution_accounts.reseal_secrets(
                session_factory=platform.session_factory, vault=TokenVault(keyring)
            )
        finally:
            await platform.close()

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
    keyring = command_settings().keyring
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


@tools_app.command("list")
def tools_list(as_json: Annotated[bool, typer.Option("--json", help="Print JSON.")] = False) -> None:
    """Prints the registry: name, module, scope, credits."""
    specs = build_registry().all()
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

    settings = installation_settings()

    async def main() -> dict[str, Any]:
        platform = build_platform(settings, build_registry())
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
        refused(error)
    print_json(result)
    if result["isError"]:
        raise typer.Exit(1)


def main() -> None:
    """Entry point of the `toolhost` command."""
    app()
