"""The toolhost command: admin, registry listing and in-process calls, as an operator runs them."""

from __future__ import annotations

import json
import os
import re
import sqlite3
from pathlib import Path
from typing import Any

import pytest
from argon2 import PasswordHasher
from typer.testing import CliRunner, Result

from toolhost import cli
from toolhost.platform import commands

UUID = r"[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}"


def toolhost(database: Path | None, *arguments: str, key: str | None = None, **settings: str) -> Result:
    """Runs the command in this process, in the current directory, with no TOOLHOST_ setting but those given.

    `database` is given as a plain sqlite:/// URL, as an operator writes it; None leaves the command to find one.
    """
    environment: dict[str, str | None] = {name: None for name in os.environ if name.startswith("TOOLHOST_")}
    if database is not None:
        environment["TOOLHOST_DATABASE_URL"] = f"sqlite:///{database}"
    if key:
        environment["TOOLHOST_API_KEY"] = key
    environment.update(settings)
    return CliRunner().invoke(cli.app, list(arguments), env=environment, catch_exceptions=False)


def parsed(result: Result) -> Any:
    assert result.exit_code == 0, result.stderr
    return json.loads(result.stdout)


def test_an_operator_sets_up_an_account_and_calls_a_tool_in_process(tmp_path: Path) -> None:
    database = tmp_path / "cli.db"
    assert toolhost(database, "migrate").exit_code == 0
    created = toolhost(database, "accounts", "create", "--tier", "pro", "--name", "acme")
    assert created.exit_code == 0, created.stderr
    account_id = re.search(rf"Account ({UUID})", created.stdout).group(1)  # type: ignore[union-attr]
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

    key_id = re.search(rf"Key ({UUID})", issued.stdout).group(1)  # type: ignore[union-attr]
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
    pinterest = connectors["pinterest"]
    assert (pinterest["platforms"], pinterest["media_kinds"], pinterest["analytics"], pinterest["comments"]) == (
        ["pinterest"],
        ["image", "video"],
        "pull",
        [],
    )
    assert pinterest["missing_settings"] == [
        "TOOLHOST_DISTRIBUTION__CONNECTORS__PINTEREST_CLIENT_ID",
        "TOOLHOST_DISTRIBUTION__CONNECTORS__PINTEREST_CLIENT_SECRET",
    ]

    monkeypatch.setattr(commands.console, "width", 200)
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
    assert not (tmp_path / "unused.db").exists()


def test_an_operator_creates_a_person_whose_password_is_prompted_for_and_stored_as_argon2(tmp_path: Path) -> None:
    database = tmp_path / "cli.db"
    assert toolhost(database, "migrate").exit_code == 0
    created = toolhost(database, "accounts", "create", "--tier", "team", "--name", "acme")
    account_id = re.search(r"Account ([0-9a-f-]{36})", created.stdout).group(1)  # type: ignore[union-attr]
    environment = {"TOOLHOST_DATABASE_URL": f"sqlite+aiosqlite:///{database}"}
    environment["TOOLHOST_SECRET_FILE"] = str(tmp_path / "toolhost.secret")
    arguments = ["users", "create", "--account", account_id, "--email", "Ada@Example.com"]
    prompted = CliRunner().invoke(cli.app, arguments, env=environment, input="a long passphrase\na long passphrase\n")
    assert prompted.exit_code == 0, prompted.stderr
    assert "ada@example.com" in prompted.stdout and "a long passphrase" not in prompted.stdout
    taken = toolhost(database, *arguments, "--password", "another long passphrase")
    assert taken.exit_code == 1 and "already has a user" in taken.stderr
    short = toolhost(
        database, "users", "create", "--account", account_id, "--email", "b@example.com", "--password", "short"
    )
    assert short.exit_code == 1 and "12 to 1024 characters" in short.stderr
    with sqlite3.connect(database) as connection:
        rows = connection.execute("SELECT email, password_hash FROM users").fetchall()
    assert [email for email, _ in rows] == ["ada@example.com"]
    assert rows[0][1].startswith("$argon2id$") and PasswordHasher().verify(rows[0][1], "a long passphrase")


def test_ids_are_shown_whole_and_every_admin_command_answers_json(tmp_path: Path) -> None:
    database = tmp_path / "cli.db"
    assert toolhost(database, "migrate").exit_code == 0
    account = parsed(toolhost(database, "accounts", "create", "--tier", "team", "--name", "acme", "--json"))
    assert parsed(toolhost(database, "accounts", "list", "--json")) == [account]
    project = parsed(toolhost(database, "projects", "create", "--account", account["id"], "--name", "P", "--json"))
    assert parsed(toolhost(database, "projects", "list", "--account", account["id"], "--json")) == [project]
    issued = parsed(
        toolhost(
            database,
            "keys",
            "create",
            "--account",
            account["id"],
            "--name",
            "a-rather-long-key-name-for-an-agent",
            "--scopes",
            "mcp:read,mcp:write,mcp:distribute",
            "--project",
            project["id"],
            "--expires-in",
            "30d",
            "--json",
        )
    )
    assert issued["key"].startswith("thk_live_") and issued["project_id"] == project["id"]

    # The table of a terminal 80 columns wide (the runner's) still shows every id whole, ready to paste.
    table = toolhost(database, "keys", "list")
    assert table.exit_code == 0, table.stderr
    assert issued["id"] in table.stdout and project["id"] in table.stdout
    listed = parsed(toolhost(database, "keys", "list", "--json"))
    assert [key["id"] for key in listed] == [issued["id"]] and "key" not in listed[0]
    shown_id = re.search(UUID, table.stdout).group(0)  # type: ignore[union-attr]
    revoked = parsed(toolhost(database, "keys", "revoke", shown_id, "--json"))
    assert revoked["id"] == issued["id"] and revoked["revoked_at"]

    client = parsed(toolhost(database, "clients", "create", "--account", account["id"], "--name", "c", "--json"))
    assert client["client_id"].startswith("thc_") and client["client_secret"]
    assert parsed(toolhost(database, "clients", "revoke", client["client_id"], "--json"))["revoked_at"]
    granted = parsed(toolhost(database, "credits", "grant", "--account", account["id"], "--amount", "5", "--json"))
    assert granted == {"account_id": account["id"], "granted": 5, "balance": account["credit_balance"] + 5}


