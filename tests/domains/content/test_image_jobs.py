"""generate_image, check_status and cancel_async_job through HTTP, with the media-job poller run directly."""

from __future__ import annotations

import base64
import io
import threading
import uuid
from collections.abc import Iterator
from datetime import timedelta
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any, cast

import httpx
import pytest
from PIL import Image
from sqlalchemy import func, select, update

from tests.conftest import Tenant, TenantFactory, settings_for_test, worker_context
from tests.local_http import serving
from toolhost.config import Settings
from toolhost.db.base import utcnow
from toolhost.domains.content import images
from toolhost.domains.content.models import ContentRecord
from toolhost.domains.media import service as media_service
from toolhost.domains.media.models import MediaObject
from toolhost.platform import jobs
from toolhost.platform.jobs import Job, WorkerContext
from toolhost.platform.models import Account
from toolhost.platform.runtime import Platform
from toolhost.platform.worker import claim, load_job_types, load_pollers, reap_expired, run_claimed, run_jobs
from toolhost.providers.media_store import LocalMediaStore


def png_bytes(size: tuple[int, int], color: tuple[int, int, int]) -> bytes:
    buffer = io.BytesIO()
    Image.new("RGB", size, color).save(buffer, format="PNG")
    return buffer.getvalue()


@pytest.fixture
def reference_server() -> Iterator[str]:
    """A local site serving one PNG (the external reference image)."""
    photo, logo = png_bytes((640, 480), (200, 40, 40)), png_bytes((200, 100), (255, 0, 255))

    class Handler(BaseHTTPRequestHandler):
        def do_GET(self) -> None:
            body = logo if self.path == "/logo.png" else photo
            self.send_response(200)
            self.send_header("Content-Type", "image/png")
            self.send_header("Content-Length", str(len(body)))
            self.end_headers()
            self.wfile.write(body)

        def log_message(self, format: str, *args: object) -> None:
            return

    server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
    with serving(server):
        yield f"http://127.0.0.1:{server.server_address[1]}/photo.png"


@pytest.fixture
def settings(database_url: str, tmp_path: Path) -> Settings:
    """Settings with the local reference server allowlisted for the fetcher."""
    return settings_for_test(
        database_url=database_url,
        media={"root": str(tmp_path / "media")},
        fetch={"allow": ["127.0.0.1"], "allow_http": True},
    )


def worker(platform: Platform, name: str = "test-worker") -> WorkerContext:
    return worker_context(platform, name)


async def balance(platform: Platform, tenant: Tenant) -> int:
    async with platform.session_factory() as session:
        return int(await session.scalar(select(Account.credit_balance).where(Account.id == tenant.account_id)) or 0)


async def job_row(platform: Platform, job_id: str) -> Job:
    async with platform.session_factory() as session:
        job = await session.get(Job, uuid.UUID(job_id))
        assert job is not None
        return job


async def enqueue(tenant: Tenant, **arguments: Any) -> str:
    data = await tenant.data(
        "generate_image", {"prompt": "Revenue grew 42% after switching to async standups", **arguments}
    )
    assert data["jobId"] == data["taskId"] == data["asyncJobId"]
    return str(data["jobId"])


async def test_an_image_job_completes_with_a_signed_url_serving_a_png_of_the_requested_size(
    tenant: Tenant, platform: Platform, client: httpx.AsyncClient
) -> None:
    before = await balance(platform, tenant)
    response = await tenant.call(
        "generate_image", {"prompt": "5 tips for calmer launches: plan early, ship small", "aspect_ratio": "16:9"}
    )
    body = response.json()
    assert response.status_code == 200 and not body["isError"], body
    data = body["structuredContent"]
    assert data["model"] == "builtin" and data["creditsDeducted"] == 4 and data["projectId"] == str(tenant.project_id)
    assert "check_status" in body["content"][0]["text"]
    assert await balance(platform, tenant) == before - 4

    pending = await tenant.data("check_status", {"job_id": data["jobId"], "response_format": "json"})
    assert pending["status"] == "pending" and pending["progress"] is None
    assert pending["billing_status"] == "reserved" and pending["credits_reserved"] == 4

    assert await run_jobs(worker(platform)) == 1
    assert await run_jobs(worker(platform)) == 0

    done = await tenant.data("check_status", {"job_id": data["jobId"]})
    assert done["status"] == "completed" and done["progress"] == 100
    assert done["billing_status"] == "charged" and done["credits_charged"] == 4 and done["credits_refunded"] == 0
    assert done["model_requested"] == done["model_delivered"] == "builtin" and done["error"] is None
    assert done["r2_key"].startswith(f"projects/{tenant.project_id}/image/") and done["r2_key"].endswith(".png")
    assert done["r2_keys"] == [done["r2_key"]] and done["resultUrl"] == done["result_url"]
    assert done["jobId"] == done["id"] == data["jobId"] and done["jobType"] == "image"
    served = await client.get(done["result_url"].removeprefix("http://testserver"))
    assert served.status_code == 200
    image = Image.open(io.BytesIO(served.content))
    assert image.format == "PNG" and image.size == (1920, 1080)
    assert await balance(platform, tenant) == before - 4
    async with platform.session_factory() as session:
        kinds = list(
            await session.scalars(select(ContentRecord.kind).where(ContentRecord.project_id == tenant.project_id))
        )
    assert kinds == ["image"]


