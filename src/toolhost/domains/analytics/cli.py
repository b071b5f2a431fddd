"""`toolhost metrics import FILE --project ID`: an operator loads metric snapshots from CSV or JSON."""

from __future__ import annotations

import asyncio
import uuid
from pathlib import Path
from typing import Annotated

import typer

from toolhost.config import Settings
from toolhost.db.session import standalone_session
from toolhost.domains.analytics import importing
from toolhost.platform.commands import console, errors, installation_settings, print_json
from toolhost.platform.models import Project

app = typer.Typer(help="Metric snapshots of published posts.", no_args_is_help=True)


@app.callback()
def metrics_commands() -> None:
    """Metric snapshots of published posts (a group, so `import` stays a sub-command when mounted)."""


async def _import(settings: Settings, project_id: uuid.UUID, path: Path) -> int:
    rows = importing.parse(path.read_bytes(), file_name=path.name)
    async with standalone_session(settings.database_url) as session, session.begin():
        if await session.get(Project, project_id) is None:
            raise typer.BadParameter(f"no project {project_id}", param_hint="--project")
        return await importing.import_snapshots(session=session, project_id=project_id, rows=rows)


@app.command("import")
def import_file(
    file: Annotated[Path, typer.Argument(exists=True, dir_okay=False, readable=True, help="A .csv or .json file.")],
    project: Annotated[str, typer.Option(help="Project id whose published posts the snapshots belong to.")],
    as_json: Annotated[bool, typer.Option("--json", help="Print JSON instead of text.")] = False,
) -> None:
    """Imports snapshots: columns post_id or external_post_id (+ platform), captured_at, views, likes,
    comments, shares, saves, watch_time_minutes. Any bad row rejects the whole file."""
    try:
        project_id = uuid.UUID(project)
    except ValueError:
        raise typer.BadParameter("not a UUID", param_hint="--project") from None
    settings = installation_settings()
    try:
        count = asyncio.run(_import(settings, project_id, file))
    except importing.ImportRejected as rejected:
        errors.print(f"Nothing imported: {len(rejected.problems)} problem(s).")
        for problem in rejected.problems[:50]:
            errors.print(f"- {problem}")
        raise typer.Exit(1) from None
    if as_json:
        print_json({"imported": count})
        return
    console.print(f"Imported {count} snapshot(s).")
