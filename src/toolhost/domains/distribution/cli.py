"""`toolhost connections ...`: connect and list platform accounts without a browser (operators, scripts);
`toolhost connectors list`: what each connector publishes to and supports, and the settings it needs."""

from __future__ import annotations

import asyncio
import dataclasses
import json
import sys
import uuid
from typing import Annotated

import typer
from rich.console import Console
from rich.table import Table

from toolhost.config import load_settings
from toolhost.db.session import standalone_session
from toolhost.domains.distribution import accounts as accounts_service
from toolhost.platform.models import Project
from toolhost.platform.results import ToolError
from toolhost.providers.connectors.registry import Connectors

app = typer.Typer(help="Connected platform accounts.", no_args_is_help=True)
connectors_app = typer.Typer(help="The publishing connectors this server offers.", no_args_is_help=True)
console = Console()
errors = Console(stderr=True)


async def _add(
    project_id: uuid.UUID, platform: str, connector: str, fields: dict[str, str]
) -> tuple[str, dict[str, str]]:
    settings = load_settings()
    async with standalone_session(settings.database_url) as session, session.begin():
        if await session.get(Project, project_id) is None:
            raise typer.BadParameter(f"no project {project_id}", param_hint="--project")
        account, shown = await accounts_service.create(
            session=session,
            settings=settings,
            project_id=project_id,
            platform=platform,
            connector_name=connector,
            fields=fields,
        )
        return str(account.id), shown


@app.command("add")
def add(
    project: Annotated[str, typer.Option(help="Project id the account publishes for.")],
    platform: Annotated[
        str,
        typer.Option(help="youtube, tiktok, instagram, twitter, linkedin, facebook, threads, bluesky or mastodon."),
    ],
    connector: Annotated[
        str, typer.Option(help="webhook, mastodon, bluesky or youtube (x connects on the connect page).")
    ] = "webhook",
    url: Annotated[str | None, typer.Option(help="webhook: the receiver's https URL.")] = None,
    instance_url: Annotated[str | None, typer.Option(help="mastodon: the instance URL.")] = None,
    access_token: Annotated[str | None, typer.Option(help="mastodon: an access token.")] = None,
    handle: Annotated[str | None, typer.Option(help="bluesky: the handle.")] = None,
    app_password: Annotated[str | None, typer.Option(help="bluesky: an app password.")] = None,
    service: Annotated[str | None, typer.Option(help="bluesky: the PDS URL (default bsky.social).")] = None,
    refresh_token: Annotated[str | None, typer.Option(help="youtube: an OAuth refresh token.")] = None,
) -> None:
    """Connects an account and prints its id (and, for webhook, its signing secret, once)."""
    try:
        project_id = uuid.UUID(project)
    except ValueError:
        raise typer.BadParameter("not a UUID", param_hint="--project") from None
    given = {
        "url": url,
        "instance_url": instance_url,
        "access_token": access_token,
        "handle": handle,
        "app_password": app_password,
        "service": service,
        "refresh_token": refresh_token,
    }
    fields = {name: value for name, value in given.items() if value is not None}
    try:
        account_id, shown = asyncio.run(_add(project_id, platform, connector, fields))
    except ToolError as error:
        errors.print(f"[red]error:[/red] {error.message}")
        raise typer.Exit(1) from None
    console.print(f"account_id: {account_id}")
    for name, value in shown.items():
        console.print(f"{name} (shown once, keep it): {value}", soft_wrap=True)


@app.command("list")
def list_accounts(
    project: Annotated[str, typer.Option(help="Project id.")],
    include_all: Annotated[bool, typer.Option("--all", help="Also expired, revoked and errored accounts.")] = False,
) -> None:
    """Lists a project's connected accounts (never their tokens)."""

    async def main() -> list[tuple[str, str, str, str, str]]:
        async with standalone_session(load_settings().database_url) as session:
            found = await accounts_service.list_for_project(
                session=session, project_id=uuid.UUID(project), include_all=include_all
            )
            return [
                (
                    str(account.id),
                    account.platform,
                    account.connector,
                    account.username or "-",
                    accounts_service.effective_status(account),
                )
                for account in found
            ]

    for row in asyncio.run(main()):
        console.print("  ".join(row), soft_wrap=True)


@connectors_app.command("list")
def list_connectors(as_json: Annotated[bool, typer.Option("--json", help="Print JSON.")] = False) -> None:
    """Each connector: its platforms, what it supports, the settings it needs and whether it is ready."""
    described = Connectors(load_settings()).describe()
    if as_json:
        rows = [{**dataclasses.asdict(info), "ready": info.ready} for info in described]
        sys.stdout.write(json.dumps(rows, indent=2) + "\n")
        return
    table = Table("connector", "platforms", "publish", "media", "comments", "analytics", "settings", "status")
    for info in described:
        if not info.enabled:
            status = "disabled"
        elif info.missing_settings:
            status = "needs settings"
        else:
            status = "ready"
        table.add_row(
            info.name,
            "any" if info.name == "webhook" else ", ".join(info.platforms),
            "yes" if info.publish else "no",
            ", ".join(info.media_kinds) or "-",
            ", ".join(info.comments) or "-",
            info.analytics,
            "\n".join(f"{name}{' (missing)' if name in info.missing_settings else ''}" for name in info.settings)
            or "-",
            status,
        )
    console.print(table)
