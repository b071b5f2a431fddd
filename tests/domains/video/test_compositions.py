"""The video module's built-in compositions through HTTP (CATALOG.md §4), with the job poller run directly.

Renders are kept short (a one-second storyboard) so the suite stays fast; MP4s are opened with PyAV, GIFs
with Pillow.
"""

from __future__ import annotations

import asyncio
import base64
import io
import json
import math
import threading
import uuid
import wave
from pathlib import Path
from typing import Any, cast

import av
import httpx
import pytest
from PIL import Image, ImageSequence
from sqlalchemy import select

from tests.conftest import Tenant, TenantFactory, settings_for_test, worker_context
from toolhost.config import Settings
from toolhost.domains.video import render, scenes
from toolhost.domains.video.compositions import COMPOSITIONS
from toolhost.platform import jobs
from toolhost.platform.jobs import Job, WorkerContext
from toolhost.platform.models import Account
from toolhost.platform.runtime import Platform
from toolhost.providers import graphics

ONE_SECOND = json.dumps({"title": "Short", "frames": [{"frameNumber": 1, "duration": 1, "caption": "Hello"}]})


@pytest.fixture
def settings(database_url: str, tmp_path: Path) -> Settings:
    return settings_for_test(
        database_url=database_url, media={"root": str(tmp_path / "media")}, video={"poll_seconds": 0.02}
    )


def worker(platform: Platform) -> WorkerContext:
    return worker_context(platform, "test")


async def balance(platform: Platform, tenant: Tenant) -> int:
    async with platform.session_factory() as session:
        return int(await session.scalar(select(Account.credit_balance).where(Account.id == tenant.account_id)) or 0)


async def served(client: httpx.AsyncClient, url: str) -> bytes:
    response = await client.get(url.removeprefix("http://testserver"))
    assert response.status_code == 200
    return response.content


def png(color: tuple[int, int, int]) -> str:
    buffer = io.BytesIO()
    Image.new("RGB", (320, 240), color).save(buffer, format="PNG")
    return base64.b64encode(buffer.getvalue()).decode()


async def demo_with_poller(tenant: Tenant, platform: Platform, arguments: dict[str, Any]) -> httpx.Response:
    """Calls render_demo_video while the poller runs the job it queued (the call waits for it)."""
    call = asyncio.create_task(tenant.call("render_demo_video", arguments))
    ran = 0
    async with asyncio.timeout(60):
        while ran == 0 and not call.done():
            ran = await jobs.run_jobs(worker(platform))
            await asyncio.sleep(0)  # lets the call reach its enqueue before the next claim
    return await call


async def test_list_compositions_gives_the_fifteen_with_catalogue_lengths_and_schemas(tenant: Tenant) -> None:
    response = await tenant.call("list_compositions", {})
    body = response.json()
    payload = body["structuredContent"]
    assert payload["count"] == 15 == len(payload["compositions"])
    by_id = {item["id"]: item for item in payload["compositions"]}
    expected = {
        "CaptionedClip": (1080, 1920, 300, False),
        "CaptionedClip-Square": (1080, 1080, 300, False),
        "StoryboardVideo-Horizontal": (1920, 1080, 300, True),
        "YouTubeLongForm": (1920, 1080, 1800, True),
        "TwitterAd": (1920, 1080, 450, False),
        "ProductAd": (1920, 1080, 2130, False),
        "ProductAd-GTM-A": (1920, 1080, 1800, False),
        "ProductAd-15s": (1920, 1080, 450, False),
        "DataVizDashboard": (1080, 1920, 450, False),
        "ReviewsTestimonial": (1080, 1920, 600, True),
    }
    for composition_id, (width, height, frames, dynamic) in expected.items():
        item = by_id[composition_id]
        assert (item["width"], item["height"], item["durationInFrames"], item["dynamic"]) == (
            width,
            height,
            frames,
            dynamic,
        )
        assert item["fps"] == 30 and item["durationSeconds"] == frames / 30
        assert item["props_schema"]["type"] == "object"
    assert by_id["CaptionedClip"]["props_schema"]["required"] == ["captions"]
    assert "TwitterAd — 1920×1080 @ 30fps, 15s (450 frames)" in body["content"][0]["text"]


