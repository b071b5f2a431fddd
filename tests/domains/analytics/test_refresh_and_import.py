"""Metrics arriving by pull (refresh_platform_analytics + the analytics_refresh poller) and by an operator's import."""

from __future__ import annotations

import asyncio
import json
import uuid
from collections.abc import AsyncIterator
from datetime import timedelta
from pathlib import Path

import httpx
import pytest
from sqlalchemy import select
from typer.testing import CliRunner

from tests.conftest import TEST_SECRET, Tenant, worker_context
from tests.domains.analytics.conftest import Channel, mastodon_channel, now
from tests.domains.distribution.standins import MastodonStandIn, serve
from toolhost import cli as toolhost_cli
from toolhost.db.session import create_engine, create_session_factory
from toolhost.domains.analytics import cli, metrics
from toolhost.domains.distribution import accounts as accounts_service
from toolhost.domains.distribution.models import Post
from toolhost.platform import accounts
from toolhost.platform.jobs import Job
from toolhost.platform.runtime import Platform
from toolhost.platform.worker import run_jobs


@pytest.fixture
async def mastodon() -> AsyncIterator[tuple[MastodonStandIn, str]]:
    stand_in = MastodonStandIn()
    async with serve(stand_in.app()) as base:
        yield stand_in, base


async def test_refresh_pulls_mastodon_counters_into_snapshots_the_tools_read(
    tenant: Tenant, client: httpx.AsyncClient, platform: Platform, mastodon: tuple[MastodonStandIn, str]
) -> None:
    stand_in, _ = mastodon
    channel = await mastodon_channel(platform, client, tenant, mastodon)
    measured = await channel.published(at=now() - timedelta(days=1), caption="Counted")
    gone = await channel.published(at=now() - timedelta(days=2), caption="Deleted on the instance")
    stand_in.statuses[str(measured.external_post_id)] = {
        "id": measured.external_post_id,
        "favourites_count": 7,
        "reblogs_count": 2,
        "replies_count": 1,
    }

    queued = await tenant.data("refresh_platform_analytics", {})
    assert (queued["postsProcessed"], queued["queued"], queued["errored"]) == (2, 1, 0)
    worker = worker_context(platform, "w1")
    assert await run_jobs(worker) == 1
    assert await run_jobs(worker) == 0

    async with platform.session_factory() as session:
        job = await session.scalar(select(Job).where(Job.job_type == "analytics_refresh"))
    assert job is not None and job.status == "completed"
    assert job.output == {"snapshots": 1, "failed_posts": 1}
    data = await tenant.data("fetch_analytics", {"platform": "mastodon"})
    by_id = {post["id"]: post for post in data["posts"]}
    assert by_id[str(measured.id)]["engagement"] == 10
    assert by_id[str(measured.id)]["views"] == 0  # Mastodon reports no views: counted as 0
    assert by_id[str(gone.id)]["captured_at"] is None


async def test_refresh_counts_posts_of_a_revoked_account_as_errored(
    tenant: Tenant, client: httpx.AsyncClient, platform: Platform, mastodon: tuple[MastodonStandIn, str]
) -> None:
    stand_in, base = mastodon
    async with platform.session_factory() as session, session.begin():
        account, _ = await accounts_service.create(
            session=session,
            settings=platform.settings,
            project_id=tenant.project_id,
            platform="mastodon",
            connector_name="mastodon",
            fields={"instance_url": base, "access_token": stand_in.token},
        )
        account.status = "revoked"
    channel = Channel(platform, client, tenant.project_id, account.id, tenant.account_id, "", "mastodon")
    await channel.published(at=now() - timedelta(days=1))
    data = await tenant.data("refresh_platform_analytics", {})
    assert (data["queued"], data["errored"]) == (0, 1)


def _seed(database_url: str) -> tuple[uuid.UUID, uuid.UUID, uuid.UUID, str]:
    """An account with two projects, a webhook channel on the first and one published post."""

    async def build() -> tuple[uuid.UUID, uuid.UUID, uuid.UUID, str]:
        from toolhost.config import load_settings

        settings = load_settings()
        engine = create_engine(database_url)
        async with create_session_factory(engine)() as session, session.begin():
            owner = await accounts.create_account(session, name="ops", tier="pro", settings=settings)
            project = await accounts.create_project(session, account_id=owner.id, name="one")
            other = await accounts.create_project(session, account_id=owner.id, name="two")
            account, _ = await accounts_service.create(
                session=session,
                settings=settings,
                project_id=project.id,
                platform="linkedin",
                connector_name="webhook",
                fields={"url": "http://127.0.0.1:9/hook"},
            )
            post = Post(
                project_id=project.id,
                account_id=owner.id,
                connected_account_id=account.id,
                platform="linkedin",
                status="published",
                due_at=now(),
                idempotency_key=uuid.uuid4().hex,
                external_post_id="li-1",
                published_at=now() - timedelta(days=1),
            )
            session.add(post)
        await engine.dispose()
        return project.id, other.id, post.id, "li-1"

    return asyncio.run(build())


