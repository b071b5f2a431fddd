"""The runners of the `demo_render` and `template_render` jobs (media runners on the platform's job machine).

A runner reads the brand runtime and the props' media, then renders in a thread while the event loop
writes progress; the renderer checks for cancellation before every frame.
"""

from __future__ import annotations

import asyncio
from collections.abc import Callable
from typing import Any

from PIL import Image

from toolhost.domains.brand import service as brand_service
from toolhost.domains.media import service as media_service
from toolhost.domains.video import render, scenes, service
from toolhost.domains.video.compositions import COMPOSITIONS, FPS
from toolhost.platform.jobs import JobRun, JobType
from toolhost.providers import graphics

PROGRESS_SECONDS = 1.0
# A background clip loops after this many frames (bounds the decoded frames held in memory).
MAX_BACKGROUND_FRAMES = 10 * FPS


async def _assets(run: JobRun, props: dict[str, Any], size: tuple[int, int]) -> scenes.Assets:
    """The props' media read from the store: images decoded, a background video's frames, the audio bytes."""
    media_types: dict[str, str] = run.job_input.get("media_types") or {}
    store = media_service.store(run.settings)
    pictures: dict[str, Image.Image] = {}
    clips: dict[str, list[Image.Image]] = {}
    audio = None
    for _, key, _ in service.media_references(props, path="props"):
        content_type = media_types.get(key, "")
        data = await store.read(key)
        if content_type.startswith("image/"):
            pictures[key] = await asyncio.to_thread(graphics.open_reference, data)
        elif content_type.startswith("video/"):
            clips[key] = await asyncio.to_thread(
                render.decode_video_frames, data, max_frames=MAX_BACKGROUND_FRAMES, size=size
            )
        elif content_type.startswith("audio/"):
            audio = data
        run.checkpoint()
    return scenes.Assets(images=pictures, videos=clips, audio=audio)


async def in_thread_with_progress(run: JobRun, work: Callable[[Callable[[float], None]], Any], *, start: int) -> Any:
    """Runs `work(progress)` in a thread, writing its progress (start…95 %) every second; stops it on failure."""
    fraction = [0.0]
    task = asyncio.create_task(asyncio.to_thread(work, lambda value: fraction.__setitem__(0, value)))
    try:
        while not task.done():
            await asyncio.wait({task}, timeout=PROGRESS_SECONDS)
            if not task.done():
                await run.report(start + round(fraction[0] * (95 - start)))
    except BaseException:
        # Stop the thread at its next frame and wait for it, so nothing outlives the job.
        run.stopped.set()
        await asyncio.gather(task, return_exceptions=True)
        raise
    return task.result()


async def run_render(run: JobRun) -> media_service.JobOutput:
    """Renders a demo_render or template_render job: the composition frame by frame, MP4 or GIF."""
    composition = COMPOSITIONS[str(run.job_input["composition_id"])]
    props = dict(run.job_input["props"])
    size = (int(run.job_input["width"]), int(run.job_input["height"]))
    output_format = str(run.job_input.get("output_format") or "mp4")
    async with run.session_factory() as session:
        runtime = await brand_service.get_runtime(session=session, project_id=run.project_id)
    assets = await _assets(run, props, size)
    await run.report(5)
    look = graphics.brand_look(runtime)
    data, details = await in_thread_with_progress(
        run,
        lambda progress: render.render(
            composition,
            props,
            size=size,
            look=look,
            assets=assets,
            output_format=output_format,
            checkpoint=run.checkpoint,
            progress=progress,
        ),
        start=5,
    )
    return media_service.JobOutput(
        data=data,
        content_type="image/gif" if output_format == "gif" else "video/mp4",
        model="builtin",
        details={**details, "composition_id": composition.id, "output_format": output_format},
    )


JOB_TYPES = (
    JobType(name="demo_render", run=media_service.media_runner(run_render)),
    JobType(name="template_render", run=media_service.media_runner(run_render)),
)