def test_every_composition_lays_out_its_sample_props_at_every_aspect() -> None:
    look = graphics.brand_look(None)
    for composition in COMPOSITIONS.values():
        for size in ((270, 480), (270, 270), (480, 270)):
            duration = composition.duration_in_frames(composition.sample) / 30
            built = scenes.build(composition, composition.sample, size, look, scenes.Assets(), duration)
            assert built[-1].end == pytest.approx(duration)
            first, later = render.frame_at(built, 0.5), render.frame_at(built, duration * 0.75)
            assert first.size == later.size == size
            # Typeset layers sit over the backdrop: the frame is not the bare backdrop.
            assert first.tobytes() != built[0].backdrop(0.5).tobytes(), composition.id


def test_frames_are_drawn_in_the_brand_palette() -> None:
    look = graphics.brand_look(
        {"visual": {"colorPalette": {"primary": "#0a7d32", "secondary": "#063d19", "accent": "#ffcc00"}}}
    )
    composition = COMPOSITIONS["StoryboardVideo-Square"]
    built = scenes.build(composition, json.loads(ONE_SECOND), (200, 200), look, scenes.Assets(), 1.0)
    # The gradient starts at the primary colour.
    red, green, blue = cast(tuple[int, int, int], render.frame_at(built, 0.5).getpixel((0, 0)))
    assert abs(red - 0x0A) < 12 and abs(green - 0x7D) < 12 and abs(blue - 0x32) < 12


async def test_a_demo_render_waits_and_answers_a_completed_h264_mp4_charged_once(
    tenant: Tenant, platform: Platform, client: httpx.AsyncClient
) -> None:
    before = await balance(platform, tenant)
    response = await demo_with_poller(
        tenant, platform, {"composition_id": "StoryboardVideo-Square", "props": ONE_SECOND}
    )
    body = response.json()
    assert response.status_code == 200 and not body["isError"], body
    done = body["structuredContent"]
    assert done["status"] == "completed" and done["output_format"] == "mp4"
    assert done["resolution"] == "1080×1080" and done["duration_seconds"] == 1.0
    assert done["r2_key"].startswith(f"projects/{tenant.project_id}/demo_render/") and done["r2_key"].endswith(".mp4")
    assert done["r2_key"].rsplit("/", 1)[-1] in body["content"][0]["text"]
    with av.open(io.BytesIO(await served(client, done["signed_url"])), mode="r") as container:
        stream = container.streams.video[0]
        assert stream.codec_context.name == "h264" and (stream.width, stream.height) == (1080, 1080)
        assert stream.average_rate == 30 and sum(1 for _ in container.decode(video=0)) == 30
    status = await tenant.data("check_status", {"job_id": done["job_id"]})
    assert status["job_type"] == "demo_render" and status["billing_status"] == "charged"
    assert status["credits_charged"] == 6  # 5 + 1 per started 5 s
    assert await balance(platform, tenant) == before - 6


async def test_a_gif_demo_is_540_wide_at_15_fps(tenant: Tenant, platform: Platform, client: httpx.AsyncClient) -> None:
    response = await demo_with_poller(
        tenant, platform, {"composition_id": "StoryboardVideo", "output_format": "gif", "props": ONE_SECOND}
    )
    done = response.json()["structuredContent"]
    assert done["status"] == "completed" and done["resolution"] == "540×960" and done["r2_key"].endswith(".gif")
    with Image.open(io.BytesIO(await served(client, done["signed_url"]))) as gif:
        assert gif.format == "GIF" and gif.size == (540, 960)
        durations = []
        for frame in ImageSequence.Iterator(gif):
            durations.append(frame.info["duration"])
    # 15 frames of 1/15 s (Pillow merges identical neighbours into one longer frame).
    assert sum(durations) == 1000 and len(durations) > 5


async def test_a_demo_render_slower_than_the_wait_answers_pending_then_completes(
    tenant: Tenant, platform: Platform
) -> None:
    platform.settings.video.wait_seconds = 0
    pending = await tenant.data("render_demo_video", {"composition_id": "StoryboardVideo-Square", "props": ONE_SECOND})
    assert pending["status"] == "pending" and pending["r2_key"] is None
    assert await jobs.run_jobs(worker(platform)) == 1
    status = await tenant.data("check_status", {"job_id": pending["job_id"]})
    assert status["status"] == "completed" and status["r2_key"].endswith(".mp4")


