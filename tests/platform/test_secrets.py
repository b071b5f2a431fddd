"""Secret keys: made on first start and kept private, refused when guessable, rotated by key id without breaking
what the previous keys signed until it expires, and stored connector secrets re-encrypted under the new keys."""

from __future__ import annotations

import asyncio
import base64
import json
import os
import stat
import time
from pathlib import Path
from typing import Any

import httpx
import jwt
import pytest
from cryptography.fernet import Fernet
from cryptography.hazmat.primitives import hashes
from cryptography.hazmat.primitives.kdf.hkdf import HKDF
from pydantic import ValidationError
from typer.testing import CliRunner, Result

from tests.conftest import TEST_SECRET, Tenant, settings_for_test
from tests.domains.distribution.conftest import connect_webhook
from tests.platform.test_oauth import new_client, token_for
from toolhost import cli
from toolhost.catalog import build_registry
from toolhost.config import Settings, load_settings
from toolhost.domains.distribution.models import ConnectedAccount
from toolhost.platform import accounts
from toolhost.platform.auth import token_audience
from toolhost.platform.runtime import Platform, build_platform
from toolhost.providers.connectors import webhook
from toolhost.providers.connectors.vault import TokenVault

PNG = base64.b64encode(
    bytes.fromhex(
        "89504e470d0a1a0a0000000d4948445200000001000000010806000000"
        "1f15c4890000000d49444154789c6360f8cf000000030101009f6d3a0d0000000049454e44ae426082"
    )
).decode()


def owner_only(path: Path) -> bool:
    return stat.S_IMODE(path.stat().st_mode) == 0o600


def test_the_first_start_writes_random_keys_beside_the_sqlite_database_for_its_owner_only(tmp_path: Path) -> None:
    database = f"sqlite+aiosqlite:///{tmp_path / 'data.db'}"
    first = load_settings(database_url=database).keyring.current()
    key_file = tmp_path / "data.secret"
    assert key_file.exists() and owner_only(key_file)
    assert len({first.signing, first.media, first.encryption}) == 3  # three keys, not one reused
    assert all(len(key) == 32 for key in (first.signing, first.media, first.encryption))
    again = load_settings(database_url=database).keyring.current()
    assert (again.kid, again.signing, again.media, again.encryption) == (
        first.kid,
        first.signing,
        first.media,
        first.encryption,
    )
    (tmp_path / "other").mkdir()
    other = load_settings(database_url=f"sqlite+aiosqlite:///{tmp_path / 'other' / 'data.db'}").keyring.current()
    assert other.signing != first.signing  # each install makes its own


def test_keys_that_could_be_guessed_or_read_by_others_are_refused(tmp_path: Path) -> None:
    database = f"sqlite+aiosqlite:///{tmp_path / 'toolhost.db'}"
    with pytest.raises(ValidationError, match="placeholder"):
        load_settings(database_url=database, secret_key="change-me")
    with pytest.raises(ValidationError, match="at least 32"):
        load_settings(database_url=database, secret_key="my-secret")
    assert not (tmp_path / "toolhost.secret").exists()

    load_settings(database_url=database)
    os.chmod(tmp_path / "toolhost.secret", 0o644)
    with pytest.raises(ValidationError, match="chmod 600"):
        load_settings(database_url=database)

    postgres = "postgresql+asyncpg://toolhost@db.internal/toolhost"
    with pytest.raises(ValidationError, match="TOOLHOST_SECRET_FILE .* or TOOLHOST_SECRET_KEY"):
        load_settings(database_url=postgres)
    shared = tmp_path / "shared" / "toolhost.keys"
    assert load_settings(database_url=postgres, secret_file=shared).keyring.source == str(shared)
    assert owner_only(shared)


