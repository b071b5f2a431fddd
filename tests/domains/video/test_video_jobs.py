"""generate_video through HTTP, with the media-job poller run directly; the MP4 is opened with PyAV."""

from __future__ import annotations

import asyncio
import base64
import io
import shutil
import threading
import uuid
from pathlib import Path
from typing import Any

import av
import httpx
import pytest
from PIL import Image
from sqlalchemy import func, select

from tests.conftest import Tenant, TenantFactory, settings_for_test, worker_context
from toolhost.config import Settings
from toolhost.domains.content.models import ContentRecord
from toolhost.domains.media.models import MediaObject
from toolhost.domains.video import motion
from toolhost.platform import jobs
from toolhost.platform.jobs import Job, WorkerContext
from toolhost.platform.models import Account
from toolhost.platform.runtime import Platform
from toolhost.platform.worker import claim, run_claimed, run_jobs

HAS_ESPEAK = shutil.which("espeak-ng") is not None
needs_espeak = pytest.mark.skipif(not HAS_ESPEAK, reason="espeak-ng is not installed (apt-get install espeak-ng)")


@pytest.fixture
def settings(database_url: str, tmp_path: Path) -> Settings:
    return settings_for_test(database_url=database_url, media={"root": str(tmp_path / "media")})


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


def png(color: tuple[int, int, int]) -> str:
    buffer = io.BytesIO()
    Image.new("RGB", (400, 300), color).save(buffer, format="PNG")
    return base64.b64encode(buffer.getvalue()).decode()


async def served_video(client: httpx.AsyncClient, status: dict[str, Any]) -> av.container.InputContainer:
    response = await client.get(status["result_url"].removeprefix("http://testserver"))
    assert response.status_code == 200 and response.headers["content-type"].startswith("video/mp4")
    return av.open(io.BytesIO(response.content), mode="r")


@pytest.mark.slow
async def test_a_video_job_completes_with_a_signed_url_serving_an_h264_mp4_at_30_fps(
    tenant: Tenant, platform: Platform, client: httpx.AsyncClient
) -> None:
    before = await balance(platform, tenant)
    response = await tenant.call(
        "generate_video",
        {
            "prompt": "Launch day: our new planner is live. Plan a week in ten minutes.",
            "duration": 3,
            "aspect_ratio": "9:16",
        },
    )
    body = response.json()
    assert response.status_code == 200 and not body["isError"], body
    queued = body["structuredContent"]
    assert queued["jobId"] == queued["taskId"] == queued["asyncJobId"]
    assert queued["model"] == "builtin" and queued["creditsDeducted"] == 16
    assert "check_status" in body["content"][0]["text"]
    assert await balance(platform, tenant) == before - 16

    assert await run_jobs(worker(platform)) == 1
    done = await tenant.data("check_status", {"job_id": queued["jobId"]})
    assert done["status"] == "completed" and done["job_type"] == "video" and done["billing_status"] == "charged"
    assert done["r2_key"].startswith(f"projects/{tenant.project_id}/video/") and done["r2_key"].endswith(".mp4")
    with await served_video(client, done) as container:
        stream = container.streams.video[0]
        assert stream.codec_context.name == "h264"
        assert (stream.width, stream.height) == (1080, 1920) and stream.average_rate == 30
        assert stream.frames == 90 and container.duration is not None
        assert abs(container.duration / av.time_base - 3.0) < 0.1
        assert not container.streams.audio
    assert await balance(platform, tenant) == before - 16
    async with platform.session_factory() as session:
        query = select(ContentRecord).where(ContentRecord.project_id == tenant.project_id)
        records = list(await session.scalars(query))
    assert [(record.kind, record.model) for record in records] == [("video", "builtin")]
    data = records[0].data
    assert data is not None and data["job_id"] == queued["jobId"] and data["r2_key"] == done["r2_key"]
    assert records[0].prompt.startswith("Launch day")


async def test_the_cost_is_ten_plus_two_per_started_second(tenant: Tenant) -> None:
    short = await tenant.data("generate_video", {"prompt": "Hello", "duration": 3.2})
    assert short["creditsDeducted"] == 10 + 2 * 4
    default = await tenant.data("generate_video", {"prompt": "Hello"})
    assert default["creditsDeducted"] == 10 + 2 * 5


@pytest.mark.slow
async def test_the_start_frame_zooms_and_cross_fades_to_the_end_frame(
    tenant: Tenant, platform: Platform, client: httpx.AsyncClient
) -> None:
    red = await tenant.data("upload_media", {"file_data": png((220, 0, 0)), "content_type": "image/png"})
    green = await tenant.data("upload_media", {"file_data": png((0, 220, 0)), "content_type": "image/png"})
    job_id = (
        await tenant.data(
            "generate_video",
            {
                "prompt": "Two frames",
                "duration": 3,
                "aspect_ratio": "1:1",
                "image_url": red["r2_key"],
                "end_frame_url": green["signed_url"],
            },
        )
    )["jobId"]
    await run_jobs(worker(platform))
    done = await tenant.data("check_status", {"job_id": job_id})
    with await served_video(client, done) as container:
        frames = [frame.to_image() for frame in container.decode(video=0)]
    assert len(frames) == 90 and frames[0].size == (1080, 1080)
    # A corner away from the caption: the start frame darkened by 40 %, then the end frame.
    first_red, first_green, _ = frames[0].getpixel((10, 10))
    last_red, last_green, _ = frames[-1].getpixel((10, 10))
    assert first_red > 100 and first_green < 30
    assert last_green > 100 and last_red < 30


