"""Settings a newcomer writes by hand: database URLs as they are usually written, files kept beside the database."""

from __future__ import annotations

from pathlib import Path

import pytest
from pydantic import ValidationError

from tests.conftest import settings_for_test
from toolhost.catalog import build_registry
from toolhost.config import load_settings
from toolhost.platform import accounts
from toolhost.platform.auth import token_audience
from toolhost.platform.runtime import build_platform


@pytest.mark.parametrize(
    ("written", "used"),
    [
        ("sqlite:///x.db", "sqlite+aiosqlite:///x.db"),
        ("sqlite:////var/lib/toolhost/toolhost.db", "sqlite+aiosqlite:////var/lib/toolhost/toolhost.db"),
        ("sqlite+aiosqlite:///x.db", "sqlite+aiosqlite:///x.db"),
        ("postgresql://tools:pw@db:5432/toolhost", "postgresql+asyncpg://tools:pw@db:5432/toolhost"),
        ("postgres://tools@db/toolhost?sslmode=require", "postgresql+asyncpg://tools@db/toolhost?sslmode=require"),
        ("postgresql+asyncpg://tools@db/toolhost", "postgresql+asyncpg://tools@db/toolhost"),
    ],
)
def test_a_database_url_as_usually_written_runs_on_the_async_driver(written: str, used: str) -> None:
    assert settings_for_test(database_url=written).database_url == used


@pytest.mark.parametrize(
    "written", ["mysql://admin:hunter2@db/toolhost", "postgresql+psycopg2://admin:hunter2@db/toolhost", "toolhost.db"]
)
def test_a_database_toolhost_cannot_run_on_is_refused_at_start_without_echoing_the_url(written: str) -> None:
    with pytest.raises(ValidationError) as refused:
        settings_for_test(database_url=written)
    assert "sqlite:///" in str(refused.value) and "postgresql://" in str(refused.value)
    assert "hunter2" not in str(refused.value)


def test_the_key_file_is_kept_beside_the_sqlite_database_whatever_the_current_directory(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    elsewhere = tmp_path / "elsewhere"
    data = tmp_path / "data"
    elsewhere.mkdir()
    data.mkdir()
    monkeypatch.chdir(elsewhere)
    settings = load_settings(database_url=f"sqlite:///{data}/toolhost.db")
    assert settings.key_file == data / "toolhost.secret" and settings.keyring.path == data / "toolhost.secret"
    assert (data / "toolhost.secret").exists()
    assert list(elsewhere.iterdir()) == []
    chosen = tmp_path / "chosen.secret"
    assert load_settings(database_url=f"sqlite:///{data}/toolhost.db", secret_file=chosen).key_file == chosen


@pytest.mark.postgres
async def test_a_plain_postgresql_url_with_an_sslmode_runs_tools(postgres_url: str) -> None:
    plain = postgres_url.replace("postgresql+asyncpg://", "postgresql://", 1) + "?sslmode=disable"
    settings = settings_for_test(database_url=plain)
    platform = build_platform(settings, build_registry())
    try:
        async with platform.session_factory() as session, session.begin():
            account = await accounts.create_account(session, name="plain", tier="agency", settings=settings)
            await accounts.create_project(session, account_id=account.id, name="p")
            issued = await accounts.create_key(
                session, account_id=account.id, name="k", granted_scopes=["mcp:read"], settings=settings
            )
        principal = await platform.authenticator.authenticate(issued.plaintext, resource=token_audience(settings))
        execution = await platform.execute(
            "get_credit_balance", {"response_format": "json"}, principal, transport="cli"
        )
    finally:
        await platform.close()
    assert execution.error is None
    assert execution.result["structuredContent"]["balance"] == account.credit_balance