@pytest.mark.parametrize(
    ("arguments", "path"),
    [
        ({"composition_id": "Nope"}, "composition_id"),
        ({"composition_id": "TwitterAd", "props": "{not json"}, "props"),
        ({"composition_id": "TwitterAd", "props": "[1]"}, "props"),
        ({"composition_id": "TwitterAd", "props": json.dumps({"headline": 7})}, "props.headline"),
        (
            {"composition_id": "StoryboardVideo", "props": json.dumps({"frames": [{"frameNumber": 1}]})},
            "props.frames[0]",
        ),
        ({"composition_id": "ReviewsTestimonial", "props": json.dumps({"overallRating": 9})}, "props.overallRating"),
    ],
)
async def test_bad_demo_props_are_validation_errors_with_paths_and_cost_nothing(
    tenant: Tenant, platform: Platform, arguments: dict[str, Any], path: str
) -> None:
    before = await balance(platform, tenant)
    body = (await tenant.call("render_demo_video", arguments)).json()
    assert body["isError"] and body["error"]["error_type"] == "validation_error"
    assert path in [error["path"] for error in body["error"]["field_errors"]]
    assert await balance(platform, tenant) == before
    async with platform.session_factory() as session:
        assert (await session.scalars(select(Job))).first() is None


async def test_a_template_render_queues_its_own_props_at_the_aspect_and_renders_them(
    tenant: Tenant, platform: Platform, client: httpx.AsyncClient
) -> None:
    picture = await tenant.data("upload_media", {"file_data": png((200, 0, 0)), "content_type": "image/png"})
    props = {"frames": [{"frameNumber": 1, "duration": 1, "caption": ""}], "frame_media": {"1": picture["r2_key"]}}
    before = await balance(platform, tenant)
    queued = await tenant.data(
        "render_template_video",
        {"composition_id": "StoryboardVideo", "input_props": json.dumps(props), "aspect_ratio": "16:9"},
    )
    assert queued["job_id"] == queued["jobId"] and queued["credits_charged"] == 6
    assert queued["estimated_duration_seconds"] == 1.0 and queued["project_id"] == str(tenant.project_id)
    uuid.UUID(queued["content_history_id"])
    assert await balance(platform, tenant) == before - 6
    assert await jobs.run_jobs(worker(platform)) == 1
    status = await tenant.data("check_status", {"job_id": queued["job_id"]})
    assert status["job_type"] == "template_render" and status["status"] == "completed"
    with av.open(io.BytesIO(await served(client, status["result_url"])), mode="r") as container:
        frames = [frame.to_image() for frame in container.decode(video=0)]
    assert len(frames) == 30 and frames[0].size == (1920, 1080)
    red, green, _ = frames[15].getpixel((20, 540))  # the frame's media, darkened 40 %
    assert 100 < red < 140 and green < 25


async def test_another_tenants_media_key_in_props_is_not_found_and_refunded(
    tenant: Tenant, make_tenant: TenantFactory, platform: Platform
) -> None:
    other = await make_tenant()
    theirs = await other.data("upload_media", {"file_data": png((0, 0, 200)), "content_type": "image/png"})
    before = await balance(platform, tenant)
    props = {"headline": "Hi", "logo_media_key": theirs["r2_key"]}
    body = (
        await tenant.call("render_template_video", {"composition_id": "TwitterAd", "input_props": json.dumps(props)})
    ).json()
    assert body["isError"] and body["error"]["error_type"] == "not_found"
    assert await balance(platform, tenant) == before


async def test_a_media_key_of_the_wrong_type_is_a_validation_error_naming_its_path(tenant: Tenant) -> None:
    picture = await tenant.data("upload_media", {"file_data": png((1, 2, 3)), "content_type": "image/png"})
    props = {"captions": [{"text": "Hi", "start_sec": 0, "end_sec": 1}], "audio_media_key": picture["r2_key"]}
    body = (
        await tenant.call(
            "render_template_video", {"composition_id": "CaptionedClip", "input_props": json.dumps(props)}
        )
    ).json()
    assert body["error"]["error_type"] == "validation_error"
    assert body["error"]["field_errors"][0]["path"] == "input_props.audio_media_key"


async def test_a_failed_render_is_refunded_exactly_once(
    tenant: Tenant, platform: Platform, monkeypatch: pytest.MonkeyPatch
) -> None:
    def broken(*args: Any, **kwargs: Any) -> Any:
        raise RuntimeError("renderer broke")

    monkeypatch.setattr(render, "render", broken)
    before = await balance(platform, tenant)
    queued = await tenant.data(
        "render_template_video", {"composition_id": "StoryboardVideo", "input_props": ONE_SECOND}
    )
    await jobs.run_jobs(worker(platform))
    status = await tenant.data("check_status", {"job_id": queued["job_id"]})
    assert status["status"] == "failed" and status["billing_status"] == "refunded" and status["credits_refunded"] == 6
    async with platform.session_factory() as session, session.begin():
        job = await session.get(Job, uuid.UUID(queued["job_id"]))
        assert job is not None
        assert await jobs.refund(session, job) == 0
    assert await balance(platform, tenant) == before