def test_an_operator_secret_keeps_what_it_signed_and_sealed_before_key_files(tmp_path: Path) -> None:
    # How toolhost encrypted connector secrets with TOOLHOST_SECRET_KEY (or a first-release key file) before.
    derived = HKDF(algorithm=hashes.SHA256(), length=32, salt=None, info=b"toolhost connected-account tokens v1")
    sealed = Fernet(base64.urlsafe_b64encode(derived.derive(TEST_SECRET.encode()))).encrypt(b'{"token":"t"}')
    # A database of its own: a key file beside the default one (in the working directory) would win over the secret.
    from_environment = settings_for_test(
        secret_key=TEST_SECRET, database_url=f"sqlite+aiosqlite:///{tmp_path / 'environment' / 'toolhost.db'}"
    )
    assert TokenVault(from_environment.keyring).open(sealed.decode()) == {"token": "t"}
    first_release_file = tmp_path / "toolhost.secret"
    first_release_file.write_text(TEST_SECRET + "\n")
    first_release_file.chmod(0o600)
    from_file = load_settings(database_url=f"sqlite+aiosqlite:///{tmp_path / 'toolhost.db'}")
    assert TokenVault(from_file.keyring).open(sealed.decode()) == {"token": "t"}
    assert from_file.keyring.current().kid == from_environment.keyring.current().kid


# ---------------------------------------------------------------------------------------------------------------
# Rotation, through the CLI and HTTP, on a server that keeps running.


@pytest.fixture
def settings(database_url: str, tmp_path: Path) -> Settings:
    """Keys in a key file (as an install without TOOLHOST_SECRET_KEY keeps them); the webhook receiver is local."""
    return settings_for_test(
        database_url=database_url,
        media={"root": str(tmp_path / "media")},
        secret_key="",
        secret_file=tmp_path / "toolhost.secret",
        fetch={"allow": ["127.0.0.1"], "allow_http": True},
    )


async def run_cli(settings: Settings, *arguments: str, secret_key: str = "") -> Result:
    """`toolhost ...` in-process, on the test's database and key file (in a thread: the CLI runs its own loop)."""
    environment = {
        "TOOLHOST_DATABASE_URL": settings.database_url,
        "TOOLHOST_SECRET_FILE": str(settings.key_file),
        "TOOLHOST_SECRET_KEY": secret_key,
        "TOOLHOST_MEDIA__ROOT": str(settings.media.root),
        "TOOLHOST_ENVIRONMENT": "test",
        "COLUMNS": "200",
    }
    result = await asyncio.to_thread(CliRunner().invoke, cli.app, list(arguments), env=environment)
    assert result.exit_code == 0, result.output
    return result


def kid_of(token: str) -> str:
    return str(jwt.get_unverified_header(token)["kid"])


async def access_token(client: httpx.AsyncClient, credentials: tuple[str, str]) -> str:
    response = await token_for(client, *credentials)
    assert response.status_code == 200, response.text
    return str(response.json()["access_token"])


async def accepted(client: httpx.AsyncClient, token: str) -> bool:
    response = await client.post("/v1/tools/get_credit_balance", headers={"Authorization": f"Bearer {token}"})
    assert response.status_code in (200, 401), response.text
    return response.status_code == 200


async def served(client: httpx.AsyncClient, url: str) -> bool:
    response = await client.get(url.removeprefix("http://testserver"))
    assert response.status_code in (200, 403), response.text
    return response.status_code == 200


async def stored_secret(platform: Platform, account_id: Any) -> str:
    async with platform.session_factory() as session:
        account = await session.get(ConnectedAccount, account_id)
    assert account is not None
    return account.secret


async def events_accepted(client: httpx.AsyncClient, account_id: Any, signing_secret: str) -> bool:
    body = json.dumps({"account_id": str(account_id), "metrics": []}).encode()
    headers = {webhook.SIGNATURE_HEADER: webhook.sign(signing_secret, body, int(time.time()))}
    response = await client.post("/v1/connectors/webhook/events", content=body, headers=headers)
    return response.status_code == 202


