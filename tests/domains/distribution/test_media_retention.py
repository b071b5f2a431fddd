"""Media retention: expired uploads and job outputs go unless a post, plan or brand profile uses them, and
files no row names go once they are a day old."""

from __future__ import annotations

import copy
import os
import time
import uuid
from datetime import UTC, datetime, timedelta

from sqlalchemy import select, update

from tests.conftest import Tenant, worker_context
from tests.domains.distribution.conftest import connect_webhook
from tests.domains.distribution.test_connectors import png_bytes, upload
from tests.providers.text.brands import BRANDS
from toolhost.catalog import POLLERS
from toolhost.domains.media import retention
from toolhost.domains.media import service as media_service
from toolhost.domains.media import storage as media_storage
from toolhost.domains.media.models import MediaObject
from toolhost.platform.jobs import Job
from toolhost.platform.runtime import Platform
from toolhost.providers.media_store import LocalMediaStore


async def age(platform: Platform, keys: list[str], days: int) -> None:
    async with platform.session_factory() as session, session.begin():
        await session.execute(
            update(MediaObject)
            .where(MediaObject.key.in_(keys))
            .values(created_at=datetime.now(UTC) - timedelta(days=days))
        )


async def stored_keys(platform: Platform) -> set[str]:
    async with platform.session_factory() as session:
        return set(await session.scalars(select(MediaObject.key)))


async def completed_job_output(platform: Platform, tenant: Tenant) -> str:
    key = await job_output(platform, tenant, status="completed", hours_old=0)
    async with platform.session_factory() as session, session.begin():
        await media_storage.complete_job_output(session=session, key=key)
    return key


async def test_expired_unreferenced_media_is_deleted_and_referenced_media_kept(
    tenant: Tenant, platform: Platform, receiver: tuple[object, str]
) -> None:
    await connect_webhook(platform, tenant.project_id, receiver[1])
    upload_alone, in_post, in_plan, in_brand, recent = [
        await upload(tenant, png_bytes(), "image/png") for _ in range(5)
    ]
    job_output = await completed_job_output(platform, tenant)
    await tenant.data("schedule_post", {"caption": "Keeps its picture", "platforms": ["twitter"], "r2_key": in_post})
    await tenant.data(
        "save_content_plan",
        {
            "plan": {
                "topic": "Spring",
                "posts": [{"id": "p1", "caption": "Hi", "media_url": "r2://" + in_plan}],
            }
        },
    )
    brand = copy.deepcopy(BRANDS["relay"])
    brand["logoUrl"] = (await tenant.data("get_media_url", {"r2_key": in_brand}))["signed_url"]
    await tenant.data("save_brand_profile", {"brand_context": brand})
    expired = [upload_alone, in_post, in_plan, in_brand, job_output]
    await age(platform, expired, days=91)
    await age(platform, [recent], days=89)

    worker = worker_context(platform, f"w-{uuid.uuid4()}")
    assert await retention.sweep_expired_media(worker) == 2

    kept = {in_post, in_plan, in_brand, recent}
    assert await stored_keys(platform) == kept
    store = media_service.store(platform.settings)
    for key in kept:
        assert await store.exists(key)
    assert not await store.exists(upload_alone)
    assert not await store.exists(job_output)
    response = await tenant.call("get_media_url", {"r2_key": upload_alone})
    assert response.json()["structuredContent"]["error"]["error_type"] == "not_found"

    # One sweep per interval per worker: the next expiry waits for the next sweep.
    await age(platform, [recent], days=91)
    assert await retention.sweep_expired_media(worker) == 0
    assert await retention.sweep(worker) == 1
    assert not await store.exists(recent)


def backdate(platform: Platform, key: str, *, hours_old: float) -> None:
    store = media_service.store(platform.settings)
    assert isinstance(store, LocalMediaStore)
    written = time.time() - hours_old * 3600
    os.utime(store.path(key), (written, written))