async def test_cancelling_a_render_stops_it_between_frames_and_refunds_once(
    tenant: Tenant, platform: Platform, monkeypatch: pytest.MonkeyPatch
) -> None:
    reached = threading.Event()
    frames_checked = [0]
    checkpoint = jobs.JobRun.checkpoint

    def pausing_checkpoint(self: jobs.JobRun) -> None:
        # The render thread checks before each frame: hold frame 5 until the worker has seen the cancellation.
        if threading.current_thread() is not threading.main_thread():
            frames_checked[0] += 1
            if frames_checked[0] == 5:
                reached.set()
                self.stopped.wait(10)
        checkpoint(self)

    monkeypatch.setattr(jobs.JobRun, "checkpoint", pausing_checkpoint)
    before = await balance(platform, tenant)
    props = json.dumps({"frames": [{"frameNumber": 1, "duration": 10, "caption": "Long"}]})
    queued = await tenant.data(
        "render_template_video", {"composition_id": "StoryboardVideo-Square", "input_props": props}
    )
    context = worker(platform)
    claimed = await jobs.claim(context, "template_render", limit=1)
    assert len(claimed) == 1
    running = asyncio.create_task(jobs.run_claimed(context, claimed))
    assert await asyncio.to_thread(reached.wait, 10)
    cancelled = await tenant.data("cancel_async_job", {"job_id": queued["job_id"], "confirm": True})
    assert cancelled["refunded_credits"] == 7
    await asyncio.wait_for(running, 20)
    assert frames_checked[0] == 5  # stopped at frame 5 of 300
    status = await tenant.data("check_status", {"job_id": queued["job_id"]})
    assert status["status"] == "cancelled" and status["billing_status"] == "refunded" and status["r2_keys"] == []
    assert await balance(platform, tenant) == before


def wav_base64(seconds: float) -> str:
    buffer = io.BytesIO()
    with wave.open(buffer, "wb") as output:
        output.setnchannels(1)
        output.setsampwidth(2)
        output.setframerate(22_050)
        samples = int(22_050 * seconds)
        output.writeframes(
            b"".join(int(8000 * math.sin(i / 10)).to_bytes(2, "little", signed=True) for i in range(samples))
        )
    return base64.b64encode(buffer.getvalue()).decode()


def mp4_base64(color: tuple[int, int, int], frames: int) -> str:
    buffer = io.BytesIO()
    with av.open(buffer, mode="w", format="mp4") as container:
        stream = container.add_stream("libx264", rate=30)
        stream.width, stream.height, stream.pix_fmt = 160, 120, "yuv420p"
        for number in range(frames):
            frame = av.VideoFrame.from_image(Image.new("RGB", (160, 120), color))
            frame.pts = number
            container.mux(stream.encode(frame))
        container.mux(stream.encode())
    return base64.b64encode(buffer.getvalue()).decode()


async def test_a_voiceover_key_becomes_the_aac_track_and_a_video_key_loops_behind_the_frame(
    tenant: Tenant, platform: Platform, client: httpx.AsyncClient
) -> None:
    voice = await tenant.data("upload_media", {"file_data": wav_base64(2.0), "content_type": "audio/wav"})
    clip = await tenant.data("upload_media", {"file_data": mp4_base64((0, 0, 220), 10), "content_type": "video/mp4"})
    props = {
        "frames": [{"frameNumber": 1, "duration": 1, "caption": ""}],
        "frame_media": {"1": clip["r2_key"]},
        "voiceover_media_key": voice["r2_key"],
    }
    queued = await tenant.data(
        "render_template_video",
        {"composition_id": "StoryboardVideo", "input_props": json.dumps(props), "aspect_ratio": "1:1"},
    )
    assert await jobs.run_jobs(worker(platform)) == 1
    status = await tenant.data("check_status", {"job_id": queued["job_id"]})
    assert status["status"] == "completed", status
    with av.open(io.BytesIO(await served(client, status["result_url"])), mode="r") as container:
        assert container.streams.audio and container.streams.audio[0].codec_context.name == "aac"
        # The audio is cut at the video's end (1 s), not the voiceover's 2 s.
        assert container.duration is not None and container.duration / av.time_base < 1.2
        frames = [frame.to_image() for frame in container.decode(video=0)]
    red, green, blue = frames[20].getpixel((20, 540))  # the clip (looped after 10 frames), darkened 40 %
    assert blue > 100 and red < 30 and green < 30