async def test_cancelling_mid_render_stops_between_frames_stores_nothing_and_refunds_once(
    tenant: Tenant, platform: Platform, monkeypatch: pytest.MonkeyPatch
) -> None:
    reached, resume = threading.Event(), threading.Event()
    frames_rendered = [0]
    runs: list[jobs.JobRun] = []
    checkpoint = jobs.JobRun.checkpoint

    def pausing_checkpoint(self: jobs.JobRun) -> None:
        # The encoder thread calls the checkpoint before each frame: pause it at frame 30 for the cancel.
        if threading.current_thread() is not threading.main_thread():
            frames_rendered[0] += 1
            if frames_rendered[0] == 30:
                runs.append(self)
                reached.set()
                resume.wait(10)
        checkpoint(self)

    monkeypatch.setattr(jobs.JobRun, "checkpoint", pausing_checkpoint)
    before = await balance(platform, tenant)
    job_id = (await tenant.data("generate_video", {"prompt": "A long one", "duration": 10}))["jobId"]
    context = worker(platform)
    claimed = await claim(context, "video", limit=1)
    assert len(claimed) == 1
    running = asyncio.create_task(run_claimed(context, claimed))
    assert await asyncio.to_thread(reached.wait, 60)  # a generous bound: the render starts slowly on a busy machine
    cancelled = await tenant.data("cancel_async_job", {"job_id": job_id, "confirm": True})
    assert cancelled["refunded_credits"] == 30
    # The worker learns of the cancel at its next heartbeat; let it, then let the render go on.
    assert await asyncio.to_thread(runs[0].stopped.wait, 20)
    resume.set()
    await asyncio.wait_for(running, 20)
    assert frames_rendered[0] == 30  # the checkpoint before frame 30 stopped it, not the end (300 frames)
    row = await job_row(platform, job_id)
    assert row.status == "cancelled" and row.output == {} and row.billing_status == "refunded"
    assert await balance(platform, tenant) == before
    async with platform.session_factory() as session:
        assert await session.scalar(select(func.count()).select_from(MediaObject)) == 0


async def test_a_failed_render_is_refunded_exactly_once(
    tenant: Tenant, platform: Platform, monkeypatch: pytest.MonkeyPatch
) -> None:
    def broken(*args: Any, **kwargs: Any) -> Any:
        raise RuntimeError("encoder broke")

    monkeypatch.setattr(motion, "render", broken)
    before = await balance(platform, tenant)
    job_id = (await tenant.data("generate_video", {"prompt": "Hello", "duration": 3}))["jobId"]
    await run_jobs(worker(platform))
    status = await tenant.data("check_status", {"job_id": job_id})
    assert status["status"] == "failed" and status["failure_reason"] == "generation_failed"
    assert status["billing_status"] == "refunded" and status["credits_refunded"] == 16
    async with platform.session_factory() as session, session.begin():
        job = await session.get(Job, uuid.UUID(job_id))
        assert job is not None
        assert await jobs.refund(session, job) == 0
    assert await balance(platform, tenant) == before


async def test_another_tenants_video_job_is_not_found(
    tenant: Tenant, make_tenant: TenantFactory, platform: Platform
) -> None:
    job_id = (await tenant.data("generate_video", {"prompt": "Mine", "duration": 3}))["jobId"]
    other = await make_tenant()
    for tool_name, arguments in (
        ("check_status", {"job_id": job_id}),
        ("cancel_async_job", {"job_id": job_id, "confirm": True}),
    ):
        response = await other.call(tool_name, arguments)
        assert response.status_code == 404
    assert (await job_row(platform, job_id)).status == "pending"


@pytest.mark.parametrize(
    ("arguments", "path"),
    [
        ({"prompt": "Hi", "duration": 2}, "duration"),
        ({"prompt": "Hi", "duration": 31}, "duration"),
        ({"prompt": "Hi", "aspect_ratio": "4:3"}, "aspect_ratio"),
        ({"prompt": "x" * 2501}, "prompt"),
        ({"prompt": "Hi", "model": "sora"}, "model"),
        ({"prompt": "Hi", "end_frame_url": "http://10.0.0.7/end.png"}, None),
    ],
)
async def test_bad_input_is_refused_before_any_spend(
    tenant: Tenant, platform: Platform, arguments: dict[str, Any], path: str | None
) -> None:
    before = await balance(platform, tenant)
    body = (await tenant.call("generate_video", arguments)).json()
    assert body["error"]["error_type"] == "validation_error", body
    if path is not None:
        assert path in [error["path"] for error in body["error"]["field_errors"]]
    if path == "model":
        assert body["error"]["available_models"] == ["builtin"]
    assert await balance(platform, tenant) == before


async def test_audio_without_a_voice_model_names_the_missing_binary(
    tenant: Tenant, platform: Platform, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(platform.settings.voice, "espeak_binary", "/nonexistent/espeak-ng")
    before = await balance(platform, tenant)
    body = (await tenant.call("generate_video", {"prompt": "Hi", "enable_audio": True})).json()
    assert body["error"]["error_type"] == "validation_error"
    assert "espeak-ng" in body["error"]["message"] and "apt-get install espeak-ng" in body["error"]["message"]
    assert await balance(platform, tenant) == before


@needs_espeak
async def test_enable_audio_adds_a_narration_track(
    tenant: Tenant, platform: Platform, client: httpx.AsyncClient
) -> None:
    job_id = (
        await tenant.data(
            "generate_video",
            {"prompt": "Ship faster. Meet less.", "duration": 3, "enable_audio": True, "aspect_ratio": "1:1"},
        )
    )["jobId"]
    await run_jobs(worker(platform))
    done = await tenant.data("check_status", {"job_id": job_id})
    assert done["status"] == "completed", done
    with await served_video(client, done) as container:
        audio = container.streams.audio[0]
        assert audio.codec_context.name == "aac"
        samples = sum(frame.samples for frame in container.decode(audio=0))
    assert 0 < samples <= 3.1 * audio.rate