async def orphan(platform: Platform, tenant: Tenant, *, hours_old: float) -> str:
    """A file in the store that no row names (its row went and the store's deletion failed), of that age."""
    key = media_storage.new_key(
        project_id=tenant.project_id, account_id=tenant.account_id, kind="image", content_type="image/png"
    )
    await media_service.store(platform.settings).put(key, png_bytes())
    backdate(platform, key, hours_old=hours_old)
    return key


async def test_files_no_row_names_are_swept_once_past_the_grace_period(tenant: Tenant, platform: Platform) -> None:
    store = media_service.store(platform.settings)
    assert isinstance(store, LocalMediaStore)
    named = await upload(tenant, png_bytes(), "image/png")
    old_named = time.time() - 48 * 3600
    os.utime(store.path(named), (old_named, old_named))
    abandoned = await orphan(platform, tenant, hours_old=25)
    recent = await orphan(platform, tenant, hours_old=23)  # inside the day of grace
    directory = store.path(abandoned).parent
    draft = directory / ".upload-left-by-a-crash"
    draft.write_bytes(b"half a file")
    os.utime(draft, (old_named, old_named))
    foreign = directory / "notes.txt"  # not a media key: not toolhost's to delete
    foreign.write_text("kept")
    os.utime(foreign, (old_named, old_named))

    worker = worker_context(platform, f"w-{uuid.uuid4()}")
    assert await retention.sweep_expired_media(worker) == 1
    assert not await store.exists(abandoned) and not draft.exists()
    assert await store.exists(named) and await store.exists(recent) and foreign.exists()
    assert await stored_keys(platform) == {named}


async def job_output(platform: Platform, tenant: Tenant, *, status: str, hours_old: float) -> str:
    """The output a worker wrote for a job of that status before it died, short of the job's completion."""
    async with platform.session_factory() as session, session.begin():
        job = Job(
            account_id=tenant.account_id,
            project_id=tenant.project_id,
            job_type="image",
            status=status,
            input={},
            output={},
        )
        session.add(job)
    stored = await media_storage.put_job_output(
        session_factory=platform.session_factory,
        settings=platform.settings,
        job_id=job.id,
        account_id=tenant.account_id,
        project_id=tenant.project_id,
        data=png_bytes(),
        content_type="image/png",
        kind="image",
    )
    async with platform.session_factory() as session, session.begin():
        await session.execute(
            update(MediaObject)
            .where(MediaObject.key == stored.key)
            .values(created_at=datetime.now(UTC) - timedelta(hours=hours_old))
        )
    return stored.key


async def test_a_job_output_its_job_will_not_complete_with_is_swept_with_its_file_after_the_grace(
    tenant: Tenant, platform: Platform
) -> None:
    store = media_service.store(platform.settings)
    failed = await job_output(platform, tenant, status="failed", hours_old=25)
    completed_with_another = await job_output(platform, tenant, status="completed", hours_old=25)
    still_running = await job_output(platform, tenant, status="processing", hours_old=25)
    recent = await job_output(platform, tenant, status="failed", hours_old=23)
    for key in (failed, completed_with_another, still_running, recent):
        backdate(platform, key, hours_old=25)
        assert await store.exists(key)

    worker = worker_context(platform, f"w-{uuid.uuid4()}")
    assert await retention.sweep_expired_media(worker) == 2
    assert await stored_keys(platform) == {still_running, recent}
    assert not await store.exists(failed) and not await store.exists(completed_with_another)
    assert await store.exists(still_running) and await store.exists(recent)


async def test_a_job_output_awaiting_its_completion_cannot_be_used(tenant: Tenant, platform: Platform) -> None:
    key = await job_output(platform, tenant, status="processing", hours_old=0)
    body = (await tenant.call("get_media_url", {"r2_key": key})).json()
    assert body["isError"] and body["error"]["error_type"] == "not_found"


def test_the_worker_runs_the_retention_poller() -> None:
    assert "toolhost.domains.media.retention.sweep_expired_media" in POLLERS