def _latest(database_url: str, post_id: uuid.UUID) -> metrics.Counters | None:
    async def read() -> metrics.Counters | None:
        engine = create_engine(database_url)
        async with create_session_factory(engine)() as session:
            post = await session.get(Post, post_id)
            assert post is not None
            latest = await metrics.latest_counters(session=session, posts=[post])
        await engine.dispose()
        return latest.get(post_id)

    return asyncio.run(read())


@pytest.fixture
def operator_environment(database_url: str, monkeypatch: pytest.MonkeyPatch) -> str:
    monkeypatch.setenv("TOOLHOST_DATABASE_URL", database_url)
    monkeypatch.setenv("TOOLHOST_ENVIRONMENT", "test")
    monkeypatch.setenv("TOOLHOST_SECRET_KEY", TEST_SECRET)
    monkeypatch.setenv("TOOLHOST_FETCH__ALLOW", '["127.0.0.1"]')
    monkeypatch.setenv("TOOLHOST_FETCH__ALLOW_HTTP", "true")
    return database_url


def test_metrics_import_reads_csv_and_json_and_the_latest_snapshot_wins(
    operator_environment: str, tmp_path: Path
) -> None:
    project_id, _, post_id, external = _seed(operator_environment)
    first = tmp_path / "metrics.csv"
    first.write_text(
        "post_id,captured_at,views,likes,comments,shares\n"
        f"{post_id},2026-01-01T10:00:00Z,100,5,1,0\n"
        f"{post_id},2026-01-02T10:00:00Z,300,9,2,1\n"
    )
    # Through the root command, as an operator types it: `toolhost metrics import FILE --project ID`.
    result = CliRunner().invoke(toolhost_cli.app, ["metrics", "import", str(first), "--project", str(project_id)])
    assert result.exit_code == 0, result.output
    assert "Imported 2 snapshot(s)" in result.output
    latest = _latest(operator_environment, post_id)
    assert latest is not None and (latest.views, latest.engagement) == (300, 12)

    second = tmp_path / "metrics.json"
    second.write_text(json.dumps([{"external_post_id": external, "platform": "linkedin", "views": 500, "likes": 20}]))
    result = CliRunner().invoke(cli.app, ["import", str(second), "--project", str(project_id)])
    assert result.exit_code == 0, result.output
    latest = _latest(operator_environment, post_id)
    assert latest is not None and (latest.views, latest.likes) == (500, 20)


def test_metrics_import_rejects_the_whole_file_on_a_bad_row_or_another_projects_post(
    operator_environment: str, tmp_path: Path
) -> None:
    project_id, other_project_id, post_id, _ = _seed(operator_environment)
    bad = tmp_path / "bad.csv"
    bad.write_text(f"post_id,views,likes\n{post_id},10,1\n{post_id},-4,1\n{uuid.uuid4()},1,1\nnope,1,1\n")
    result = CliRunner().invoke(cli.app, ["import", str(bad), "--project", str(project_id)])
    assert result.exit_code == 1
    assert "row 2: views must be a non-negative whole number" in result.output
    assert "row 3: no published post of this project matches" in result.output
    assert "row 4: post_id is not a UUID" in result.output
    assert _latest(operator_environment, post_id) is None

    good = tmp_path / "good.csv"
    good.write_text(f"post_id,views,likes\n{post_id},10,1\n")
    result = CliRunner().invoke(cli.app, ["import", str(good), "--project", str(other_project_id)])
    assert result.exit_code == 1
    assert "no published post of this project matches" in result.output
    assert _latest(operator_environment, post_id) is None

    for content in ("[1, 2]", "{not json", ""):
        broken = tmp_path / "broken.json"
        broken.write_text(content)
        result = CliRunner().invoke(cli.app, ["import", str(broken), "--project", str(project_id)])
        assert result.exit_code == 1, content