async def test_rotation_keeps_old_tokens_and_urls_until_they_expire_and_reencrypts_stored_secrets(
    tenant: Tenant, client: httpx.AsyncClient, platform: Platform, settings: Settings
) -> None:
    credentials = await new_client(platform, tenant, ["mcp:read"])
    old_token = await access_token(client, credentials)
    old_url = (await tenant.data("upload_media", {"file_data": PNG, "content_type": "image/png"}))["signed_url"]
    account_id = await connect_webhook(platform, tenant.project_id, "http://127.0.0.1:9/hook")
    signing_secret = TokenVault(platform.settings.keyring).open(await stored_secret(platform, account_id))
    first = settings.keyring.current()
    assert kid_of(old_token) == first.kid and f"kid={first.kid}" in old_url

    rotated = await run_cli(settings, "secrets", "rotate")
    second = platform.settings.keyring.current()  # the running server sees the new keys at once
    assert second.kid != first.kid and second.kid in rotated.output
    assert "Re-encrypted 1 stored connector secrets" in rotated.output

    # What the first keys signed still verifies; new tokens and URLs carry the new key id.
    assert await accepted(client, old_token) and await served(client, old_url)
    new_token = await access_token(client, credentials)
    assert kid_of(new_token) == second.kid and await accepted(client, new_token)
    key = old_url.split("/media/", 1)[1].split("?", 1)[0]
    new_url = (await tenant.data("get_media_url", {"r2_key": key}))["signed_url"]
    assert f"kid={second.kid}" in new_url and await served(client, new_url)

    # The stored secret is now sealed under the new encryption key alone, and still used.
    sealed = await stored_secret(platform, account_id)
    assert json.loads(Fernet(second.fernet_key).decrypt(sealed.encode())) == signing_secret
    assert await events_accepted(client, account_id, signing_secret["signing_secret"])
    assert owner_only(Path(str(settings.key_file)))
    listed = json.loads((await run_cli(settings, "secrets", "list", "--json")).output)
    assert [(row["kid"], row["status"]) for row in listed["keys"]] == [(second.kid, "current"), (first.kid, "retired")]

    # A token naming a key id with another key's signature, an unknown key id, or none, is refused.
    claims = jwt.decode(new_token, options={"verify_signature": False})
    for forged in (
        jwt.encode(claims, os.urandom(32), algorithm="HS256", headers={"kid": second.kid}),
        jwt.encode(claims, second.signing, algorithm="HS256", headers={"kid": "k00000000"}),
        jwt.encode(claims, second.signing, algorithm="HS256"),
    ):
        assert not await accepted(client, forged)
    assert not await served(client, new_url.replace(f"kid={second.kid}", f"kid={first.kid}"))

    # After a leak: the previous keys go at once, and all they signed with them.
    revoked = await run_cli(settings, "secrets", "rotate", "--revoke-previous")
    third = platform.settings.keyring.current()
    dropped = revoked.output.split("Dropped (what they signed no longer verifies): ", 1)[1].split(".", 1)[0]
    assert sorted(dropped.split(", ")) == sorted([first.kid, second.kid])
    assert not await accepted(client, old_token) and not await accepted(client, new_token)
    assert not await served(client, old_url) and not await served(client, new_url)
    assert await accepted(client, await access_token(client, credentials))
    sealed = await stored_secret(platform, account_id)
    assert json.loads(Fernet(third.fernet_key).decrypt(sealed.encode())) == signing_secret
    assert await events_accepted(client, account_id, signing_secret["signing_secret"])


async def test_rotating_an_install_on_an_operator_secret_moves_its_keys_into_a_key_file(
    tmp_path: Path, database_url: str
) -> None:
    on_secret = settings_for_test(database_url=database_url, secret_key=TEST_SECRET)
    assert on_secret.keyring.path is None
    before = build_platform(on_secret, build_registry())
    try:
        async with before.session_factory() as session, session.begin():
            account = await accounts.create_account(session, name="operator", tier="pro", settings=on_secret)
            issued = await accounts.create_client(
                session, account_id=account.id, name="agent", granted_scopes=["mcp:read"]
            )
        old_token = (
            await before.authenticator.issue_token(
                client_id=issued.client.client_id, client_secret=issued.client_secret, requested_scope=None
            )
        ).access_token
    finally:
        await before.close()

    key_file = tmp_path / "keys" / "toolhost.secret"
    moved = await run_cli(
        on_secret.model_copy(update={"secret_file": key_file}), "secrets", "rotate", secret_key=TEST_SECRET
    )
    assert "remove that variable" in moved.output and owner_only(key_file)
    # The file is what every process reads now; the operator secret's keys are its retired generation.
    on_file = settings_for_test(database_url=database_url, secret_key=TEST_SECRET, secret_file=key_file)
    [current, retired] = on_file.keyring.generations()
    assert retired.kid == kid_of(old_token) != current.kid
    after = build_platform(on_file, build_registry())
    try:
        principal = await after.authenticator.authenticate(old_token, resource=token_audience(on_file))
    finally:
        await after.close()
    assert principal.account_id == account.id
