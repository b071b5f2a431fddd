"""Alembic migrations; the same revisions run on SQLite and PostgreSQL."""
