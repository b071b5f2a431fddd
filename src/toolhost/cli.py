"""The toolhost command line: serve, worker, migrate, tools list and call; it mounts the admin commands
(platform/admin.py) and the domains' own (connections, metrics)."""

from __future__ import annotations

import asyncio
import json
import os
import uuid
from typing import Annotated, Any

import typer
from rich.table import Table
from sqlalchemy.exc import SQLAlchemyError

from toolhost.catalog import JOB_TYPES, POLLERS, load_tools
from toolhost.config import Settings
from toolhost.db.migrate import upgrade
from toolhost.domains.analytics.cli import app as metrics_app
from toolhost.domains.distribution.cli import app as connections_app
from toolhost.platform import accounts
from toolhost.platform.admin import accounts_app, clients_app, credits_app, keys_app, projects_app
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
from toolhost.platform.registry import registry
from toolhost.platform.results import ToolError
from toolhost.platform.runtime import build_platform
from toolhost.platform.supervisor import supervise
from toolhost.platform.worker import load_job_types, load_pollers, run_worker

app = typer.Typer(help="toolhost: hosted tools for AI content work.", no_args_is_help=True)
tools_app = typer.Typer(help="The tool registry.", no_args_is_help=True)
app.add_typer(accounts_app, name="accounts")
app.add_typer(projects_app, name="projects")
app.add_typer(keys_app, name="keys")
app.add_typer(clients_app, name="clients")
app.add_typer(credits_app, name="credits")
app.add_typer(tools_app, name="tools")
app.add_typer(connections_app, name="connections")
app.add_typer(metrics_app, name="metrics")


def _installation() -> Settings:
    settings = installation_settings()
    load_tools()
    return settings


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
