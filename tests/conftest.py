"""Fixtures: a migrated database per test, the real app over HTTP, and tenants with keys."""

from __future__ import annotations

import asyncio
import fcntl
import functools
import os
import re
import shutil
import tempfile
import uuid
from collections.abc import AsyncIterator, Awaitable, Callable, Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any
from urllib.parse import urlsplit, urlunsplit

import httpx
import pytest
from argon2 import PasswordHasher, profiles
from sqlalchemy.ext.asyncio import AsyncSession, create_async_engine
from starlette.applications import Starlette

from toolhost.app import create_app
from toolhost.catalog import JOB_TYPES, build_registry
from toolhost.config import Settings, load_settings
from toolhost.db.migrate import upgrade
from toolhost.db.session import create_engine
from toolhost.platform import accounts, users
from toolhost.platform.jobs import WorkerContext
from toolhost.platform.registry import Registry
from toolhost.platform.runtime import Platform, build_platform
from toolhost.platform.worker import load_job_types

# The browser fixtures (live_server, browser_page), for page tests anywhere in the suite.
pytest_plugins = ["tests.browser"]

POSTGRES_ADMIN_URL = os.environ.get("TOOLHOST_TEST_POSTGRES_URL", "postgresql+asyncpg://postgres@127.0.0.1:5432/test")
TEST_SECRET = "test-secret-not-for-production-0123456789"


def redis_url_of_this_worker(url: str) -> str:
    """The Redis database of this pytest-xdist worker: gw0 on the URL's database, gw1 on the next, and so on.

    Each worker flushes the rate-limit keys of its own database, so one worker's flush never resets another's limits.
    """
    worker_number = int(os.environ.get("PYTEST_XDIST_WORKER", "gw0").removeprefix("gw"))
    parts = urlsplit(url)
    database = int(parts.path.strip("/") or 0) + worker_number
    return urlunsplit(parts._replace(path=f"/{database}"))


REDIS_URL = redis_url_of_this_worker(os.environ.get("TOOLHOST_TEST_REDIS_URL", "redis://127.0.0.1:6379/0"))


def pytest_collection_modifyitems(items: list[pytest.Item]) -> None:
    """Tests marked slow run first: started on every worker at once, their minutes overlap the rest of the run
    instead of ending it on one worker while the others wait."""
    items.sort(key=lambda item: item.get_closest_marker("slow") is None)


def settings_for_test(**overrides: Any) -> Settings:
    """Settings for a test: rate limits off unless a test turns them on."""
    values: dict[str, Any] = {
        "environment": "test",
        "secret_key": TEST_SECRET,
        "public_url": "http://testserver",
        "ratelimit": {"enabled": False},
        "jobs": {"run_in_process": False},
    }
    values.update(overrides)
    return load_settings(**values)


def worker_context(platform: Platform, worker_id: str = "test-worker") -> WorkerContext:
    """A worker on the test's platform with every job type of the composition root (run it with run_jobs)."""
    return WorkerContext(platform=platform, worker_id=worker_id, job_types=load_job_types(JOB_TYPES))


@pytest.fixture(autouse=True)
def cheapest_password_hashing(monkeypatch: pytest.MonkeyPatch) -> None:
    """argon2id at the cost argon2-cffi gives for tests: the server's cost is 0.2 s of CPU per hash or check, and the
    suite makes a few hundred. The hashes stay argon2id, and a check reads the cost from the stored hash."""
    monkeypatch.setattr(users, "PASSWORDS", PasswordHasher.from_parameters(profiles.CHEAPEST))


