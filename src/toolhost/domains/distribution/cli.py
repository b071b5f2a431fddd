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
from rich.table import Table

from toolhost.config import Settings, load_settings
from toolhost.db.session import standalone_session
from toolhost.domains.distribution import accounts as accounts_service
from toolhost.platform.commands import console, installation_settings, print_json, refused
from toolhost.platform.models import Project
from toolhost.platform.results import ToolError
from toolhost.providers.connectors.registry import Connectors

app = typer.Typer(help="Connected platform accounts.", no_args_is_help=True)
connectors_app = typer.Typer(help="The publishing connectors this server offers.", no_args_is_help=True)
JsonOption = Annotated[bool, typer.Option("--json", help="Print JSON instead of text.")]


async def _add(
    settings: Settings, project_id: uuid.UUID, platform: str, connector: str, fields: dict[str, str]
) -> tuple[str, dict[str, str]]:
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
        typer.Option(
            help="youtube, tiktok, instagram, twitter, linkedin, facebook, threads, bluesky, mastodon or pinterest."
        ),
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
    as_json: JsonOption = False,
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
    settings = installation_settings()
    try:
        account_id, shown = asyncio.run(_add(settings, project_id, platform, connector, fields))
    except ToolError as error:
        refused(error)
    if as_json:
        print_json({"account_id": account_id, **shown})
        return
    console.print(f"account_id: {account_id}")
    for name, value in shown.items():
        console.print(f"{name} (shown once, keep it): {value}")


@app.command("list")
def list_accounts(
    project: Annotated[str, typer.Option(help="Project id.")],
    include_all: Annotated[bool, typer.Option("--all", help="Also expired, revoked and errored accounts.")] = False,
    as_json: JsonOption = False,
) -> None:
    """Lists a project's connected accounts (never their tokens)."""
    try:
        project_id = uuid.UUID(project)
    except ValueError:
        raise typer.BadParameter("not a UUID", param_hint="--project") from None
    settings = installation_settings()

    async def main() -> list[tuple[str, str, str, str, str]]:
        async with standalone_session(settings.database_url) as session:
            found = await accounts_service.list_for_project(
                session=session, project_id=project_id, include_all=include_all
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

    rows = asyncio.run(main())
    if as_json:
        names = ("id", "platform", "connector", "username", "status")
        print_json([dict(zip(names, row, strict=True)) for row in rows])
        return
    for row in rows:
        console.print("  ".join(row))


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