def no_database_above(directory: Path) -> None:
    """Skips when a toolhost.db lies in a directory above (the command would rightly find it)."""
    found = [parent / "toolhost.db" for parent in directory.parents if (parent / "toolhost.db").exists()]
    if found:
        pytest.skip(f"{found[0]} exists above the test's directory")


def test_a_command_finds_the_database_from_a_directory_below_it(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    installation = tmp_path / "installation"
    deeper = installation / "some" / "work"
    deeper.mkdir(parents=True)
    no_database_above(installation)
    monkeypatch.chdir(installation)
    assert toolhost(None, "migrate").exit_code == 0
    assert sorted(path.name for path in installation.iterdir()) == ["some", "toolhost.db", "toolhost.secret"]

    monkeypatch.chdir(deeper)
    account = parsed(toolhost(None, "accounts", "create", "--name", "found", "--json"))
    monkeypatch.chdir(installation)
    assert parsed(toolhost(None, "accounts", "list", "--json")) == [account]
    assert list(deeper.iterdir()) == []


def test_a_command_without_a_database_says_what_to_set_and_leaves_nothing_behind(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    elsewhere = tmp_path / "elsewhere"
    elsewhere.mkdir()
    no_database_above(elsewhere)
    monkeypatch.chdir(elsewhere)
    for command in (["keys", "list"], ["call", "get_credit_balance"], ["worker"], ["connections", "list"]):
        if command[0] == "connections":
            command += ["--project", "8d3c6f0e-5f7e-4f39-9a57-0d7f5b0f1c2e"]
        refused = toolhost(None, *command, key="thk_live_unused")
        assert refused.exit_code == 1, refused.stdout
        assert "TOOLHOST_DATABASE_URL" in refused.stderr and str(elsewhere) in refused.stderr
    missing = tmp_path / "missing.db"
    refused = toolhost(missing, "accounts", "list")
    assert refused.exit_code == 1 and str(missing) in refused.stderr and "toolhost migrate" in refused.stderr
    assert list(elsewhere.iterdir()) == [] and not missing.exists()

    # An empty file (as the command used to leave behind) is a database without tables, not a traceback.
    (elsewhere / "toolhost.db").touch()
    unmigrated = toolhost(None, "accounts", "list")
    assert unmigrated.exit_code == 1 and "toolhost migrate" in unmigrated.stderr

    wrong = toolhost(None, "accounts", "list", TOOLHOST_DATABASE_URL="mysql://admin:hunter2@db.internal/toolhost")
    assert wrong.exit_code == 1
    assert "TOOLHOST_DATABASE_URL" in wrong.stderr and "postgresql://" in wrong.stderr
    assert "hunter2" not in wrong.stderr


def test_the_first_start_prints_the_account_and_project_ids_with_the_key(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    served: list[list[str]] = []
    monkeypatch.setattr(os, "execv", lambda path, arguments: served.append(arguments))
    monkeypatch.chdir(tmp_path)
    first = toolhost(None, "serve")
    assert first.exit_code == 0, first.stderr
    assert [arguments[1:] for arguments in served] == [["-m", "toolhost.server"]]
    assert "Bootstrapped an agency account with a default project." in first.stdout
    account_id = re.search(rf"Account: ({UUID})", first.stdout).group(1)  # type: ignore[union-attr]
    project_id = re.search(rf"Project: ({UUID})", first.stdout).group(1)  # type: ignore[union-attr]
    key = re.search(r"(thk_live_[A-Za-z0-9_-]{32,})", first.stdout).group(1)  # type: ignore[union-attr]
    assert [account["id"] for account in parsed(toolhost(None, "accounts", "list", "--json"))] == [account_id]
    projects = parsed(toolhost(None, "projects", "list", "--account", account_id, "--json"))
    assert [project["id"] for project in projects] == [project_id]
    called = toolhost(None, "call", "get_credit_balance", "--json", '{"response_format": "json"}', key=key)
    assert json.loads(called.stdout)["isError"] is False
    keyless = toolhost(None, "call", "get_credit_balance")
    assert keyless.exit_code == 2 and "TOOLHOST_API_KEY" in keyless.stderr

    again = toolhost(None, "serve")
    assert again.exit_code == 0 and "thk_live_" not in again.stdout and "Account:" not in again.stdout
