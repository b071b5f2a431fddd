"""What every operator command shares: the installation it works on, output, and failures as plain sentences.

A command other than `serve` and `migrate` works on an existing installation: it finds the database the way
the settings do (TOOLHOST_DATABASE_URL, else the toolhost.db of the current directory or of the nearest one
above it) and refuses, saying what to set, when there is none or it is not migrated, before anything is
created in the current directory. No problem of the installation surfaces as a traceback.
"""

from __future__ import annotations

import asyncio
import json
import sys
from pathlib import Path
from typing import Any, NoReturn

import typer
from pydantic import ValidationError
from rich.console import Console
from rich.measure import Measurement
from rich.table import Table
from rich.text import Text
from sqlalchemy.engine import make_url
from sqlalchemy.exc import DBAPIError, SQLAlchemyError

from toolhost import config
from toolhost.config import Settings, load_settings
from toolhost.db import migrate
from toolhost.platform.results import ToolError

# Soft wrapping: an id or a key longer than the terminal is wrapped by the terminal, never cut or folded.
console = Console(soft_wrap=True)
errors = Console(stderr=True, soft_wrap=True)


def fail(message: str, *, code: int = 1) -> NoReturn:
    """Ends the command with one plain sentence on stderr."""
    errors.print(Text.assemble(("error:", "red"), " ", message))
    raise typer.Exit(code)


def refused(error: ToolError) -> NoReturn:
    """Ends a command refused by a tool error: its message, then what to do about it."""
    fail(f"{error.message} ({error.recover_with})" if error.recover_with else error.message)


def settings_problem(error: ValidationError) -> str:
    """A settings error as the variables to fix: `TOOLHOST_DATABASE_URL: ...` (never the value itself)."""
    problems = []
    for item in error.errors(include_url=False, include_input=False):
        message = item["msg"].removeprefix("Value error, ")
        location = "__".join(str(part).upper() for part in item["loc"])
        problems.append(f"TOOLHOST_{location}: {message}" if location else message)
    return "; ".join(problems)


def command_settings(**overrides: Any) -> Settings:
    """The settings of `serve` and `migrate`, which make the database when it does not exist yet."""
    try:
        return load_settings(**overrides)
    except ValidationError as error:
        fail(settings_problem(error))


def database_shown(url: str) -> str:
    """Where a database is, for people: an SQLite file's full path, another database's URL without password."""
    path = config.sqlite_database_file(url)
    if path is not None:
        return str(path.resolve())
    return make_url(url).render_as_string(hide_password=True)


def unreachable(url: str, error: Exception) -> NoReturn:
    """Ends a command whose database cannot be opened, with the driver's reason."""
    reason = error.orig if isinstance(error, DBAPIError) else error
    fail(
        f"cannot open the database at {database_shown(url)} ({type(reason).__name__}: {reason}); check "
        "TOOLHOST_DATABASE_URL and that the database server is running"
    )


def installation_settings() -> Settings:
    """The settings of an existing installation: its database must exist and be migrated.

    The database is looked for before the settings are built, since building them makes a development
    secret beside the database.
    """
    try:
        configured = config.DatabaseSetting().database_url
    except ValidationError as error:
        fail(settings_problem(error))
    if configured:
        url = configured
        path = config.sqlite_database_file(url)
        if path is not None and not path.is_file():
            fail(
                f"there is no database at {path.resolve()} (TOOLHOST_DATABASE_URL): point TOOLHOST_DATABASE_URL "
                "at the toolhost.db that `toolhost serve` made, or run `toolhost migrate` to make a new one there"
            )
    else:
        found = config.find_database(Path.cwd())
        if found is None:
            fail(
                f"no toolhost database here: there is no {config.DATABASE_FILE} in {Path.cwd()} or in a directory "
                "above it. Run the command in the directory where `toolhost serve` made it, or set "
                "TOOLHOST_DATABASE_URL, e.g. TOOLHOST_DATABASE_URL=sqlite:////path/to/toolhost.db "
                "(or postgresql://user:password@host:5432/database)"
            )
        url = config.sqlite_url(found)
    _check_schema(url)
    return command_settings(database_url=url)


def _check_schema(url: str) -> None:
    try:
        current = asyncio.run(migrate.current_revision(url))
    except (OSError, SQLAlchemyError) as error:
        unreachable(url, error)
    expected = migrate.head_revision()
    if current is None:
        fail(
            f"the database at {database_shown(url)} has no toolhost tables: run `toolhost migrate` to set it up, "
            "or point TOOLHOST_DATABASE_URL at the database `toolhost serve` made"
        )
    if current != expected:
        fail(
            f"the database at {database_shown(url)} is at migration {current}, this toolhost needs {expected}: "
            "run `toolhost migrate`"
        )


def print_table(table: Table) -> None:
    """A table at its full width, however narrow the terminal: an id shown cut short cannot be used."""
    width = Measurement.get(console, console.options.update_width(10_000), table).maximum
    Console(width=max(width, 1)).print(table)


def print_json(value: Any) -> None:
    """Machine-readable output (`--json`): plain JSON on stdout, nothing else."""
    sys.stdout.write(json.dumps(value, indent=2, ensure_ascii=False, default=str) + "\n")
