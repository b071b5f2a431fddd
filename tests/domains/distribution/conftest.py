"""Fixtures of the distribution tests: fetch allowed to 127.0.0.1, routes mounted, a worker, a receiver."""

from __future__ import annotations

import uuid
from collections.abc import AsyncIterator, Iterator
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import pytest
from sqlalchemy import update
from starlette.applications import Starlette

from tests.conftest import settings_for_test, worker_context
from tests.domains.distribution.standins import WebhookReceiver, serve
from toolhost.config import Settings
from toolhost.domains.distribution import accounts as accounts_service
from toolhost.domains.distribution import routes as distribution_routes
from toolhost.domains.distribution.models import Post
from toolhost.domains.media import routes as media_routes
from toolhost.platform.jobs import Job, WorkerContext
from toolhost.platform.runtime import Platform
from toolhost.platform.worker import run_jobs
from toolhost.providers.connectors import linkedin, pinterest, tiktok


def local_settings(database_url: str, media_root: Path, **overrides: Any) -> Settings:
    """Test settings that let the fetcher reach the stand-ins on 127.0.0.1 over plain http."""
    values: dict[str, Any] = {
        "database_url": database_url,
        "media": {"root": str(media_root)},
        "fetch": {"allow": ["127.0.0.1"], "allow_http": True},
        "distribution": {"connectors": {"webhook_backoff": 0.01}},
    }
    values.update(overrides)
    return settings_for_test(**values)


@pytest.fixture
def settings(database_url: str, tmp_path: Path) -> Settings:
    return local_settings(database_url, tmp_path / "media")


@pytest.fixture(autouse=True)
def quick_processing_polls(monkeypatch: pytest.MonkeyPatch) -> None:
    """The stand-ins finish processing by their next status check: the seconds a real platform asks between
    checks would only be waited out."""
    for connector in (linkedin, pinterest, tiktok):
        monkeypatch.setattr(connector, "PROCESSING_POLL_SECONDS", 0.01)


@pytest.fixture(autouse=True)
def mounted_routes(request: pytest.FixtureRequest) -> None:
    """Mounts the domain's routes on the test app when the app does not mount them yet."""
    if "app" not in request.fixturenames:
        return
    app: Starlette = request.getfixturevalue("app")
    paths = {getattr(route, "path", None) for route in app.router.routes}
    for route in [*media_routes.routes, *distribution_routes.routes]:
        if route.path not in paths:
            app.router.routes.insert(0, route)


@pytest.fixture
def worker(platform: Platform) -> WorkerContext:
    """A worker identity on the test database; tests run the job machine (publish jobs) through it."""
    return worker_context(platform, "worker-a")


async def drain(context: WorkerContext) -> int:
    """Runs the job machine until nothing is due; returns the jobs (here: posts) it handled."""
    total = 0
    while handled := await run_jobs(context):
        total += handled
    return total


async def make_due(platform: Platform, post_id: uuid.UUID | str) -> None:
    """Brings a post's due time (and its publish job's) to now, as if its retry delay had passed."""
    now = datetime.now(UTC)
    async with platform.session_factory() as session, session.begin():
        post = await session.get(Post, uuid.UUID(str(post_id)))
        assert post is not None and post.job_id is not None
        post.due_at = now
        await session.execute(update(Job).where(Job.id == post.job_id).values(run_after=now))


@pytest.fixture
async def receiver() -> AsyncIterator[tuple[WebhookReceiver, str]]:
    """A webhook receiver on 127.0.0.1 and its URL."""
    stand_in = WebhookReceiver()
    async with serve(stand_in.app()) as base:
        yield stand_in, f"{base}/hook"


async def connect_webhook(
    platform: Platform,
    project_id: uuid.UUID,
    url: str,
    receiver: WebhookReceiver | None = None,
    platform_name: str = "twitter",
) -> uuid.UUID:
    """Connects a webhook account the way `toolhost connections add` does; the receiver learns the secret."""
    async with platform.session_factory() as session, session.begin():
        account, shown = await accounts_service.create(
            session=session,
            settings=platform.settings,
            project_id=project_id,
            platform=platform_name,
            connector_name="webhook",
            fields={"url": url},
        )
    if receiver is not None:
        receiver.secret = shown["signing_secret"]
    return account.id


@pytest.fixture(scope="session")
def s3_endpoint() -> Iterator[str]:
    """A local S3 stand-in (moto's server) on 127.0.0.1, shared by the tests that use an s3 media store."""
    # Imported here: moto and boto3 take a quarter of a second, which every test process paid at collection.
    from moto.server import ThreadedMotoServer

    server = ThreadedMotoServer(ip_address="127.0.0.1", port=0, verbose=False)
    server.start()
    host, port = server.get_host_and_port()
    try:
        yield f"http://{host}:{port}"
    finally:
        server.stop()


def s3_media(endpoint: str, root: Path) -> dict[str, Any]:
    """Media settings of an s3 store on the stand-in, in a bucket of its own (created here)."""
    bucket = f"media-{uuid.uuid4().hex[:12]}"
    values: dict[str, Any] = {
        "root": str(root),
        "store": "s3",
        "s3_bucket": bucket,
        "s3_endpoint_url": endpoint,
        "s3_access_key_id": "test-key",
        "s3_secret_access_key": "test-secret",
        "s3_addressing_style": "path",
    }
    bucket_client(values).create_bucket(Bucket=bucket)
    return values


def bucket_client(media: dict[str, Any]) -> Any:
    """A plain boto3 client on the stand-in, to look into the bucket behind toolhost's back."""
    import boto3

    return boto3.session.Session().client(
        "s3",
        endpoint_url=media["s3_endpoint_url"],
        region_name="us-east-1",
        aws_access_key_id=media["s3_access_key_id"],
        aws_secret_access_key=media["s3_secret_access_key"],
    )
