"""Alembic environment: runs the revisions on the engine of `toolhost.db.migrate`, in batch mode."""

from __future__ import annotations

from alembic import context
from sqlalchemy.engine import Connection

from toolhost.catalog import load_models
from toolhost.db.base import Base

load_models()
target_metadata = Base.metadata


def run_migrations_online() -> None:
    """Uses the connection handed in by toolhost.db.migrate."""
    connection: Connection = context.config.attributes["connection"]
    context.configure(
        connection=connection,
        target_metadata=target_metadata,
        render_as_batch=True,
        compare_type=True,
    )
    with context.begin_transaction():
        context.run_migrations()


run_migrations_online()