@pytest.fixture(scope="session")
def template_database(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """An SQLite file migrated to head once; each test gets a copy."""
    path = tmp_path_factory.mktemp("template") / "template.db"

    async def migrate() -> None:
        engine = create_engine(f"sqlite+aiosqlite:///{path}")
        await upgrade(engine)
        await engine.dispose()

    asyncio.run(migrate())
    return path


@pytest.fixture
def database_url(template_database: Path, tmp_path: Path) -> str:
    """A fresh migrated SQLite database for this test."""
    target = tmp_path / "toolhost.db"
    shutil.copyfile(template_database, target)
    return f"sqlite+aiosqlite:///{target}"


@pytest.fixture
def settings(database_url: str, tmp_path: Path) -> Settings:
    """Settings on the test's own database and media folder."""
    return settings_for_test(database_url=database_url, media={"root": str(tmp_path / "media")})


@functools.cache
def shared_registry() -> Registry:
    """The tools' registry, built once per test process as a server builds it once: building it declares 91
    tools and their schemas (25 ms), which every test paid again. A test that changes a tool patches it back."""
    return build_registry()


@pytest.fixture
async def platform(settings: Settings) -> AsyncIterator[Platform]:
    """The platform the app runs on, for direct service access in tests."""
    built = build_platform(settings, shared_registry())
    yield built
    await built.close()


@pytest.fixture
async def app(settings: Settings, platform: Platform) -> AsyncIterator[Starlette]:
    """The real ASGI app with its lifespan running."""
    application = create_app(settings, platform)
    started, stopping = asyncio.Event(), asyncio.Event()

    async def serve() -> None:
        # The lifespan's task group must be entered and exited by one task; fixtures tear down in another.
        async with application.router.lifespan_context(application):
            started.set()
            await stopping.wait()

    task = asyncio.create_task(serve())
    waiter = asyncio.create_task(started.wait())
    await asyncio.wait({task, waiter}, timeout=30, return_when=asyncio.FIRST_COMPLETED)
    if task.done():
        task.result()
    yield application
    stopping.set()
    await task


@pytest.fixture
async def client(app: Starlette) -> AsyncIterator[httpx.AsyncClient]:
    """HTTP against the app in-process."""
    async with httpx.AsyncClient(transport=httpx.ASGITransport(app=app), base_url="http://testserver") as http:
        yield http


@pytest.fixture
async def session(platform: Platform) -> AsyncIterator[AsyncSession]:
    """A session on the test database (commit what a test sets up)."""
    async with platform.session_factory() as opened:
        yield opened


@dataclass
class Tenant:
    """An account with projects and a key, calling tools over HTTP."""

    client: httpx.AsyncClient
    key: str
    key_id: uuid.UUID
    account_id: uuid.UUID
    project_ids: list[uuid.UUID]

    @property
    def project_id(self) -> uuid.UUID:
        return self.project_ids[0]

    @property
    def headers(self) -> dict[str, str]:
        return {"Authorization": f"Bearer {self.key}"}

    async def call(self, tool_name: str, arguments: Any = None, **request: Any) -> httpx.Response:
        """POST /v1/tools/<tool_name> with this tenant's key."""
        headers = {**self.headers, **request.pop("headers", {})}
        return await self.client.post(
            f"/v1/tools/{tool_name}", json={} if arguments is None else arguments, headers=headers, **request
        )

    async def data(self, tool_name: str, arguments: Any = None) -> dict[str, Any]:
        """The structuredContent of a call that must succeed."""
        response = await self.call(tool_name, arguments)
        body = response.json()
        assert response.status_code == 200 and not body["isError"], body
        return body["structuredContent"]  # type: ignore[no-any-return]


TenantFactory = Callable[..., Awaitable[Tenant]]


@pytest.fixture
def make_tenant(platform: Platform, client: httpx.AsyncClient, settings: Settings) -> TenantFactory:
    """Builds tenants: `await make_tenant(tier="pro", scopes=["mcp:read"], projects=2)`."""

    async def build(
        tier: str = "agency",
        scopes: list[str] | None = None,
        projects: int = 1,
        bind_project: bool = False,
        name: str = "test-key",
    ) -> Tenant:
        async with platform.session_factory() as opened, opened.begin():
            account = await accounts.create_account(
                opened, name=f"account-{uuid.uuid4().hex[:6]}", tier=tier, settings=settings
            )
            created = [
                await accounts.create_project(opened, account_id=account.id, name=f"project-{index + 1}")
                for index in range(projects)
            ]
            issued = await accounts.create_key(
                opened,
                account_id=account.id,
                name=name,
                granted_scopes=scopes or (["mcp:full"] if tier in {"team", "agency"} else ["mcp:read", "mcp:write"]),
                settings=settings,
                project_id=created[0].id if bind_project else None,
            )
        return Tenant(
            client=client,
            key=issued.plaintext,
            key_id=issued.key.id,
            account_id=account.id,
            project_ids=[project.id for project in created],
        )

    return build


@pytest.fixture
async def tenant(make_tenant: TenantFactory) -> Tenant:
    """An agency account with one project and an mcp:full key."""
    return await make_tenant()


@dataclass
class Person:
    """A person of an account who signs in with an email address and a password."""

    email: str
    password: str
    user_id: uuid.UUID
    account_id: uuid.UUID


PersonFactory = Callable[..., Awaitable[Person]]
CSRF_FIELD = re.compile(r'name="csrf_token" value="([^"]+)"')


@pytest.fixture
def make_person(platform: Platform, settings: Settings) -> PersonFactory:
    """Builds people: `await make_person(tier="pro")`, or `await make_person(account_id=tenant.account_id)`."""

    async def build(
        tier: str = "agency", account_id: uuid.UUID | None = None, password: str = "correct horse battery"
    ) -> Person:
        email = f"person-{uuid.uuid4().hex[:8]}@example.com"
        async with platform.session_factory() as opened, opened.begin():
            if account_id is None:
                account = await accounts.create_account(
                    opened, name=f"account-{uuid.uuid4().hex[:6]}", tier=tier, settings=settings
                )
                await accounts.create_project(opened, account_id=account.id, name="project-1")
                account_id = account.id
            user = await users.create_user(opened, account_id=account_id, email=email, password=password)
        return Person(email=email, password=password, user_id=user.id, account_id=account_id)

    return build


def csrf_of(page: str) -> str:
    """The CSRF token a page's form carries."""
    found = CSRF_FIELD.search(page)
    assert found is not None, page
    return found.group(1)


async def sign_in(
    client: httpx.AsyncClient, email: str, password: str, next_path: str = "/app/calendar"
) -> httpx.Response:
    """Signs in through the sign-in page as a browser would; the client keeps the session cookie."""
    page = await client.get("/signin", params={"next": next_path})
    form = {"csrf_token": csrf_of(page.text), "next": next_path, "email": email, "password": password}
    return await client.post("/signin", data=form)


def _service_unreachable(kind: str, error: Exception) -> None:
    message = f"{kind} is unreachable ({type(error).__name__}: {error})"
    if os.environ.get("CI") == "true":
        pytest.fail(f"{message}; under CI=true the {kind} tests must run")
    pytest.skip(message)


def _postgres_database_url(name: str) -> str:
    return POSTGRES_ADMIN_URL.rsplit("/", 1)[0] + f"/{name}"


@pytest.fixture(scope="session")
def postgres_template() -> Iterator[str]:
    """The name of a PostgreSQL database migrated to head once per pytest-xdist worker; tests get copies of it.

    Migrating takes seconds, copying a database a few milliseconds (CREATE DATABASE ... TEMPLATE).
    """
    name = f"toolhost_template_{uuid.uuid4().hex[:12]}"

    async def administer(statement: str) -> None:
        admin = create_async_engine(POSTGRES_ADMIN_URL, isolation_level="AUTOCOMMIT")
        try:
            async with admin.connect() as connection:
                await connection.exec_driver_sql(statement)
        finally:
            await admin.dispose()

    async def migrate() -> None:
        engine = create_engine(_postgres_database_url(name))
        try:
            await upgrade(engine)
        finally:
            await engine.dispose()  # a database with connections cannot be copied

    try:
        asyncio.run(administer(f'CREATE DATABASE "{name}"'))
    except Exception as error:  # any failure to reach the server skips (a session fixture's skip holds for all)
        _service_unreachable("PostgreSQL", error)
    try:
        asyncio.run(migrate())
        yield name
    finally:
        asyncio.run(administer(f'DROP DATABASE IF EXISTS "{name}" WITH (FORCE)'))


@pytest.fixture
def postgres_connections_to_itself() -> Iterator[None]:
    """For a test that fills a pool of 40 PostgreSQL connections: such tests take turns across the xdist workers
    (an exclusive lock on a file), so together they stay under a default server's max_connections of 100."""
    with (Path(tempfile.gettempdir()) / "toolhost-tests-postgres-connections.lock").open("w") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)
        yield


