"""generate_video and generate_voiceover: checks at enqueue, and the `video` and `voiceover` job runners."""

from __future__ import annotations

import asyncio
import math
from typing import TYPE_CHECKING

from PIL import Image

from toolhost.domains.brand import service as brand_service
from toolhost.domains.content import service as content_service
from toolhost.domains.media import service as media_service
from toolhost.domains.video import motion, voice
from toolhost.platform.jobs import JobRun, JobType
from toolhost.platform.results import ValidationFailed
from toolhost.providers import graphics

if TYPE_CHECKING:
    from toolhost.config import Settings

BUILTIN = "builtin"
NARRATION_VOICE = "rachel"
# How often the encoder's progress is written while it runs in its thread.
PROGRESS_SECONDS = 1.0


def select_model(settings: Settings, requested: str | None, *, kind: str) -> str:
    """The video or voice model to use: builtin, directly or through an operator's alias."""
    if requested is None:
        return BUILTIN
    if settings.providers.model_aliases.get(requested, requested) != BUILTIN:
        raise ValidationFailed(
            f"{kind} model {requested!r} is not configured",
            recover_with=f"omit model to use builtin, or ask the operator to configure a {kind} provider",
            available_models=[BUILTIN],
            field_errors=[{"path": "model", "message": f"not a configured {kind} model"}],
        )
    return BUILTIN


def video_seconds(duration: float) -> int:
    """The billed seconds of a video: ceil(duration)."""
    return math.ceil(duration)


def estimated_video_seconds(duration: float) -> int:
    """A rough render time of the builtin model on a small server (about one second per output second)."""
    return 10 + video_seconds(duration)


async def _image(run: JobRun, reference: dict[str, str] | None) -> Image.Image | None:
    if not reference:
        return None
    data = await media_service.read_reference(run.settings, reference)
    return await asyncio.to_thread(graphics.open_reference, data)


async def run_video(job: JobRun) -> media_service.JobOutput:
    """Renders a `video` job with the builtin model: moving brand graphic with timed captions, MP4."""
    prompt = str(job.job_input["prompt"])
    duration = float(job.job_input["duration"])
    async with job.session_factory() as session:
        runtime = await brand_service.get_runtime(session=session, project_id=job.project_id)
    start = await _image(job, job.job_input.get("reference"))
    end = await _image(job, job.job_input.get("end_reference"))
    await job.report(5)
    narration = None
    if job.job_input.get("enable_audio"):
        text = motion.narration_text(prompt, duration)
        # Speak faster (never slower) so the narration fits the video when espeak-ng's top rate allows.
        words_per_minute = len(text.split()) * 60 / duration
        speed = max(1.0, words_per_minute / voice.BASE_WORDS_PER_MINUTE)
        narration = await voice.synthesize(job.settings, text, voice=NARRATION_VOICE, speed=speed)
    await job.report(10)
    look = graphics.brand_look(runtime)
    fraction = [0.0]
    render = asyncio.create_task(
        asyncio.to_thread(
            motion.render,
            prompt,
            aspect_ratio=str(job.job_input["aspect_ratio"]),
            duration=duration,
            look=look,
            start_frame=start,
            end_frame=end,
            narration=narration,
            checkpoint=job.checkpoint,
            progress=lambda value: fraction.__setitem__(0, value),
        )
    )
    try:
        while not render.done():
            await asyncio.wait({render}, timeout=PROGRESS_SECONDS)
            if not render.done():
                await job.report(10 + round(fraction[0] * 85))
    except BaseException:
        # Stop the encoder thread at its next frame and wait for it, so nothing outlives the job.
        job.stopped.set()
        await asyncio.gather(render, return_exceptions=True)
        raise
    data, details = render.result()
    return media_service.JobOutput(
        data=data,
        content_type="video/mp4",
        model=BUILTIN,
        details={**details, "aspect_ratio": job.job_input["aspect_ratio"]},
        also_record=content_service.generated_content("video"),
    )


async def run_voiceover(job: JobRun) -> media_service.JobOutput:
    """Speaks a `voiceover` job with espeak-ng: WAV at the voice and speed asked."""
    await job.report(10)
    audio = await voice.synthesize(
        job.settings,
        str(job.job_input["text"]),
        voice=str(job.job_input["voice"]),
        speed=float(job.job_input["speed"]),
    )
    job.checkpoint()
    return media_service.JobOutput(
        data=audio,
        content_type="audio/wav",
        model=BUILTIN,
        details={
            "duration_seconds": round(voice.duration_seconds(audio), 3),
            "voice": job.job_input["voice"],
            "speed": job.job_input["speed"],
        },
        also_record=content_service.generated_content("voiceover"),
    )


JOB_TYPES = (
    JobType(name="video", run=media_service.media_runner(run_video)),
    JobType(name="voiceover", run=media_service.media_runner(run_voiceover)),
)
