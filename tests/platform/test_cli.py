"""The toolhost command: admin, registry listing and in-process calls, as an operator runs them."""

from __future__ import annotations

import json
import os
import re
from pathlib import Path

import pytest
from typer.testing import CliRunner, Result

from toolhost import cli
from toolhost.domains.distribution import cli as connections_cli


def toolhost(database: Path, *arguments: str, key: str | None = None) -> Result:
    """Runs the command in this process on `database`, with no other TOOLHOST_ setting from the environment."""
    environment: dict[str, str | None] = {name: None for name in os.environ if name.startswith("TOOLHOST_")}
    environment["TOOLHOST_DATABASE_URL"] = f"sqlite+aiosqlite:///{database}"
    environment["TOOLHOST_SECRET_FILE"] = str(database.parent / "toolhost.secret")
    if key:
        environment["TOOLHOST_API_KEY"] = key
    return CliRunner().invoke(cli.app, list(arguments), env=environment, catch_exceptions=False)


@pytest.fixture(autouse=True)
def wide_console(monkeypatch: pytest.MonkeyPatch) -> None:
    """Tables print 200 columns wide, so no id is cut (the console fixes its width when the module is imported)."""
    monkeypatch.setattr(cli.console, "width", 200)


def test_an_operator_sets_up_an_account_and_calls_a_tool_in_process(tmp_path: Path) -> None:
    database = tmp_path / "cli.db"
    assert toolhost(database, "migrate").exit_code == 0
    created = toolhost(database, "accounts", "create", "--tier", "pro", "--name", "acme")
    assert created.exit_code == 0, created.stderr
    account_id = re.search(r"Account ([0-9a-f-]{36})", created.stdout).group(1)  # type: ignore[union-attr]
    project = toolhost(database, "projects", "create", "--account", account_id, "--name", "Launch")
    assert project.exit_code == 0, project.stderr

    too_wide = toolhost(database, "keys", "create", "--account", account_id, "--name", "x", "--scopes", "mcp:full")
    assert too_wide.exit_code == 1 and "tier pro keys may hold only" in too_wide.stderr

    issued = toolhost(
        database,
        "keys",
        "create",
        "--account",
        account_id,
        "--name",
        "ops",
        "--scopes",
        "mcp:read,mcp:write",
        "--expires-in",
        "30d",
    )
    assert issued.exit_code == 0, issued.stderr
    key = re.search(r"(thk_live_[A-Za-z0-9_-]{32,})", issued.stdout).group(1)  # type: ignore[union-attr]
    assert key not in toolhost(database, "keys", "list").stdout

    granted = toolhost(database, "credits", "grant", "--account", account_id, "--amount", "25")
    assert "balance 1525" in granted.stdout

    called = toolhost(database, "call", "get_credit_balance", "--json", '{"response_format": "json"}', key=key)
    assert called.exit_code == 0, called.stderr
    result = json.loads(called.stdout)
    assert result["structuredContent"]["balance"] == 1525 and result["isError"] is False

    failed = toolhost(database, "call", "list_plan_approvals", "--json", '{"plan_id": "bad"}', key=key)
    assert failed.exit_code == 1
    assert json.loads(failed.stdout)["structuredContent"]["error"]["error_type"] == "validation_error"

    key_id = re.search(r"Key ([0-9a-f-]{36})", issued.stdout).group(1)  # type: ignore[union-attr]
    assert key_id in toolhost(database, "keys", "list", "--account", account_id).stdout
    assert toolhost(database, "keys", "revoke", key_id).exit_code == 0
    after = toolhost(database, "call", "get_credit_balance", key=key)
    assert after.exit_code == 1 and "revoked" in after.stderr


def test_the_registry_listing_is_machine_readable(tmp_path: Path) -> None:
    listed = toolhost(tmp_path / "unused.db", "tools", "list", "--json")
    assert listed.exit_code == 0, listed.stderr
    tools = {tool["name"]: tool for tool in json.loads(listed.stdout)}
    assert tools["respond_plan_approval"] == {
        "name": "respond_plan_approval",
        "module": "approvals",
        "scope": "mcp:write",
        "credits": 0,
    }


def test_connectors_list_shows_what_each_connector_supports_and_the_settings_it_still_needs(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    listed = toolhost(tmp_path / "unused.db", "connectors", "list", "--json")
    assert listed.exit_code == 0, listed.stderr
    connectors = {connector["name"]: connector for connector in json.loads(listed.stdout)}
    x = connectors["x"]
    assert (x["platforms"], x["publish"], x["media_kinds"], x["analytics"]) == (
        ["twitter"],
        True,
        ["image", "gif", "video"],
        "pull",
    )
    assert x["comments"] == ["list", "reply", "post", "delete"]
    assert x["missing_settings"] == [
        "TOOLHOST_DISTRIBUTION__CONNECTORS__X_CLIENT_ID",
        "TOOLHOST_DISTRIBUTION__CONNECTORS__X_CLIENT_SECRET",
    ]
    assert x["ready"] is False
    assert connectors["webhook"]["ready"] is True and connectors["webhook"]["analytics"] == "push"
    meta = [
        "TOOLHOST_DISTRIBUTION__CONNECTORS__META_CLIENT_ID",
        "TOOLHOST_DISTRIBUTION__CONNECTORS__META_CLIENT_SECRET",
    ]
    for name, media_kinds in (("instagram", ["image", "video"]), ("facebook", ["image", "gif", "video"])):
        listed_meta = connectors[name]
        assert (listed_meta["platforms"], listed_meta["media_kinds"], listed_meta["analytics"]) == (
            [name],
            media_kinds,
            "pull",
        )
        assert listed_meta["comments"] == ["list", "reply", "post", "moderate", "delete"]
        assert listed_meta["missing_settings"] == meta
    assert connectors["threads"]["comments"] == ["list", "reply", "post", "moderate"]
    assert connectors["threads"]["missing_settings"] == [
        "TOOLHOST_DISTRIBUTION__CONNECTORS__THREADS_CLIENT_ID",
        "TOOLHOST_DISTRIBUTION__CONNECTORS__THREADS_CLIENT_SECRET",
    ]

    monkeypatch.setattr(connections_cli.console, "width", 200)
    configured = CliRunner().invoke(
        cli.app,
        ["connectors", "list"],
        env={
            "TOOLHOST_SECRET_FILE": str(tmp_path / "toolhost.secret"),
            "TOOLHOST_DISTRIBUTION__CONNECTORS__X_CLIENT_ID": "client",
            "TOOLHOST_DISTRIBUTION__CONNECTORS__X_CLIENT_SECRET": "secret",
        },
        catch_exceptions=False,
    )
    assert configured.exit_code == 0, configured.stderr
    [row] = [line for line in configured.stdout.splitlines() if line.startswith("│ x ")]
    assert "ready" in row and "(missing)" not in row
    [threads_row] = [line for line in configured.stdout.splitlines() if line.startswith("│ threads ")]
    assert "THREADS_CLIENT_ID" in threads_row