@pytest.fixture
async def postgres_url(postgres_template: str) -> AsyncIterator[str]:
    """A fresh PostgreSQL database migrated to head (a copy of the template), dropped after the test."""
    name = f"toolhost_test_{uuid.uuid4().hex[:12]}"
    admin = create_async_engine(POSTGRES_ADMIN_URL, isolation_level="AUTOCOMMIT")
    try:
        async with admin.connect() as connection:
            await connection.exec_driver_sql(f'CREATE DATABASE "{name}" TEMPLATE "{postgres_template}"')
        yield _postgres_database_url(name)
    finally:
        async with admin.connect() as connection:
            await connection.exec_driver_sql(f'DROP DATABASE IF EXISTS "{name}" WITH (FORCE)')
        await admin.dispose()


@pytest.fixture
async def redis_url() -> str:
    """The Redis server, flushed of toolhost's rate-limit keys."""
    import redis.asyncio as redis_client

    connection = redis_client.from_url(REDIS_URL)
    try:
        await connection.ping()
    except Exception as error:  # any failure to reach the server skips
        await connection.aclose()
        _service_unreachable("Redis", error)
    async for key in connection.scan_iter("toolhost-ratelimit*"):
        await connection.delete(key)
    await connection.aclose()
    return REDIS_URL


@pytest.fixture
def clean_environment() -> Iterator[None]:
    """Restores TOOLHOST_* variables a test changed."""
    saved = {key: value for key, value in os.environ.items() if key.startswith("TOOLHOST_")}
    yield
    for key in [key for key in os.environ if key.startswith("TOOLHOST_")]:
        del os.environ[key]
    os.environ.update(saved)


class EndlessBody:
    """A chunked request body of 64 KB chunks that counts how much of it the server read."""

    CHUNK = b"x" * 65536

    def __init__(self, megabytes: int = 64) -> None:
        self.chunks_left = megabytes * 16
        self.sent = 0

    async def __aiter__(self) -> AsyncIterator[bytes]:
        while self.chunks_left:
            self.chunks_left -= 1
            self.sent += len(self.CHUNK)
            yield self.CHUNK