async def test_the_text_summary_names_the_status_files_and_billing(tenant: Tenant, platform: Platform) -> None:
    job_id = await enqueue(tenant, aspect_ratio="9:16")
    await run_jobs(worker(platform))
    text = (await tenant.call("check_status", {"job_id": job_id})).json()["content"][0]["text"]
    assert "completed" in text and ".png" in text and "Billing: charged (charged 4, refunded 0)" in text
    assert f"projects/{tenant.project_id}" not in text


async def test_a_reference_image_from_the_media_store_or_a_site_is_cover_cropped_under_the_text(
    tenant: Tenant, platform: Platform, client: httpx.AsyncClient, reference_server: str
) -> None:
    upload = await tenant.data(
        "upload_media",
        {"file_data": base64.b64encode(png_bytes((300, 900), (10, 200, 10))).decode(), "content_type": "image/png"},
    )
    by_key = await enqueue(tenant, image_url=upload["r2_key"], aspect_ratio="1:1")
    by_signed_url = await enqueue(tenant, image_url=upload["signed_url"], aspect_ratio="4:3")
    by_site = await enqueue(tenant, image_url=reference_server, aspect_ratio="3:4")
    assert await run_jobs(worker(platform)) == 3
    expected = {by_key: ((1080, 1080), "green"), by_signed_url: ((1440, 1080), "green"), by_site: ((1080, 1440), "red")}
    for job_id, (size, hue) in expected.items():
        done = await tenant.data("check_status", {"job_id": job_id})
        assert done["status"] == "completed", done
        served = await client.get(done["result_url"].removeprefix("http://testserver"))
        image = Image.open(io.BytesIO(served.content)).convert("RGB")
        assert image.size == size
        # A corner away from text and logo shows the reference darkened by 40 %.
        red, green, _ = cast(tuple[int, int, int], image.getpixel((5, image.height // 2 + 40)))
        assert (red, green) == ((6, 120) if hue == "green" else (120, 24))


async def test_a_reference_at_a_private_address_or_another_tenants_key_is_refused_before_any_spend(
    tenant: Tenant, make_tenant: TenantFactory, platform: Platform
) -> None:
    other = await make_tenant()
    upload = await other.data(
        "upload_media",
        {"file_data": base64.b64encode(png_bytes((10, 10), (1, 2, 3))).decode(), "content_type": "image/png"},
    )
    before = await balance(platform, tenant)
    private = (await tenant.call("generate_image", {"prompt": "Hello", "image_url": "http://10.0.0.7/a.png"})).json()
    assert private["error"]["error_type"] == "validation_error" and "private" in private["error"]["message"]
    foreign = (await tenant.call("generate_image", {"prompt": "Hello", "image_url": upload["r2_key"]})).json()
    assert foreign["error"]["error_type"] == "not_found"
    assert await balance(platform, tenant) == before


async def test_an_unconfigured_model_is_a_validation_error_listing_the_available_ones(tenant: Tenant) -> None:
    body = (await tenant.call("generate_image", {"prompt": "Hello", "model": "dall-e-3"})).json()
    assert body["error"]["error_type"] == "validation_error"
    assert body["error"]["available_models"] == ["builtin"]


async def test_cancelling_a_pending_job_refunds_once_and_the_worker_never_runs_it(
    tenant: Tenant, platform: Platform
) -> None:
    before = await balance(platform, tenant)
    job_id = await enqueue(tenant)
    first = await tenant.data("cancel_async_job", {"job_id": job_id, "confirm": True})
    assert first["status"] == "cancelled" and first["refunded_credits"] == 4 and first["refund_status"] == "refunded"
    assert first.get("already_cancelled") is None
    again = await tenant.data("cancel_async_job", {"job_id": job_id, "confirm": True})
    assert again["already_cancelled"] is True and again["refunded_credits"] == 4
    assert await balance(platform, tenant) == before
    assert await run_jobs(worker(platform)) == 0
    status = await tenant.data("check_status", {"job_id": job_id})
    assert status["status"] == "cancelled" and status["error"] == "Cancelled by user."
    assert status["failure_reason"] == "cancelled_by_user" and status["billing_status"] == "refunded"
    assert status["credits_refunded"] == 4 and status["credits_charged"] == 0


async def test_cancelling_a_processing_job_discards_its_output(tenant: Tenant, platform: Platform) -> None:
    before = await balance(platform, tenant)
    job_id = await enqueue(tenant)
    context = worker(platform)
    claimed = await claim(context, "image", limit=1)
    assert [str(run.job_id) for run in claimed] == [job_id]
    assert (await job_row(platform, job_id)).status == "processing"
    cancelled = await tenant.data("cancel_async_job", {"job_id": job_id, "confirm": True})
    assert cancelled["refunded_credits"] == 4
    await run_claimed(context, claimed)
    row = await job_row(platform, job_id)
    assert row.status == "cancelled" and row.output == {} and row.billing_status == "refunded"
    assert await balance(platform, tenant) == before
    async with platform.session_factory() as session:
        assert await session.scalar(select(func.count()).select_from(ContentRecord)) == 0
        assert await session.scalar(select(func.count()).select_from(MediaObject)) == 0
    store = media_service.store(platform.settings)
    assert isinstance(store, LocalMediaStore)
    assert [path for path in store.root.rglob("*") if path.is_file()] == []


async def test_a_job_output_is_written_only_after_its_row_committed(
    tenant: Tenant, platform: Platform, monkeypatch: pytest.MonkeyPatch
) -> None:
    job_id = await enqueue(tenant)
    rows_at_write: list[bool] = []
    write = LocalMediaStore.put

    async def checked_write(store: LocalMediaStore, key: str, data: bytes) -> None:
        async with platform.session_factory() as session:
            rows_at_write.append(await session.scalar(select(MediaObject).where(MediaObject.key == key)) is not None)
        await write(store, key, data)

    monkeypatch.setattr(LocalMediaStore, "put", checked_write)
    await run_jobs(worker(platform))
    assert rows_at_write == [True]
    status = await tenant.data("check_status", {"job_id": job_id})
    assert status["status"] == "completed"
    assert (await tenant.data("get_media_url", {"r2_key": status["r2_key"]}))["signed_url"]


async def test_a_finished_job_cannot_be_cancelled(tenant: Tenant, platform: Platform) -> None:
    job_id = await enqueue(tenant)
    await run_jobs(worker(platform))
    body = (await tenant.call("cancel_async_job", {"job_id": job_id, "confirm": True})).json()
    assert body["error"]["error_type"] == "conflict" and body["error"]["current_status"] == "completed"
    assert (await job_row(platform, job_id)).billing_status == "charged"


async def test_a_failed_render_is_refunded_exactly_once(
    tenant: Tenant, platform: Platform, monkeypatch: pytest.MonkeyPatch
) -> None:
    def broken(*args: Any, **kwargs: Any) -> bytes:
        raise RuntimeError("renderer broke")

    monkeypatch.setattr(images, "render", broken)
    before = await balance(platform, tenant)
    job_id = await enqueue(tenant)
    await run_jobs(worker(platform))
    status = await tenant.data("check_status", {"job_id": job_id})
    assert status["status"] == "failed" and status["failure_reason"] == "generation_failed"
    assert status["error"] == "Generation failed. Retry or choose another model."
    assert status["billing_status"] == "refunded" and status["credits_refunded"] == 4
    conflict = (await tenant.call("cancel_async_job", {"job_id": job_id, "confirm": True})).json()
    assert conflict["error"]["current_status"] == "failed"
    async with platform.session_factory() as session, session.begin():
        job = await session.get(Job, uuid.UUID(job_id))
        assert job is not None
        assert await jobs.refund(session, job) == 0
    assert await balance(platform, tenant) == before


async def test_a_job_past_its_time_limit_fails_with_timeout_and_is_refunded(
    tenant: Tenant, platform: Platform, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setitem(platform.settings.jobs.timeouts, "image", 0.05)

    def slow(*args: Any, checkpoint: Any, **kwargs: Any) -> bytes:
        while True:  # a renderer that never ends on its own; the checkpoint stops it
            checkpoint()
            threading.Event().wait(0.01)

    monkeypatch.setattr(images, "render", slow)
    before = await balance(platform, tenant)
    job_id = await enqueue(tenant)
    await run_jobs(worker(platform))
    status = await tenant.data("check_status", {"job_id": job_id})
    assert status["status"] == "failed" and status["failure_reason"] == "timeout"
    assert status["billing_status"] == "refunded"
    assert await balance(platform, tenant) == before


async def test_an_expired_lease_returns_the_job_to_pending_and_the_third_loss_fails_it(
    tenant: Tenant, platform: Platform
) -> None:
    before = await balance(platform, tenant)
    job_id = await enqueue(tenant)
    for attempt in (1, 2, 3):
        [claimed] = await claim(worker(platform, f"lost-{attempt}"), "image", limit=1)
        async with platform.session_factory() as session, session.begin():
            await session.execute(
                update(Job).where(Job.id == claimed.job_id).values(lease_expires_at=utcnow() - timedelta(seconds=1))
            )
        await reap_expired(worker(platform))
        row = await job_row(platform, job_id)
        assert row.attempt == attempt
        assert row.status == ("pending" if attempt < 3 else "failed")
    row = await job_row(platform, job_id)
    assert row.failure_reason == "worker_lost" and row.billing_status == "refunded"
    assert await balance(platform, tenant) == before


async def test_another_tenants_job_is_not_found(tenant: Tenant, make_tenant: TenantFactory, platform: Platform) -> None:
    job_id = await enqueue(tenant)
    other = await make_tenant()
    for tool_name, arguments in (
        ("check_status", {"job_id": job_id}),
        ("cancel_async_job", {"job_id": job_id, "confirm": True}),
    ):
        response = await other.call(tool_name, arguments)
        assert response.status_code == 404
        assert response.json()["error"]["message"] == f"No job found with ID {job_id}"
    assert (await job_row(platform, job_id)).status == "pending"


async def test_a_malformed_job_id_is_a_validation_error_and_an_unknown_one_not_found(tenant: Tenant) -> None:
    bad = await tenant.call("check_status", {"job_id": "../etc/passwd"})
    assert bad.status_code == 400
    assert bad.json()["error"]["field_errors"] == [{"path": "job_id", "message": "Invalid job_id format."}]
    unknown = await tenant.call("check_status", {"job_id": "task_123"})
    assert unknown.status_code == 404
    not_uuid = await tenant.call("cancel_async_job", {"job_id": "task_123", "confirm": True})
    assert not_uuid.status_code == 400
    unconfirmed = await tenant.call("cancel_async_job", {"job_id": str(uuid.uuid4()), "confirm": "true"})
    assert unconfirmed.status_code == 400


async def test_the_brand_palette_and_logo_shape_the_graphic(
    tenant: Tenant, platform: Platform, client: httpx.AsyncClient, reference_server: str
) -> None:
    logo_url = reference_server.replace("/photo.png", "/logo.png")
    profile = {
        "brandName": "Ledgerly",
        "colorPalette": {"primary": "#1f4e79", "secondary": "#0b1f33", "accent": "#f2a900"},
        "typography": {"headingFont": "Fraunces", "bodyFont": "Inter"},
        "logoUrl": logo_url,
    }
    await tenant.data("save_brand_profile", {"brand_context": profile})
    job_id = await enqueue(tenant, aspect_ratio="1:1")
    await run_jobs(worker(platform))
    done = await tenant.data("check_status", {"job_id": job_id})
    served = await client.get(done["result_url"].removeprefix("http://testserver"))
    image = Image.open(io.BytesIO(served.content)).convert("RGB")
    assert image.getpixel((0, 0)) == (0x1F, 0x4E, 0x79)  # the gradient starts at the primary colour
    colours = {colour for _, colour in image.getcolors(maxcolors=1_000_000) or []}
    assert (255, 0, 255) in colours  # the logo
    assert (0xF2, 0xA9, 0x00) in colours  # the figure and emphasis words in the accent colour


async def test_an_account_at_its_concurrency_limit_waits_while_others_run(
    tenant: Tenant, make_tenant: TenantFactory, platform: Platform, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(platform.settings.jobs, "per_account_concurrency", 1)
    first, second = await enqueue(tenant), await enqueue(tenant)
    other = await make_tenant()
    elsewhere = await enqueue(other)
    claimed = await claim(worker(platform, "a"), "image", limit=1)
    assert [str(run.job_id) for run in claimed] == [first]
    following = await claim(worker(platform, "b"), "image", limit=1)
    assert [str(run.job_id) for run in following] == [elsewhere]
    assert await claim(worker(platform, "c"), "image", limit=1) == []
    assert (await job_row(platform, second)).status == "pending"


def test_the_worker_loop_runs_the_job_machine_with_the_media_job_types() -> None:
    from toolhost.catalog import JOB_TYPES, POLLERS

    assert run_jobs in load_pollers(POLLERS)
    assert {"image", "video", "voiceover"} <= set(load_job_types(JOB_TYPES))
