"""Jobs whose output is a media file (images, slides, videos, voiceovers, renders), on the platform's job machine.

A media runner renders a file; its row commits (awaiting the job's completion) and the file goes to the store,
with no transaction open; the transaction that completes the job makes it usable and records whatever the job's
own domain keeps beside it. A job cancelled meanwhile records nothing, and its row and file are deleted again.
"""

from __future__ import annotations

import logging
from collections.abc import Awaitable, Callable
from dataclasses import dataclass, field
from typing import Any

from sqlalchemy.ext.asyncio import AsyncSession

from toolhost.domains.media.storage import complete_job_output, discard_job_output, put_job_output
from toolhost.platform.jobs import JobResult, JobRun, Runner

logger = logging.getLogger(__name__)

# A row of the job's own domain written beside the stored file (a generation's content record), given the job,
# what it produced and the file's key, in the transaction that completes the job.
OutputRecorder = Callable[[AsyncSession, JobRun, "JobOutput", str], None]


@dataclass(frozen=True, slots=True)
class JobOutput:
    """What a media renderer produced: one file for the media store, and what check_status reports about it."""

    data: bytes
    content_type: str
    model: str
    details: dict[str, Any] = field(default_factory=dict)
    also_record: OutputRecorder | None = None


def media_runner(render: Callable[[JobRun], Awaitable[JobOutput]]) -> Runner:
    """A job runner around a media renderer: the output's row commits, its file goes to the store, and the
    completion makes it usable."""

    async def run(job: JobRun) -> JobResult:
        output = await render(job)
        job.checkpoint()
        stored = await put_job_output(
            session_factory=job.session_factory,
            settings=job.settings,
            job_id=job.job_id,
            account_id=job.account_id,
            project_id=job.project_id,
            data=output.data,
            content_type=output.content_type,
            kind=job.job_type,
        )

        async def record_output(session: AsyncSession) -> None:
            await complete_job_output(session=session, key=stored.key)
            if output.also_record is not None:
                output.also_record(session, job, output, stored.key)

        async def discard() -> None:
            try:
                await discard_job_output(session_factory=job.session_factory, settings=job.settings, key=stored.key)
            except Exception:
                # What is left awaits a completion that never comes; the retention sweep removes it.
                logger.exception("could not delete the discarded output %s of job %s", stored.key, job.job_id)

        return JobResult(
            output={"primary": stored.key, "keys": [stored.key], "model": output.model, **output.details},
            record=record_output,
            discard=discard,
        )

    return run
