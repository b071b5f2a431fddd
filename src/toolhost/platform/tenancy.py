"""Project resolution (CATALOG.md §1.4): which project a call works on, inside the caller's projects only."""

from __future__ import annotations

import uuid
from typing import Any

from pydantic import BaseModel
from sqlalchemy import select
from sqlalchemy.ext.asyncio import AsyncSession

from toolhost.platform.context import Principal
from toolhost.platform.models import Project
from toolhost.platform.registry import Registry, ToolSpec
from toolhost.platform.results import NotFound, ValidationFailed


class ProjectResolver:
    """Resolves the project of a call by the tool's mode; another tenant's ids are `not_found`."""

    def __init__(self, registry: Registry) -> None:
        self._registry = registry

    async def accessible_projects(self, session: AsyncSession, principal: Principal) -> list[Project]:
        """The projects the principal may use: its bound project, or all of its account's."""
        query = select(Project).where(Project.account_id == principal.account_id).order_by(Project.created_at)
        if principal.project_id is not None:
            query = query.where(Project.id == principal.project_id)
        return list(await session.scalars(query))

    async def resolve(
        self,
        session: AsyncSession,
        spec: ToolSpec,
        args: BaseModel,
        principal: Principal,
        projects: list[Project],
    ) -> tuple[Project | None, str | None]:
        """The project (or None where the mode allows it) and, for `accounts`, the auto-resolution sentence."""
        mode: str = spec.project
        if mode == "none":
            return None, None
        explicit = _explicit_project(args)
        by_id = {project.id: project for project in projects}
        if mode.startswith("object"):
            assert spec.object_id is not None
            object_id = getattr(args, spec.object_id)
            if object_id is not None or mode == "object":
                return await self._by_object(session, spec.object_id, object_id, explicit, by_id), None
            mode = mode.removeprefix("object_or_")
        if explicit is not None:
            project = by_id.get(explicit)
            if project is None:
                raise NotFound(f"No project found with ID {explicit}")
            return project, None
        if principal.project_id is not None and principal.project_id in by_id:
            return by_id[principal.project_id], None
        if len(projects) == 1:
            return projects[0], None
        if mode == "optional":
            return None, None
        probe = self._registry.connected_accounts_probe
        if mode == "accounts" and probe is not None:
            usable = await probe(session, list(by_id), getattr(args, "platform", None))
            if len(usable) == 1:
                project = by_id[next(iter(usable))]
                return project, (
                    f"Project auto-resolved to '{project.name}' ({project.id}): "
                    "it is the only accessible project with a usable connected account."
                )
        raise ValidationFailed(
            "project_id is required: this key can use several projects",
            recover_with="pass project_id, one of the projects listed",
            field_errors=[{"path": "project_id", "message": "required when the key can use several projects"}],
            projects=await self._project_list(session, projects),
        )

    async def _by_object(
        self,
        session: AsyncSession,
        argument: str,
        object_id: str,
        explicit: uuid.UUID | None,
        by_id: dict[uuid.UUID, Project],
    ) -> Project:
        noun = argument.removesuffix("_id").replace("_", " ")
        project_id = await self._registry.object_lookup(argument)(session, object_id, list(by_id))
        project = by_id.get(project_id) if project_id is not None else None
        if project is None or (explicit is not None and explicit != project.id):
            raise NotFound(f"No {noun} found with ID {object_id}")
        return project

    async def _project_list(self, session: AsyncSession, projects: list[Project]) -> list[dict[str, Any]]:
        usable: set[Any] = set()
        probe = self._registry.connected_accounts_probe
        if probe is not None:
            usable = await probe(session, [project.id for project in projects], None)
        return [
            {"id": str(project.id), "name": project.name, "has_connected_accounts": project.id in usable}
            for project in projects
        ]


def _explicit_project(args: BaseModel) -> uuid.UUID | None:
    value = getattr(args, "project_id", None)
    if value is None:
        return None
    try:
        return uuid.UUID(str(value))
    except ValueError as error:
        raise NotFound(f"No project found with ID {value}") from error
