"""Statements compiled once by SQLAlchemy and run by the database driver itself, on the hottest paths.

SQLAlchemy's per-execution work (parameter processing row by row, result handling) costs more there than the
statement; compiled once, a statement's parameters only need the columns' own conversions, applied here.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from sqlalchemy.engine import Compiled, Dialect
from sqlalchemy.sql.compiler import SQLCompiler

Conversion = Callable[[Any], Any] | None


def bind_conversions(compiled: Compiled, dialect: Dialect) -> tuple[tuple[str, ...], tuple[Conversion, ...]]:
    """A positionally compiled statement's parameter names in order, and the conversion each value needs
    before the driver takes it (None where it takes the value as it is)."""
    assert isinstance(compiled, SQLCompiler), "a statement compiled for a dialect"
    names = tuple(compiled.positiontup or ())
    return names, tuple(compiled.binds[name].type.dialect_impl(dialect).bind_processor(dialect) for name in names)
