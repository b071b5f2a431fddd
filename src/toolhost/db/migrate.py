"""Runs Alembic from code: upgrade to head, and compare the models with the migrated schema."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from alembic import command
from alembic.autogenerate import compare_metadata
from alembic.config import Config
from alembic.migration import MigrationContext
from alembic.script import ScriptDirectory
from sqlalchemy.engine import Connection
from sqlalchemy.ext.asyncio import AsyncEngine

from toolhost.catalog import load_models
from toolhost.db.base import Base
from toolhost.db.session import create_engine

MIGRATIONS = Path(__file__).resolve().parent / "migrations"


def alembic_config(connection: Connection | None = None) -> Config:
    """The Alembic configuration of the shipped migrations."""
    config = Config()
    config.set_main_option("script_location", str(MIGRATIONS))
    config.set_main_option("file_template", "%%(year)d_%%(month).2d_%%(day).2d_%%(rev)s_%%(slug)s")
    if connection is not None:
        config.attributes["connection"] = connection
    return config


async def upgrade(engine: AsyncEngine, revision: str = "head") -> None:
    """Migrates the database to `revision`."""
    async with engine.begin() as connection:
        await connection.run_sync(lambda sync: command.upgrade(alembic_config(sync), revision))


async def schema_differences(engine: AsyncEngine) -> list[Any]:
    """What autogenerate would still add or change: empty when the migrations match the models."""
    load_models()

    def compare(sync: Connection) -> list[Any]:
        context = MigrationContext.configure(sync, opts={"compare_type": True, "render_as_batch": True})
        return list(compare_metadata(context, Base.metadata))

    async with engine.connect() as connection:
        return await connection.run_sync(compare)


def head_revision() -> str | None:
    """The latest migration shipped."""
    return ScriptDirectory.from_config(alembic_config()).get_current_head()


async def current_revision(url: str) -> str | None:
    """The migration a database is at (None when it has no toolhost tables); connects, changes nothing."""
    engine = create_engine(url)
    try:
        async with engine.connect() as connection:
            return await connection.run_sync(lambda sync: MigrationContext.configure(sync).get_current_revision())
    finally:
        await engine.dispose()
